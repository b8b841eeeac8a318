"""Where things live in a packed Mexican Train state vector (int64).

The first ``S_TOTAL`` entries are the layout of the compiled rules
(:mod:`omega_cluster.games.mexican_train.officers._rules_jit`: acting seat, markers, board,
open doubles, train ends, hands as two 62-bit words, boneyard, pip totals, outs, engine tile).
The fast search needs a little more, appended after them and kept up to date by the fast
``apply`` kernel:

* ``X_HASH`` — the rolling hash of the public record (``MexicanTrainState.log_hash``, an unsigned
  64-bit value stored as its two's-complement int64);
* ``X_ROUND`` — the round index; ``X_ENGINE`` — the round's engine value (pips);
* ``X_OVER`` — 1 once the searched horizon (the round) has ended; ``X_WENT_OUT`` — the seat that
  went out, -1 if none (blocked round) or not over;
* ``X_LENGTHS`` — tiles on each train (``NUM_SLOTS`` entries, ``MexicanTrainState.lengths``);
* ``X_HN`` and ``X_HIST`` — the last ``MAX_LOG`` ``(actor, action)`` pairs of the current round,
  most recent first (what ``views.recent_actions`` returns), ``X_HN`` of them valid;
* ``X_DEAL`` — 1 when a search root carries the public deductions (``deduce=true``): then
  ``X_GROUPS_N`` groups follow at ``X_GROUPS``, four words each — seat, tiles, and the two words
  of the mask those tiles avoid — in the order ``sampling.deal_groups`` deals them (written
  by :func:`~.state.constrain`, read by the compiled ``sample_world`` only; 0: the uniform deal).
  Each seat's groups but one deal at least one tile of its hand, so ``MAX_GROUPS`` (the most
  tiles two words hold, plus one group per seat) always suffices.
"""

from __future__ import annotations

from omega_cluster.games.mexican_train.officers._rules_jit import S_TOTAL, WORD
from omega_cluster.games.mexican_train.tiles import NUM_SLOTS

MAX_LOG = 64  # the encoder's log_length is at most 64

X_HASH = S_TOTAL
X_ROUND = S_TOTAL + 1
X_ENGINE = S_TOTAL + 2
X_OVER = S_TOTAL + 3
X_WENT_OUT = S_TOTAL + 4
X_LENGTHS = S_TOTAL + 5
X_HN = X_LENGTHS + NUM_SLOTS
X_HIST = X_HN + 1
X_DEAL = X_HIST + 2 * MAX_LOG
X_GROUPS_N = X_DEAL + 1
X_GROUPS = X_GROUPS_N + 1
MAX_GROUPS = 2 * WORD + NUM_SLOTS
GROUP_WORDS = 4
STATE_SIZE = X_GROUPS + GROUP_WORDS * MAX_GROUPS
