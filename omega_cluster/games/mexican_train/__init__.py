"""Mexican Train dominoes: rules, determinizations and a fast random playout.

``make_game("mexican_train", players=4)`` builds a :class:`MexicanTrainGame`; its states are
:class:`MexicanTrainState`. Tables and action ids: :mod:`.tiles`; parameters, the returns scheme
(win shares) and :func:`fair_share`: :mod:`.game`; rules: :mod:`.state`; records that cross
boundaries (:class:`RoundResult`, :class:`MexicanTrainObservation`, :class:`DealConstraints`):
:mod:`.records`.

The rest of what the service knows about the game lives here too, on the read-only state API, and
reaches the service through the plugin (:mod:`.plugin`): the rule-based players (:mod:`.officers`:
Lieutenant, Commander and its compiled playouts), the public deductions every determinization
honours (:mod:`.inference`) and the belief built on them (:mod:`.belief`), the network's encoder
(:mod:`.encoder`) and the counts the reports show (:mod:`.counts`). This ``__init__`` imports
none of them, so the rules stay cheap to import.
"""

from omega_cluster.games.mexican_train.game import (
    DEFAULT_HAND_SIZES,
    OBJECTIVES,
    MexicanTrainGame,
    fair_share,
)
from omega_cluster.games.mexican_train.records import (
    DealConstraints,
    MexicanTrainObservation,
    RoundResult,
    TrainView,
)
from omega_cluster.games.mexican_train.state import MexicanTrainState
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS, TileSet, tile_set

__all__ = [
    "DEFAULT_HAND_SIZES",
    "MEXICAN_SLOT",
    "NUM_SLOTS",
    "OBJECTIVES",
    "DealConstraints",
    "MexicanTrainGame",
    "MexicanTrainObservation",
    "MexicanTrainState",
    "RoundResult",
    "TileSet",
    "TrainView",
    "fair_share",
    "tile_set",
]
