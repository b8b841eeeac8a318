"""The game contract: one API for sequential, simultaneous, chance and hidden-information games.

Everything else in omega_cluster (search, self-play, the arena, the learner's encoders) talks to a
game only through this module. A game is two classes:

* a :class:`Game` — immutable rules and parameters, a :class:`GameSpec` describing its shape,
  ``new_initial_state(seed)`` and ``describe_action``;
* a :class:`State` — one position, mutable, cheap to :meth:`State.clone` and step (search does so
  millions of times, so subclasses keep their fields small: ints, bit masks, tuples).

Who acts (``State.current_players``): ``()`` — the game is over, ``State.returns()`` holds one
float per player; ``(p,)`` — player ``p`` moves (``apply_action``); ``(CHANCE,)`` — an explicit
chance node (``chance_outcomes`` lists ``(action, probability)``), used where OpenSpiel has one so
action histories line up; ``(p, q, ...)`` — several players move at once, ``apply_joint_action``
taking one action each in that order. Huge chance events (a shuffle) are resolved from the seed
instead; either way a game replays exactly from parameters, seed and history (:meth:`Game.replay`).

Hidden information: ``observation(player)`` and ``information_set_key(player)`` expose only what
that player may know (keys are equal iff the player cannot tell the states apart), and
``sample_world(player, rng)`` returns a full state drawn from that player's information set (a
determinization). It must keep that information set and must actually vary what the player cannot
see; :mod:`omega_cluster.games.conformance` checks both on every game.

Invariants common to every game (no move after the end, only acting players move, illegal moves
refused with an error naming the move, the player and the legal set) are enforced here, once,
around the rules (the pgx ``Env.step`` pattern); a game implements only the ``_apply_*`` hooks.
Input types are checked here too and never coerced, each refusal naming the value and its type:
an action is an int (not a bool) or numpy integer (:func:`is_action`) and a joint action a tuple,
list or 1-D numpy array of actions, else :class:`IllegalActionError`; a seed is an int or numpy
integer, else :class:`GameInputError` (``Game.__init_subclass__`` wraps every game's
``new_initial_state`` with this check); a replay history is a list, tuple or numpy array of
entries, else :class:`ReplayError`. Search, which only applies actions from ``legal_actions``,
calls ``apply_action_unchecked`` / ``apply_joint_action_unchecked`` to skip the legality test.

Randomness is always explicit. Inner loops (a random player, a rollout, ``sample_world``) take a
:class:`random.Random`, far cheaper per call than a ``numpy.random.Generator``; boundaries accept
either, and :func:`as_rng` turns a seed or a generator into a ``random.Random`` deterministically.
The errors live in :mod:`.errors` and :class:`ParamSpec` and :class:`GameSpec` in :mod:`.spec`;
this module re-exports them, so the whole contract is importable from here.
"""

from __future__ import annotations

import functools
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final, TypeAlias

import numpy as np

from omega_cluster.games.errors import (
    ConstraintError,
    GameError,
    GameInputError,
    IllegalActionError,
    InvalidParameterError,
    ReplayError,
    SamplingNotSupportedError,
)
from omega_cluster.games.spec import GameSpec, ParamSpec

__all__ = [
    "CHANCE",
    "Action",
    "ConstraintError",
    "Game",
    "GameError",
    "GameInputError",
    "GameSpec",
    "HistoryEntry",
    "IllegalActionError",
    "InvalidParameterError",
    "ParamSpec",
    "ReplayError",
    "RngLike",
    "SamplingNotSupportedError",
    "State",
    "as_rng",
    "checked_seed",
    "is_action",
    "win_shares_from_returns",
]

CHANCE: Final[int] = -1
"""Pseudo-player id of an explicit chance node."""

Action: TypeAlias = int
HistoryEntry: TypeAlias = int | tuple[int, ...]
"""One step of an action history: an action, or a joint action (one per acting player)."""
RngLike: TypeAlias = random.Random | np.random.Generator | int


def is_action(value: object) -> bool:
    """Whether ``value`` is an action id: an ``int`` or a numpy integer, not a bool.

    Floats (``1.0``), strings, bools (``True`` is an ``int`` to Python, not a move) and numpy
    floats are not actions: the contract refuses them rather than guess what was meant.
    """
    if type(value) is int:
        return True
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _type_reason(value: object) -> str:
    return f"a {type(value).__name__}, not an int"


def _is_joint(value: object) -> bool:
    """Whether ``value`` is a joint action's container: a tuple, a list or a 1-D numpy array."""
    if isinstance(value, (tuple, list)):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 1


