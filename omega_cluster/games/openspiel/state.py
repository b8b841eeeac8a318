"""One ``pyspiel.State`` behind the :class:`~omega_cluster.games.api.State` contract:
:class:`OpenSpielState` (who acts, legal actions, information sets, tensors and the checked
``sample_world`` of :mod:`.sampling`), and :class:`CardGameState`, a state of hearts or oh_hell
with compiled random playouts when numba is installed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import numpy as np

from omega_cluster.games.api import (
    CHANCE,
    GameError,
    HistoryEntry,
    RngLike,
    SamplingNotSupportedError,
    State,
    as_rng,
)
from omega_cluster.games.openspiel import knowledge, sampling
from omega_cluster.games.openspiel.loading import not_implemented

if TYPE_CHECKING:
    from omega_cluster.games.openspiel.game import OpenSpielGame

__all__ = ["CardGameState", "OpenSpielState"]

_T = TypeVar("_T")

# pyspiel player ids (open_spiel/spiel_utils.h); literals so this module imports without pyspiel.
_SIMULTANEOUS: Final = -2
_TERMINAL: Final = -4


class OpenSpielState(State):
    """One ``pyspiel.State`` behind the :class:`State` contract; ``history`` mirrors what was applied
    (an int per move or chance outcome, a tuple per simultaneous joint action)."""

    __slots__ = ("_key", "_memos", "_state")

    game: OpenSpielGame

    def __init__(self, game: OpenSpielGame, state: Any, history: list[HistoryEntry]) -> None:
        self.game = game
        self.history = history
        self._state = state
        self._memos: tuple[int, dict[tuple[str, int], Any]] | None = None
        # (history length, player, key): a key already known (a world's, checked by it)
        self._key: tuple[int, int, str] | None = None

    @property
    def pyspiel_state(self) -> Any:
        """The wrapped ``pyspiel.State`` (mutating it directly desynchronizes ``history``)."""
        return self._state

    # -- who acts, what they may do -------------------------------------------------------------
    @property
    def current_players(self) -> tuple[int, ...]:
        player = self._state.current_player()
        if player >= 0:
            return (player,)
        if player == CHANCE:
            return (CHANCE,)
        if player == _SIMULTANEOUS:
            return self.game._all_players
        if player == _TERMINAL:
            return ()
        raise GameError(f"{self.game.spec.name}: unexpected pyspiel player id {player}")

    def legal_actions(self, player: int | None = None) -> list[int]:
        state = self._state
        if player is None:
            player = state.current_player()
            if player == _SIMULTANEOUS and self.game._solo_simultaneous:
                player = 0
            elif player == _SIMULTANEOUS:
                raise GameError(
                    f"{self.game.spec.name}: players {self.game._all_players} move "
                    "simultaneously; call legal_actions(player)"
                )
        if player == CHANCE:
            if not state.is_chance_node():
                return []
            return sorted(action for action, _ in chance_outcomes_of(state))
        if player < 0:
            return []
        return state.legal_actions(player)  # a fresh list, ascending (a pyspiel guarantee)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """pyspiel's chance outcomes that can happen (see :func:`chance_outcomes_of`)."""
        if not self._state.is_chance_node():
            raise GameError(f"{self.game.spec.name}: not a chance node")
        return chance_outcomes_of(self._state)

    def is_legal(self, player: int, action: int) -> bool:
        if player == CHANCE:
            return action in self.legal_actions(CHANCE)
        return player >= 0 and action in self._state.legal_actions(player)

    # -- moving ---------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        if self.game._solo_simultaneous and self._state.is_simultaneous_node():
            self._state.apply_actions([action])
        else:
            self._state.apply_action(action)
        self.history.append(action)

    def _apply_joint_action(self, actions: tuple[int, ...]) -> None:
        self._state.apply_actions(list(actions))
        self.history.append(actions)

    # -- outcome --------------------------------------------------------------------------------
    def returns(self) -> tuple[float, ...]:
        return tuple(self._state.returns())

    # -- information ----------------------------------------------------------------------------
    def _check_player(self, player: int) -> None:
        if not 0 <= player < self.game.spec.num_players:
            raise GameError(
                f"{self.game.spec.name}: player {player} is not a seat; "
                f"players are 0..{self.game.spec.num_players - 1}"
            )

    def information_set_key(self, player: int) -> str:
        """pyspiel's information-state string (else observation string, else state string)."""
        known = self._key
        if known is not None and known[1] == player and known[0] == len(self.history):
            return known[2]
        self._check_player(player)
        kind = self.game._info_kind
        if kind == "information_state":
            return str(self._state.information_state_string(player))
        if kind == "observation":
            return str(self._state.observation_string(player))
        return str(self._state)  # perfect information: the whole state is known to everyone

    def observation(self, player: int) -> Hashable:
        """The same string as :meth:`information_set_key` (pyspiel's infostates have perfect
        recall, so it is everything ``player`` may know); tensors: :meth:`observation_tensor`."""
        return self.information_set_key(player)

    def observation_tensor(self, player: int) -> np.ndarray:
        """float32 vector for encoders: pyspiel's information-state tensor, else its observation
        tensor (raises :class:`GameError` when the game provides neither)."""
        self._check_player(player)
        game_type = self._state.get_game().get_type()
        if game_type.provides_information_state_tensor:
            return np.asarray(self._state.information_state_tensor(player), dtype=np.float32)
        if game_type.provides_observation_tensor:
            return np.asarray(self._state.observation_tensor(player), dtype=np.float32)
        raise GameError(f"{self.game.spec.name}: pyspiel provides no tensor for this game")

    def hidden_state(self, player: int) -> np.ndarray | None:
        """For training only: the other players' tensors (:meth:`observation_tensor`), seat
        ``player + 1`` first, concatenated — what they know that ``player`` may not. ``None``
        for a perfect-information or one-player game, or one without pyspiel tensors."""
        self._check_player(player)
        n = self.game.spec.num_players
        game_type = self._state.get_game().get_type()
        tensors = (
            game_type.provides_information_state_tensor or game_type.provides_observation_tensor
        )
        if n < 2 or not self.game.spec.hidden_information or not tensors:
            return None
        others = [self.observation_tensor((player + k) % n) for k in range(1, n)]
        return np.concatenate(others)

    def sample_world(self, player: int, rng: RngLike, constraints: Any = None) -> OpenSpielState:
        """A state drawn from ``player``'s information set (perfect-information games: a clone).

        Never the true state in place of a world: hearts and oh_hell deal the unseen cards
        exactly under everything the history proves and check the world once; other games'
        candidates (a re-deal, pyspiel's ``resample_from_infostate``) are checked by replaying
        their history against everything ``player`` saw, rejected when they contradict it and,
        when they keep contradicting, repaired by swapping chance outcomes; see
        :mod:`omega_cluster.games.openspiel.sampling` for the method and its bounds. Deterministic given ``rng``, which alone (with what ``player``
        knows) decides the world. ``constraints`` are not supported. Raises
        :class:`SamplingNotSupportedError` naming the game when pyspiel lacks a resampler (e.g.
        liars_dice) or when no consistent world is found within the bounds.
        """
        self._check_player(player)
        if constraints is not None:
            raise SamplingNotSupportedError(
                f"{self.game.spec.name}: sample_world constraints are not supported by pyspiel"
            )
        if not self.game.spec.hidden_information:
            return self.clone()
        if not self.game.supports_sampling():
            raise self._not_supported()
        return sampling.sample(self, player, as_rng(rng))

    def _not_supported(self) -> SamplingNotSupportedError:
        return SamplingNotSupportedError(
            f"{self.game.spec.name}: sample_world cannot draw a world from an information set: "
            f"pyspiel's {self.game.params['name']} cannot be used, "
            f"{self.game._resample_problem or 'it does not implement resample_from_infostate'}; "
            "use it with search that needs no determinization, or pick another game"
        )

    def _memo(self, key: tuple[str, int], build: Callable[[], _T]) -> _T:
        """``build()``, kept while no move is made: a search draws thousands of worlds from one
        root, and what the player knows there is worked out once."""
        length = len(self.history)
        if self._memos is None or self._memos[0] != length:
            self._memos = (length, {})
        memos = self._memos[1]
        if key not in memos:
            memos[key] = build()
        return memos[key]

    def _knowledge(self, player: int) -> knowledge.Knowledge:
        """What ``player`` knows here (:func:`knowledge.knowledge`), kept while no move is made."""
        return self._memo(("knowledge", player), lambda: knowledge.knowledge(self, player))

    def _propose(self, player: int, sampler: Callable[[], float]) -> Any:
        """One pyspiel world, unchecked: resampled here at a decision node, else (and when that
        fails) at the last decision node with the true entries since then re-applied, which
        pyspiel's resamplers handle better at chance nodes (kuhn, leduc). None if pyspiel fails."""
        if not self._state.is_chance_node() and not self._state.is_terminal():
            try:
                return self._state.resample_from_infostate(player, sampler)
            except Exception as err:  # pyspiel bugs off the beaten path: the prefix route
                if not_implemented(err):
                    raise self._not_supported() from err
        known = self._knowledge(player)
        if known.prefix is None or known.cut == len(self.history):
            return None
        try:
            world = known.prefix.resample_from_infostate(player, sampler)
        except Exception:
            return None
        if not _apply_entries(world, self.history[known.cut :], check=True):
            return None
        return world

    def _wrap(self, world: Any) -> OpenSpielState | None:
        """Wrap a resampled pyspiel state, its flat history grouped like ``self.history`` (pyspiel
        flattens a joint action into one entry per player); None if the history's length does
        not fit. Whether it is legal and consistent is :func:`knowledge.replay_check`'s job.

        The pyspiel state itself is kept, not a replay of its history: gin_rummy's resampler
        swaps hidden cards without rewriting the history.
        """
        flat = world.history()
        if len(flat) != sum(len(e) if isinstance(e, tuple) else 1 for e in self.history):
            return None
        history: list[HistoryEntry] = []
        at = 0
        for entry in self.history:
            if isinstance(entry, tuple):
                history.append(tuple(flat[at : at + len(entry)]))
                at += len(entry)
            else:
                history.append(flat[at])
                at += 1
        return type(self)(self.game, world, history)

    # -- plumbing -------------------------------------------------------------------------------
    def clone(self) -> OpenSpielState:
        return type(self)(self.game, self._state.clone(), self.history.copy())

    def render(self) -> str:
        return str(self._state)

    def describe_action(self, action: int, player: int | None = None) -> str:
        """pyspiel's ``action_to_string`` in this position for a legal action (default player: the
        single acting one); other ids get the game-level name (pyspiel may crash on them)."""
        if player is None:
            acting = self.current_players
            player = acting[0] if len(acting) == 1 else 0
        if not self.is_legal(player, action):
            return self.game.describe_action(action, player=player)
        return str(self._state.action_to_string(player, action))

    def __reduce__(self) -> tuple[Callable[..., OpenSpielState], tuple[Any, ...]]:
        return _rebuild_state, (self.game, list(self.history))


