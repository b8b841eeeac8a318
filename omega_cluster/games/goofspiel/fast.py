"""Goofspiel's fast path: the packed state and its numba kernels for the compiled SM-MCTS.

:func:`fast_smm_search` (the plugin hook ``fast_smm_search``) hands the compiled simultaneous-move
search of :mod:`omega_cluster.search.fast.smm` a :class:`GoofspielFast`: a position as one int64
vector, the rules over it (who acts, each bidder's legal cards, the joint bid, the point card
turned by chance), the returns, a 64-bit hash of a player's information set, the determinization
of ``imp_info`` (the opponent's past bids redrawn), a uniform random playout and the network
encoder, bit for bit equal to :class:`~omega_cluster.games.goofspiel.encoder.GoofspielEncoder`.

The packed state holds the fields of :class:`~omega_cluster.games.goofspiel.state.GoofspielState`
as arrays instead of codes (every turn's point card, winner and bids), so nothing overflows for any
card count the masks hold (up to 62 cards). Random numbers are splitmix64 (:mod:`.._splitmix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster._optional import numba_available
from omega_cluster.games.api import CHANCE, Game
from omega_cluster.games.fast import CHANCE_NODE, OVER

__all__ = ["BIDDING", "CHANCE_NODE", "OVER", "GoofspielFast", "fast_smm_search"]

# packed state: fixed head, then per-game blocks at the offsets ctx names
STATUS, TURN, POINT, REMAINING, TURNED = range(5)
HEAD = 5
BIDDING = 0  # STATUS: every seat bids (else CHANCE_NODE: a point card is turned, or OVER: the end)
# ctx (int64 vector): parameters and block offsets
C_N, C_NC, C_T, C_ORDER, C_RET, C_IMP, C_HANDS, C_POINTS, C_PCARDS, C_WINS, C_BIDS, C_SIZE = range(
    12
)
MAX_CARDS = 62  # hands are bit masks in an int64


@dataclass(frozen=True)
class GoofspielFast:
    """What the compiled SM-MCTS needs of one Goofspiel game (kernels take ``ctx`` first)."""

    name: str
    num_players: int
    num_actions: int
    state_size: int
    max_depth: int  # most tree levels below the root (a chance and a bidding node a turn)
    hidden: bool  # imp_info: every simulation searches a sampled world, keyed by information sets
    min_return: float
    max_return: float
    ctx: np.ndarray
    pack: Any  # Python: a GoofspielState -> its packed vector
    status: Any  # status(ctx, S) -> int: BIDDING (every seat acts), CHANCE_NODE or OVER
    legal: Any  # legal(ctx, S, player, out) -> n: the player's cards, ascending (legal_actions)
    apply_joint: Any  # apply_joint(ctx, S, bids) -> None: one bid per seat, no checks
    apply_chance: Any  # apply_chance(ctx, S, rs) -> int: turns a uniformly drawn point card
    returns: Any  # returns(ctx, S, out) -> None
    info_key: Any  # info_key(ctx, S, player) -> int64 (equal information sets: equal keys)
    sample_world: Any  # sample_world(ctx, S, player, rs, out) -> None
    rollout: Any  # rollout(ctx, S, rs, out) -> bool: uniform random bids to the end, returns
    obs_size: int
    feat_size: int
    encode: Any  # encode(ctx, S, player, legal, n, obs, feats) -> None (GoofspielEncoder)


def fast_smm_search(game: Game, encoder: Any = None) -> tuple[GoofspielFast | None, str | None]:
    """``(GoofspielFast, None)`` for ``game``, or ``(None, why not)``. ``encoder`` (a
    ``GoofspielEncoder`` of this game) is checked to be the one the compiled encoder copies."""
    from omega_cluster.games.goofspiel.game import GoofspielGame

    if not numba_available():
        return None, "goofspiel fast path: needs numba (pip install 'omega-cluster[fast]')"
    if not isinstance(game, GoofspielGame):
        return None, f"goofspiel fast path: not a Goofspiel game ({type(game).__name__})"
    if game.num_cards > MAX_CARDS:
        return None, f"goofspiel fast path: at most {MAX_CARDS} cards, got {game.num_cards}"
    if game.imp_info and game.num_players != 2:
        return None, (
            "goofspiel fast path: imp_info is compiled for two players (the bid redraw); "
            f"this game has {game.num_players}"
        )
    if encoder is not None:
        why = _encoder_mismatch(game, encoder)
        if why:
            return None, why
    return _build(game), None


def _encoder_mismatch(game: Any, encoder: Any) -> str:
    n, nc = game.num_players, game.num_cards
    want = (0, nc, 2 * nc, 2 * nc + n * nc, 2 * nc + n * nc + n)
    fields = ("_o_point", "_o_remaining", "_o_hands", "_o_points", "_o_turns")
    have = tuple(getattr(encoder, f, None) for f in fields)
    if getattr(encoder, "name", None) != "goofspiel" or have != want:
        return f"goofspiel fast path: the compiled encoder copies GoofspielEncoder, not {encoder!r}"
    return ""


def make_ctx(game: Any) -> np.ndarray:
    n, nc, t = game.num_players, game.num_cards, game.num_turns
    hands = HEAD
    points = hands + n
    pcards = points + n
    wins = pcards + t
    bids = wins + t
    size = bids + t * n
    values = (n, nc, t, game.order, game.returns_kind, int(game.imp_info), hands, points, pcards)
    return np.array([*values, wins, bids, size], np.int64)


def _build(game: Any) -> GoofspielFast:
    from omega_cluster.games.goofspiel import _fast_kernels as K

    ctx = make_ctx(game)
    n, nc = game.num_players, game.num_cards
    spec = game.spec

    def pack(state: Any) -> np.ndarray:
        """The packed vector of ``state`` (a GoofspielState of this game)."""
        S = np.zeros(int(ctx[C_SIZE]), np.int64)
        acting = state.current_players
        S[STATUS] = OVER if not acting else (CHANCE_NODE if acting[0] == CHANCE else BIDDING)
        S[TURN], S[POINT], S[REMAINING] = state._turn, state._point, state._remaining
        cards, wins = state._public()
        S[TURNED] = len(cards)
        h, pts, pc, wi, bi = (int(ctx[i]) for i in (C_HANDS, C_POINTS, C_PCARDS, C_WINS, C_BIDS))
        S[h : h + n] = state._hands
        S[pts : pts + n] = state._points
        S[pc : pc + len(cards)] = cards
        S[wi : wi + len(wins)] = wins
        for p in range(n):
            own = state.own_bids(p)
            S[bi + p : bi + p + n * len(own) : n] = own
        return S

    return GoofspielFast(
        name=game.name,
        num_players=n,
        num_actions=nc,
        state_size=int(ctx[C_SIZE]),
        max_depth=2 * game.num_turns + 2,
        hidden=bool(game.imp_info),
        min_return=float(spec.min_return),
        max_return=float(spec.max_return),
        ctx=ctx,
        pack=pack,
        status=K.status,
        legal=K.legal,
        apply_joint=K.apply_joint,
        apply_chance=K.apply_chance,
        returns=K.returns,
        info_key=K.info_key,
        sample_world=K.sample_world,
        rollout=K.random_rollout,
        obs_size=2 * nc + n * nc + n + game.num_turns * (n + 2),
        feat_size=nc + 1,
        encode=K.encode,
    )
