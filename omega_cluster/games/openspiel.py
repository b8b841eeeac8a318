"""The OpenSpiel adapter: any ``pyspiel`` game behind the omega_cluster game contract.

``make_game("openspiel:liars_dice", players=3)`` (or ``OpenSpielGame(name="liars_dice", players=3)``)
loads the pyspiel game and wraps it: :class:`OpenSpielGame` builds the :class:`GameSpec` from
pyspiel's ``GameType`` and :class:`OpenSpielState` wraps one ``pyspiel.State``, so search, self-play
and the arena (which only know :mod:`omega_cluster.games.api`) can play it. pyspiel is imported
lazily, only when such a game is built (``pip install 'omega_cluster[openspiel]'``).

Mapping of the contract onto pyspiel:

* parameters — ``name`` plus the pyspiel game's own parameters (names, defaults and types from
  ``GameType.parameter_specification``); every game also takes ``players`` (for a game without a
  ``players`` parameter only its fixed count is allowed). See :meth:`OpenSpielGame.parameters_of`.
* who acts — pyspiel's chance player (-1) is ``(CHANCE,)``, a simultaneous node (-2) is every
  player ``(0, ..., n-1)``, terminal (-4) is ``()``. At a simultaneous node every player gets the
  legal list pyspiel gives (OpenSpiel's convention is a single no-op for a player who has no real
  move), so the joint action always has one entry per player, as ``apply_actions`` wants.
* chance — explicit, as in pyspiel: chance outcomes are history entries (ids in
  ``0..max_chance_outcomes-1``, which may exceed ``num_actions``). The ``seed`` of
  ``new_initial_state`` / :meth:`Game.replay` therefore changes nothing: ``(params, history)``
  alone fixes the state. Games whose chance is sampled inside pyspiel (``SAMPLED_STOCHASTIC``,
  e.g. tarok) cannot replay exactly and are refused, as are mean-field and action-struct games.
* information — ``observation(p)`` and ``information_set_key(p)`` are both pyspiel's perfect-recall
  ``information_state_string(p)`` where the game provides it, else ``observation_string(p)``,
  else (perfect information) the state string. :meth:`OpenSpielState.observation_tensor` gives
  pyspiel's tensor for encoders.
* determinization — ``sample_world`` calls pyspiel's ``resample_from_infostate(p, sampler)``, the
  sampler being our ``random.Random.random`` (deterministic given the rng). See
  :meth:`OpenSpielState.sample_world` for the chance-node workaround.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final

import numpy as np

from omega_cluster.games.api import (
    CHANCE,
    Game,
    GameError,
    GameSpec,
    HistoryEntry,
    InvalidParameterError,
    ParamSpec,
    RngLike,
    SamplingNotSupportedError,
    State,
    as_rng,
)
from omega_cluster.games.plugin import GamePlugin

__all__ = ["OpenSpielGame", "OpenSpielState", "supported_openspiel_games"]

# pyspiel player ids (open_spiel/spiel_utils.h); literals so this module imports without pyspiel.
_SIMULTANEOUS: Final = -2
_TERMINAL: Final = -4
# How many times sample_world retries the decision-prefix route before returning the truth.
_RESAMPLE_TRIES: Final = 16
_INSTALL_HINT: Final = (
    "OpenSpiel games need pyspiel: pip install 'omega_cluster[openspiel]' (package open_spiel)"
)


def _pyspiel() -> Any:
    """The pyspiel module, imported on first use so ``import omega_cluster`` never needs it."""
    try:
        import pyspiel
    except ImportError as err:
        raise ImportError(_INSTALL_HINT) from err
    return pyspiel


@functools.cache
def _registered_types() -> dict[str, Any]:
    return {t.short_name: t for t in _pyspiel().registered_games()}


def _unsupported_reason(game_type: Any) -> str | None:
    """Why the adapter refuses a game type, or None when it can wrap it."""
    gt = _pyspiel().GameType
    if game_type.dynamics == gt.Dynamics.MEAN_FIELD:
        return "it is a mean-field game (no per-player states)"
    if game_type.chance_mode == gt.ChanceMode.SAMPLED_STOCHASTIC:
        return (
            "its chance events are sampled inside pyspiel (SAMPLED_STOCHASTIC), so a game cannot "
            "be replayed exactly from its action history"
        )
    if game_type.action_structs_only:
        return "it uses action structs only (no integer action ids)"
    return None


def supported_openspiel_games() -> list[str]:
    """pyspiel short names the adapter can wrap (sorted)."""
    return sorted(n for n, t in _registered_types().items() if _unsupported_reason(t) is None)


def _game_type(name: Any) -> Any:
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(
            f"openspiel: parameter name={name!r} must be a pyspiel game name, one of: "
            f"{', '.join(supported_openspiel_games())}"
        )
    game_type = _registered_types().get(name)
    if game_type is None:
        raise InvalidParameterError(
            f"openspiel: unknown pyspiel game {name!r}; supported games: "
            f"{', '.join(supported_openspiel_games())}"
        )
    reason = _unsupported_reason(game_type)
    if reason is not None:
        raise InvalidParameterError(f"openspiel: game {name!r} is not supported: {reason}")
    return game_type


class OpenSpielGame(Game):
    """A pyspiel game as a :class:`Game`: ``OpenSpielGame(name="kuhn_poker", players=3)``."""

    name: ClassVar[str] = "openspiel"
    # Only ``name`` is static; the rest depend on the game: see ``parameters_of(name)``.
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "name": ParamSpec(None, "pyspiel short name of the game, e.g. 'liars_dice'", kind=str),
    }

    def __init__(self, **params: Any) -> None:
        self.params, self._game = _resolve_and_load(params)
        game, game_type = self._game, self._game.get_type()
        gt = _pyspiel().GameType
        n = game.num_players()
        # ONE_SHOT (matrix games) hides only the simultaneous choice, which is not state.
        hidden = game_type.information == gt.Information.IMPERFECT_INFORMATION
        self.spec = GameSpec(
            name=f"openspiel:{self.params['name']}",
            num_players=n,
            min_players=game_type.min_num_players,
            max_players=game_type.max_num_players,
            num_actions=game.num_distinct_actions(),
            simultaneous=game_type.dynamics == gt.Dynamics.SIMULTANEOUS,
            hidden_information=hidden,
            explicit_chance=game_type.chance_mode == gt.ChanceMode.EXPLICIT_STOCHASTIC,
            max_game_length=game.max_game_length(),
            min_return=game.min_utility(),
            max_return=game.max_utility(),
            zero_sum=game_type.utility == gt.Utility.ZERO_SUM,
        )
        self._all_players = tuple(range(n))
        # A one-player simultaneous game (pathfinding) has "simultaneous" nodes with one mover,
        # which the contract treats as a turn: apply_action, history entry an int.
        self._solo_simultaneous = self.spec.simultaneous and n == 1
        # Which pyspiel string identifies an information set (see the module docstring).
        if game_type.provides_information_state_string:
            self._info_kind = "information_state"
        elif game_type.provides_observation_string or hidden:
            self._info_kind = "observation"
        else:
            self._info_kind = "state"
        self._names: dict[tuple[int, int], str] = {}
        self._can_resample: bool | None = None  # probed on the first sample_world

    # -- parameters -----------------------------------------------------------------------------
    @classmethod
    def parameters_of(cls, name: str) -> dict[str, ParamSpec]:
        """Every parameter ``OpenSpielGame(name=name, ...)`` accepts, with defaults and types."""
        game_type = _game_type(name)
        specs: dict[str, ParamSpec] = {"name": ParamSpec(name, "pyspiel short name", kind=str)}
        for key, default in sorted(game_type.parameter_specification.items()):
            if key == "players":
                specs[key] = ParamSpec(
                    default,
                    "number of players",
                    kind=int,
                    minimum=game_type.min_num_players,
                    maximum=game_type.max_num_players,
                )
            else:
                specs[key] = ParamSpec(
                    default,
                    f"pyspiel {type(default).__name__} parameter of {name}",
                    kind=type(default),
                )
        return specs

    @classmethod
    def resolve_params(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``given`` against the pyspiel game's own parameters (loads the game)."""
        return _resolve_and_load(given)[0]

    @property
    def pyspiel_game(self) -> Any:
        """The wrapped ``pyspiel.Game``."""
        return self._game

    # -- contract -------------------------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> OpenSpielState:
        """The initial pyspiel state. ``seed`` is unused: chance is explicit in the history."""
        return OpenSpielState(self, self._game.new_initial_state(), [])

    def describe_action(self, action: int, *, player: int = 0) -> str:
        """pyspiel's game-level ``action_to_string`` for ``player`` (default 0), or the id.

        Never raises (error messages call it on illegal ids). It never asks a *state* for names:
        pyspiel's chess segfaults naming an illegal move. :meth:`OpenSpielState.describe_action`
        names a legal action in its real position.
        """
        limit = self._game.max_chance_outcomes() if player == CHANCE else self.spec.num_actions
        if not 0 <= action < limit:  # pyspiel would print a failed CHECK to stderr
            return str(action)
        key = (player, action)
        name = self._names.get(key)
        if name is None:
            try:
                name = str(self._game.action_to_string(player, action))
            except Exception:
                name = str(action)
            if name.startswith("Action(id="):  # pyspiel's default text says nothing more
                name = str(action)
            self._names[key] = name
        return name

    def supports_sampling(self) -> bool:
        """Whether ``sample_world`` works: no hidden information, or pyspiel can resample."""
        if not self.spec.hidden_information:
            return True
        if self._can_resample is None:
            self._can_resample = _probe_resample(self._game)
        return self._can_resample

    def __reduce__(self) -> tuple[Callable[..., OpenSpielGame], tuple[dict[str, Any]]]:
        # pyspiel objects pickle poorly across versions; rebuild from the parameters (Ray actors).
        return _rebuild_game, (dict(self.params),)