class CardGameState(OpenSpielState):
    """A state of a card game of :mod:`.card_games` when numba is installed: the same state, and
    compiled random playouts (what a random-rollout search spends most of its time on)."""

    __slots__ = ()

    def random_playout_returns(self, rng: random.Random) -> tuple[float, ...]:
        """The returns of one playout of uniformly random legal moves and chance outcomes from
        here (a random player's playout through pyspiel, in distribution; random numbers from
        ``rng``), this state left as it is: played compiled (:func:`._card_kernels.playout`,
        pyspiel's rules, checked equal to them)."""
        kernel, rules, moves, returns = self.game._playout
        kernel(rules, np.array(self.history, np.int64), rng.getrandbits(63), moves, returns)
        return tuple(returns.tolist())


def _rebuild_state(game: OpenSpielGame, history: Sequence[HistoryEntry]) -> OpenSpielState:
    state = game.new_initial_state()
    for entry in history:
        if isinstance(entry, tuple):
            state.apply_joint_action_unchecked(entry)
        else:
            state.apply_action_unchecked(entry)
    return state


def chance_outcomes_of(state: Any) -> list[tuple[int, float]]:
    """The chance outcomes of a pyspiel chance node that can happen: probability above 0 and
    legal there, the probabilities renormalized when some were dropped.

    pyspiel may list outcomes its parameters forbid: hearts with ``pass_cards=false`` lists the
    four pass directions at 1/4 each while only "no pass" is legal. Such an outcome is not an
    outcome: the adapter never offers it.
    """
    listed = state.chance_outcomes()
    legal = set(state.legal_actions())
    kept = [(int(a), float(p)) for a, p in listed if p > 0 and a in legal]
    if len(kept) == len(listed):
        return kept
    total = sum(p for _, p in kept)
    return [(a, p / total) for a, p in kept]


def _apply_entries(state: Any, entries: Sequence[HistoryEntry], *, check: bool) -> bool:
    """Apply history entries to a pyspiel state; with ``check``, stop with False at the first
    illegal one (tested here: pyspiel's own checked apply prints to stderr when it refuses)."""
    for entry in entries:
        if isinstance(entry, tuple):
            if check and not all(a in state.legal_actions(p) for p, a in enumerate(entry)):
                return False
            state.apply_actions(list(entry))
        else:
            # legal_actions() lists the chance outcomes at a chance node
            if check and (state.is_terminal() or entry not in state.legal_actions()):
                return False
            state.apply_action(entry)
    return True
