"""Mexican Train as one plugin: the rules, the encoder, the officers (rule-based players) and
``omega``, the released network (:mod:`.release`), the public deductions every determinization
honours, and the counts the reports show."""

from omega_cluster.games.mexican_train.game import MexicanTrainGame
from omega_cluster.games.plugin import GamePlugin

__all__ = ["PLUGIN"]

_OFFICERS = "omega_cluster.games.mexican_train.officers"

PLUGIN = GamePlugin(
    name="mexican_train",
    game=MexicanTrainGame,
    encoder="omega_cluster.games.mexican_train.encoder:MexicanTrainEncoder",
    encoder_options=("max_players", "log_length", "heuristic_features"),
    players={
        "heuristic": f"{_OFFICERS}:Commander",
        "lieutenant": f"{_OFFICERS}:Lieutenant",
        "commander": f"{_OFFICERS}:Commander",
        # the released network alone, from the repository's models/mexican_train (release.py)
        "omega": "omega_cluster.games.mexican_train.release:omega",
    },
    world_constraints="omega_cluster.games.mexican_train.inference:world_constraints",
    belief_worlds="omega_cluster.games.mexican_train.belief_worlds:belief_worlds",
    report_counts="omega_cluster.games.mexican_train.counts:report_counts",
    fast_search="omega_cluster.games.mexican_train.fast.game:fast_game",
    ntuple_patterns="omega_cluster.games.mexican_train.ntuple:MexicanTrainPatterns",
    hand_value="omega_cluster.games.mexican_train.evaluation:HandValue",
    # the advisor's named terms per move: the Commander's explain() (term -> weight x feature)
    advisor_terms=f"{_OFFICERS}:Commander",
    # what one seat sees at the play/serve tables
    seat_view="omega_cluster.games.mexican_train.seat_view:seat_view",
    tune_targets="omega_cluster.games.mexican_train.tuning:tune_targets",
    # the officers' ladder (Ensign plays at random): the champion's anchored rating
    anchors={"ensign": 1000.0, "lieutenant": 1200.0, "commander": 1400.0},
)