def _rebuild_game(params: dict[str, Any]) -> OpenSpielGame:
    return OpenSpielGame(**params)


def _resolve_and_load(given: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """Check ``given`` against the game's parameters, load it; return (resolved params, game)."""
    name: str = _game_type(given.get("name")).short_name
    specs = OpenSpielGame.parameters_of(name)
    label = f"openspiel:{name}"
    has_players = "players" in specs
    allowed = set(specs) | {"players"}

    def valid() -> str:
        listed = ", ".join(f"{k} ({p.describe()})" for k, p in specs.items())
        return listed if has_players else f"{listed}, players (the game's fixed player count)"

    unknown = sorted(set(given) - allowed)
    if unknown:
        raise InvalidParameterError(
            f"{label}: unknown parameter(s) {', '.join(unknown)}; valid parameters: {valid()}"
        )
    # Defaults are not checked: pyspiel uses sentinels (hanabi's players=0 means "the default").
    resolved = {
        k: spec.check(label, k, given[k]) if k in given else spec.default
        for k, spec in specs.items()
    }
    # Only values that differ from the defaults go to pyspiel, so the resolved dict (which lists
    # every default) rebuilds the very same game.
    to_pyspiel = {
        k: v for k, v in resolved.items() if k != "name" and (k in given and v != specs[k].default)
    }
    pyspiel = _pyspiel()
    try:
        game = pyspiel.load_game(name, to_pyspiel)
    except Exception as err:  # SpielError, or IndexError/RuntimeError from some C++ loaders
        raise InvalidParameterError(
            f"{label}: pyspiel refused parameters {to_pyspiel!r}: {err}; valid parameters: {valid()}"
        ) from err
    fixed = game.num_players()
    if has_players:
        resolved["players"] = fixed  # the real count, where the default is a sentinel
    else:
        players = given.get("players", fixed)
        if isinstance(players, bool) or players != fixed:
            raise InvalidParameterError(
                f"{label}: parameter players={players!r} is not allowed; {name} is played by "
                f"exactly {fixed} players (it has no 'players' parameter)"
            )
        resolved["players"] = fixed
    return resolved, game


def _probe_resample(game: Any) -> bool:
    """Whether pyspiel implements ``resample_from_infostate`` for ``game``.

    Walks to the first node that is not a chance node (random outcomes: always taking the first
    one loops forever in crazy_eights) and asks there: pyspiel's base class answers "not
    implemented". Other errors count as implemented (some games only fail at chance nodes;
    :meth:`OpenSpielState.sample_world` works around those).
    """
    rng = random.Random(0)  # a constant sampler makes rejection samplers (hearts) loop forever
    state = game.new_initial_state()
    for _ in range(100_000):
        if not state.is_chance_node():
            break
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    try:
        state.resample_from_infostate(max(0, state.current_player()), rng.random)
    except Exception as err:
        return not _not_implemented(err)
    return True


def _not_implemented(err: Exception) -> bool:
    return "not implemented" in str(err).lower()


class OpenSpielState(State):
    """One ``pyspiel.State`` behind the :class:`State` contract; ``history`` mirrors what was applied
    (an int per move or chance outcome, a tuple per simultaneous joint action)."""

    __slots__ = ("_state",)

    game: OpenSpielGame

    def __init__(self, game: OpenSpielGame, state: Any, history: list[HistoryEntry]) -> None:
        self.game = game
        self.history = history
        self._state = state

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
            return sorted(action for action, _ in state.chance_outcomes())
        if player < 0:
            return []
        return state.legal_actions(player)  # a fresh list, ascending (a pyspiel guarantee)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._state.is_chance_node():
            raise GameError(f"{self.game.spec.name}: not a chance node")
        return [(int(a), float(p)) for a, p in self._state.chance_outcomes()]

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

    def sample_world(self, player: int, rng: RngLike, constraints: Any = None) -> OpenSpielState:
        """A state drawn from ``player``'s information set with pyspiel's
        ``resample_from_infostate`` (perfect-information games: a clone).

        pyspiel's resamplers are written for decision nodes: at chance nodes several of them fail
        or return a state with a different history (kuhn, leduc, oh_hell, universal_poker in
        open_spiel 2.0), and hearts' can return unreachable deals. So every world is checked
        (its history has our shape and is legal move by move, the same players act, ``player``'s
        information set is unchanged); where the direct call fails we resample at the last
        decision node of the history and re-apply the moves and chance outcomes since then,
        retrying a few times; if none fits, the true state (a member of the set) is returned.
        ``constraints`` are not supported. Raises :class:`SamplingNotSupportedError` for a game
        whose pyspiel implementation lacks ``resample_from_infostate`` (e.g. liars_dice).
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
        sampler = as_rng(rng).random
        if not self._state.is_chance_node():
            try:
                world = self._wrap(self._state.resample_from_infostate(player, sampler))
            except Exception as err:  # pyspiel bugs off the beaten path: fall back below
                if _not_implemented(err):
                    raise self._not_supported() from err
                world = None
            if world is not None and self._same_information(world, player):
                return world
        return self._resample_at_decision(player, sampler)

    def _not_supported(self) -> SamplingNotSupportedError:
        return SamplingNotSupportedError(
            f"{self.game.spec.name}: pyspiel's {self.game.params['name']} does not implement "
            "resample_from_infostate, so sample_world cannot draw a world from an information "
            "set; use it with search that needs no determinization, or pick another game"
        )

    def _resample_at_decision(self, player: int, sampler: Callable[[], float]) -> OpenSpielState:
        walker = self.game._game.new_initial_state()
        prefix, cut = None, 0
        for i, entry in enumerate(self.history):
            if not walker.is_chance_node():  # a decision node: pyspiel can resample there
                prefix, cut = walker, i
                walker = walker.clone()
            _apply_entries(walker, [entry], check=False)
        if prefix is None:  # only chance so far, all of it re-applied below: nothing to vary
            return self.clone()
        for _ in range(_RESAMPLE_TRIES):
            try:
                world = prefix.resample_from_infostate(player, sampler)
            except Exception:
                continue
            if _apply_entries(world, self.history[cut:], check=True):
                wrapped = self._wrap(world)
                if wrapped is not None and self._same_information(wrapped, player):
                    return wrapped
        return self.clone()

    def _wrap(self, world: Any) -> OpenSpielState | None:
        """Wrap a resampled pyspiel state, its flat history grouped like ``self.history`` (pyspiel
        flattens a joint action into one entry per player); None if the history does not fit or
        is not a legal one (hearts' resampler can return unreachable deals).

        The pyspiel state itself is kept, not a replay of its history: gin_rummy's resampler
        swaps hidden cards without rewriting the history, so there the world's history is the
        truth's and replaying it gives the truth, not the world.
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
        if not _apply_entries(self.game._game.new_initial_state(), history, check=True):
            return None
        return OpenSpielState(self.game, world, history)

    def _same_information(self, world: OpenSpielState, player: int) -> bool:
        return (
            world._state.current_player() == self._state.current_player()
            and world.information_set_key(player) == self.information_set_key(player)
        )

    # -- plumbing -------------------------------------------------------------------------------
    def clone(self) -> OpenSpielState:
        return OpenSpielState(self.game, self._state.clone(), self.history.copy())

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


def _rebuild_state(game: OpenSpielGame, history: Sequence[HistoryEntry]) -> OpenSpielState:
    state = game.new_initial_state()
    for entry in history:
        if isinstance(entry, tuple):
            state.apply_joint_action_unchecked(entry)
        else:
            state.apply_action_unchecked(entry)
    return state


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


PLUGIN = GamePlugin(
    name="openspiel",
    game=OpenSpielGame,
    encoder="omega_cluster.model.encoders.openspiel:OpenSpielEncoder",
)