def _name_of(game: Game) -> str:
    spec = getattr(game, "spec", None)  # set by the game's __init__, maybe not yet
    return spec.name if spec is not None else type(game).__name__


def checked_seed(game: Game, seed: object) -> int:
    """``seed`` as an ``int``: an ``int`` as is, a numpy integer converted; anything else (a
    float, a bool, a string, ``None``) raises :class:`GameInputError` naming it, never coerced."""
    if type(seed) is int:
        return seed
    if is_action(seed):  # a numpy integer (an int subclass other than bool)
        return int(seed)  # type: ignore[call-overload]
    raise GameInputError(
        f"{_name_of(game)}: seed {seed!r} is {_type_reason(seed)} "
        f"(a seed is never rounded or parsed)"
    )


_NewInitialState: TypeAlias = Callable[..., "State"]


def _seed_checked(method: _NewInitialState) -> _NewInitialState:
    """``method`` (a game's ``new_initial_state``) with its seed checked by :func:`checked_seed`
    first; a seed left out keeps the method's own default.

    The usual signature ``(self, seed=<default>)`` gets a wrapper of that same signature (one
    ``type(seed) is int`` test and one call, tens of nanoseconds: ``sample_world`` of the poker
    games starts from a new state); any other signature a general ``*args`` one.
    """
    params = list(inspect.signature(method).parameters.values())[1:]
    simple = (
        len(params) == 1
        and params[0].name == "seed"
        and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    )
    if simple and params[0].default is not inspect.Parameter.empty:
        default = params[0].default

        def with_default(self: Game, seed: int = default) -> State:
            if type(seed) is not int:
                seed = checked_seed(self, seed)
            return method(self, seed)

        wrapper: _NewInitialState = with_default
    elif simple:

        def without_default(self: Game, seed: int) -> State:
            if type(seed) is not int:
                seed = checked_seed(self, seed)
            return method(self, seed)

        wrapper = without_default
    else:

        def general(self: Game, *args: Any, **kwargs: Any) -> State:
            if args:
                if type(args[0]) is not int:
                    args = (checked_seed(self, args[0]), *args[1:])
            elif "seed" in kwargs and type(kwargs["seed"]) is not int:
                kwargs["seed"] = checked_seed(self, kwargs["seed"])
            return method(self, *args, **kwargs)

        wrapper = general
    wrapper = functools.wraps(method)(wrapper)
    wrapper.__seed_checked__ = True  # type: ignore[attr-defined]
    return wrapper


def as_rng(rng: RngLike) -> random.Random:
    """A fast ``random.Random`` from a seed, a ``numpy.random.Generator`` or a ``random.Random``.

    A ``random.Random`` is returned as is (no copy). A generator is advanced by one draw, so
    deriving is deterministic and independent streams can be split from one parent.
    """
    if isinstance(rng, random.Random):
        return rng
    if isinstance(rng, np.random.Generator):
        return random.Random(int(rng.integers(0, 2**63 - 1)))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return random.Random(int(rng))
    raise TypeError(
        f"rng must be a random.Random, a numpy.random.Generator or an int seed, not {type(rng)}"
    )


def win_shares_from_returns(returns: Sequence[float]) -> tuple[float, ...]:
    """Players with the highest return share one win equally (ties share the win)."""
    best = max(returns)
    winners = [i for i, r in enumerate(returns) if r == best]
    share = 1.0 / len(winners)
    return tuple(share if r == best else 0.0 for r in returns)


class Game(ABC):
    """Rules and parameters of one game at one table size. Immutable after construction.

    Subclasses declare ``name``, ``parameters`` (the keyword parameters ``make_game`` accepts, with
    defaults and allowed values) and build ``self.spec`` in ``__init__`` from validated params.
    """

    name: ClassVar[str]
    parameters: ClassVar[Mapping[str, ParamSpec]]
    spec: GameSpec
    params: Mapping[str, Any]

    def __init__(self, **params: Any) -> None:
        self.params = self.resolve_params(params)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's own ``new_initial_state`` with the seed check (module docstring):
        every game, a user's included, refuses a seed that is not an int the same way."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("new_initial_state")
        if (
            inspect.isfunction(own)
            and not getattr(own, "__isabstractmethod__", False)
            and not getattr(own, "__seed_checked__", False)
        ):
            cls.new_initial_state = _seed_checked(own)  # type: ignore[method-assign]

    @classmethod
    def resolve_params(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``given`` against ``parameters``: unknown names and bad values raise."""
        unknown = sorted(set(given) - set(cls.parameters))
        if unknown:
            valid = ", ".join(f"{k} ({p.describe()})" for k, p in cls.parameters.items())
            raise InvalidParameterError(
                f"{cls.name}: unknown parameter(s) {', '.join(unknown)}; valid parameters: {valid}"
            )
        resolved: dict[str, Any] = {}
        for key, spec in cls.parameters.items():
            value = given.get(key, spec.default)
            resolved[key] = spec.check(cls.name, key, value)
        return resolved

    @property
    def num_players(self) -> int:
        return self.spec.num_players

    @abstractmethod
    def new_initial_state(self, seed: int = 0) -> State:
        """The state before the first move. ``seed`` fixes every implicit chance event.

        A game implements it as usual; the seed arrives checked (an ``int``: module docstring).
        """

    def describe_action(self, action: int) -> str:
        """A human-readable name of an action id ("6|4 on Mexican train")."""
        return str(action)

    def replay(self, seed: int, history: Sequence[HistoryEntry]) -> State:
        """Rebuild a state from its seed and action history, checking every step.

        Raises :class:`ReplayError` naming the step where the history stops making sense, or the
        history itself when it is not a list, tuple or numpy array of entries;
        :class:`GameInputError` when ``seed`` is not an int.
        """
        seed = checked_seed(self, seed)
        if not isinstance(history, (list, tuple)) and not (
            isinstance(history, np.ndarray) and history.ndim >= 1
        ):
            raise ReplayError(
                f"{self.spec.name}: history {history!r} is a {type(history).__name__}, not a "
                f"list or tuple of actions"
            )
        state = self.new_initial_state(seed)
        for step, entry in enumerate(history):
            acting = state.current_players
            try:
                if not acting:
                    raise ReplayError("the game is already over")
                if len(acting) > 1:
                    if not _is_joint(entry) or len(entry) != len(acting):
                        raise ReplayError(
                            f"a simultaneous node needs a tuple of {len(acting)} actions "
                            f"(players {acting}), got {entry!r} (a {type(entry).__name__})"
                        )
                    bad = [a for a in entry if not is_action(a)]
                    if bad:
                        raise ReplayError(f"action {bad[0]!r} is {_type_reason(bad[0])}")
                    state.apply_joint_action(tuple(int(a) for a in entry))
                else:
                    if isinstance(entry, (tuple, list)):
                        raise ReplayError(
                            f"player {acting[0]} moves alone; expected one int action, "
                            f"got {entry!r} (a {type(entry).__name__})"
                        )
                    if not is_action(entry):
                        raise ReplayError(f"action {entry!r} is {_type_reason(entry)}")
                    state.apply_action(int(entry))
            except (ReplayError, IllegalActionError) as err:
                raise ReplayError(
                    f"{self.spec.name}: replay of seed {seed} fails at step {step} "
                    f"(entry {entry!r}): {err}"
                ) from err
        return state

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class State(ABC):
    """One position of a :class:`Game`. Mutable; ``clone`` before exploring.

    Subclasses implement the abstract hooks. Keep ``__slots__`` and cheap fields: ``clone`` and the
    ``_apply_*`` hooks are the innermost loop of every search.
    """

    __slots__ = ("game", "history")

    game: Game
    history: list[HistoryEntry]  # every action (or joint action) applied so far, chance included

    # -- who acts, what they may do -----------------------------------------------------------
    @property
    @abstractmethod
    def current_players(self) -> tuple[int, ...]:
        """``()`` at the end, ``(p,)`` in turn, ``(CHANCE,)`` at chance, several when simultaneous."""

    def is_terminal(self) -> bool:
        return not self.current_players

    def is_chance_node(self) -> bool:
        return self.current_players == (CHANCE,)

    def is_simultaneous_node(self) -> bool:
        return len(self.current_players) > 1

    @abstractmethod
    def legal_actions(self, player: int | None = None) -> Sequence[int]:
        """Legal action ids of ``player`` (default: the single acting player), sorted ascending.

        At a chance node (``player`` is ``CHANCE`` or omitted) the chance outcomes' actions.
        Empty for a player who does not act now.
        """

    def chance_outcomes(self) -> Sequence[tuple[int, float]]:
        """``(action, probability)`` pairs at an explicit chance node."""
        raise GameError(f"{self.game.spec.name}: not a chance node")

    def is_legal(self, player: int, action: int) -> bool:
        """Whether ``player`` may take ``action`` now. Override with something faster than a scan."""
        return action in self.legal_actions(player)

    # -- moving -------------------------------------------------------------------------------
    def apply_action(self, action: int) -> None:
        """Apply the action of the single acting player (or chance), refusing an illegal one."""
        acting = self.current_players
        if len(acting) != 1:
            if not acting:
                raise IllegalActionError(self, -1, action, (), "the game is over")
            raise IllegalActionError(
                self,
                acting[0],
                action,
                (),
                f"players {acting} move simultaneously: use apply_joint_action",
            )
        player = acting[0]
        if not is_action(action):
            legal = self.legal_actions(player)
            raise IllegalActionError(self, player, action, legal, _type_reason(action))
        action = int(action)
        if not self.is_legal(player, action):
            raise IllegalActionError(self, player, action, self.legal_actions(player))
        self._apply_action(action)

    def apply_joint_action(self, actions: Sequence[int]) -> None:
        """Apply one action per acting player (in ``current_players`` order), refusing illegal ones.

        At a node where one player acts, a 1-tuple is accepted too. ``actions`` is a tuple, list
        or numpy array of actions (:func:`is_action`); anything else is refused, not coerced.
        """
        acting = self.current_players
        if not acting:
            raise IllegalActionError(self, -1, actions, (), "the game is over")
        if not _is_joint(actions):
            why = (
                f"a joint action is a tuple of {len(acting)} actions, got {type(actions).__name__}"
            )
            raise IllegalActionError(self, acting[0], actions, (), why)
        if len(actions) != len(acting):
            raise IllegalActionError(
                self,
                acting[0],
                actions,
                (),
                f"expected {len(acting)} actions for players {acting}, got {len(actions)}",
            )
        for player, action in zip(acting, actions, strict=True):
            if not is_action(action):
                legal = self.legal_actions(player)
                raise IllegalActionError(self, player, action, legal, _type_reason(action))
            if not self.is_legal(player, int(action)):
                raise IllegalActionError(self, player, action, self.legal_actions(player))
        if len(acting) == 1:
            self._apply_action(int(actions[0]))
        else:
            self._apply_joint_action(tuple(int(a) for a in actions))

    def apply_action_unchecked(self, action: int) -> None:
        """Inner-loop step for callers that took ``action`` from ``legal_actions`` (search)."""
        self._apply_action(action)

    def apply_joint_action_unchecked(self, actions: tuple[int, ...]) -> None:
        """Inner-loop joint step for callers that took every action from ``legal_actions``."""
        if len(actions) == 1:
            self._apply_action(actions[0])
        else:
            self._apply_joint_action(actions)

    @abstractmethod
    def _apply_action(self, action: int) -> None:
        """Rules: apply a legal action of the single acting player; append it to ``history``."""

    def _apply_joint_action(self, actions: tuple[int, ...]) -> None:
        """Rules: apply a legal joint action; append the tuple to ``history``."""
        raise GameError(f"{self.game.spec.name} has no simultaneous nodes")

    # -- outcome ------------------------------------------------------------------------------
    @abstractmethod
    def returns(self) -> tuple[float, ...]:
        """One float per player: the utilities at the end (zeros, or partial, before the end)."""

    def win_shares(self) -> tuple[float, ...]:
        """Each player's share of the win (sums to 1; tied winners share). Valid at the end."""
        return win_shares_from_returns(self.returns())

    def scores(self) -> tuple[float, ...]:
        """The game's natural score per player (pips, points). Defaults to ``returns()``."""
        return self.returns()

    # -- information --------------------------------------------------------------------------
    @abstractmethod
    def observation(self, player: int) -> Hashable:
        """Everything ``player`` may know now, as an immutable, comparable value."""

    @abstractmethod
    def information_set_key(self, player: int) -> Hashable:
        """Equal for two states iff ``player`` cannot tell them apart. Ints are fastest."""

    def sample_world(self, player: int, rng: RngLike, constraints: Any = None) -> State:
        """A full state drawn from ``player``'s information set (a determinization).

        Perfect-information games return a clone. ``constraints`` (game-specific, optional) narrow
        the draw further; a game that cannot honour them raises :class:`ConstraintError`.
        """
        if self.game.spec.hidden_information:
            raise SamplingNotSupportedError(
                f"{self.game.spec.name} has hidden information but does not implement sample_world"
            )
        return self.clone()

    def hidden_state(self, player: int) -> np.ndarray | None:
        """What ``player`` cannot see now, for training only (the records' ``hidden_state``
        column; no player ever receives it): a float32 vector laid out as the game's encoder
        declares (:class:`~omega_cluster.games.encoding.HiddenSpec`), or ``None`` where the
        game does not say (the default)."""
        return None

    # -- plumbing -----------------------------------------------------------------------------
    @abstractmethod
    def clone(self) -> State:
        """An independent copy; mutating it never changes ``self``."""

    def render(self) -> str:
        """A human-readable picture of the state, for debugging and the CLI."""
        return repr(self)

    def __str__(self) -> str:
        return self.render()
