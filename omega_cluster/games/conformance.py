"""The conformance suite: run ``check_game(game)`` on any game, built-in or your own.

It plays random games through the public contract of :mod:`omega_cluster.games.api` and checks, at
every state it visits, the properties that search, self-play and the arena rely on:

* **shape** — who acts is ``()``, ``(CHANCE,)``, one player or several distinct players; legal
  actions are non-empty, sorted, unique ints inside ``0..num_actions-1``; chance outcomes are
  legal, each has a probability above 0 and together they sum to 1; returns have one finite float
  per player; win shares sum to 1 at the end; playouts end within ``max_steps``;
* **illegal actions are refused** — with :class:`IllegalActionError`, leaving the state unchanged,
  and nothing is accepted after the end;
* **input types are checked, never coerced** — a legal action in a loose type (float, string,
  bool, numpy float), a joint action that is not a sequence, a seed that is not an int and a
  history that is not a list or tuple (or holds a float) are refused with
  :class:`IllegalActionError`, :class:`GameInputError` or :class:`ReplayError` naming the value
  and its type, leaving the state unchanged; numpy integers are taken as the same ints;
* **clone independence** — stepping a clone never changes the original;
* **exact replay** — ``game.replay(seed, history)`` reproduces every player's information set,
  the returns and the rendering, from the start and from a prefix;
* **determinizations** (hidden-information games) — ``w = s.sample_world(p, rng)`` keeps ``p``'s
  information set key and observation, is a live state (a random playout from it terminates),
  and over the run sampled worlds differ from the truth in something ``p`` cannot see (the
  sampler is not a no-op).

:func:`check_trajectory` checks one game driven by a list of choice indices (the hypothesis tests
in ``tests/conformance`` draw those lists; :func:`check_game` draws them at random). Failures raise
:class:`ConformanceError` naming the check, the game, the seed and the history, so the failing
position can be replayed.

:func:`check_kernels` holds a game's compiled kernels (its plugin hook ``fast_search``, the
protocol of ``docs/kernels.md``) to its Python rules, move for move on random playouts: the packed
state, who acts, the legal moves in order, the returns, equal keys exactly for equal information
sets, and, drawing from one splitmix64 stream (:class:`~omega_cluster.games.fast.SplitMixRandom`)
on both sides, the same determinizations, chance outcomes, random playouts and encoder inputs.
The compiled search draws exactly these numbers, so kernels that pass search as the Python game
does.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.games.api import (
    CHANCE,
    Game,
    GameInputError,
    IllegalActionError,
    ReplayError,
    State,
)
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.fast import CHANCE_NODE, OVER, FastGame, SplitMixRandom
from omega_cluster.games.registry import game_plugin

__all__ = [
    "ConformanceError",
    "ConformanceReport",
    "KernelReport",
    "check_game",
    "check_kernels",
    "check_trajectory",
]


class ConformanceError(AssertionError):
    """A game broke the contract. The message names the check, the seed and the history."""


@dataclass(frozen=True)
class ConformanceReport:
    """What ``check_game`` exercised (all checks passed if it returned)."""

    game: str  # spec name
    playouts: int  # games played to the end
    states: int  # non-terminal states checked
    decisions: int  # player (non-chance) moves applied
    illegal_refused: int  # illegal actions tried and refused
    sampled_worlds: int  # sample_world calls checked
    worlds_differing: int  # sampled worlds that differ from the truth in hidden information
    mean_length: float  # mean number of history entries per game


@dataclass
class _Tally:
    states: int = 0
    decisions: int = 0
    illegal_refused: int = 0
    sampled_worlds: int = 0
    worlds_differing: int = 0


def _fail(game: Game, seed: int, state: State, check: str, detail: str) -> ConformanceError:
    return ConformanceError(
        f"[{game.spec.name}] {check} failed (seed={seed}, history={list(state.history)!r}): {detail}"
    )


def _keys(state: State, n: int) -> tuple[object, ...]:
    return tuple(state.information_set_key(p) for p in range(n))


def _check_node(game: Game, seed: int, state: State) -> tuple[int, ...]:
    """Shape of one non-terminal node; returns the acting players."""
    n, num_actions = game.num_players, game.spec.num_actions
    acting = state.current_players
    if acting == (CHANCE,):
        outcomes = list(state.chance_outcomes())
        total = sum(p for _, p in outcomes)
        if not outcomes or abs(total - 1.0) > 1e-6:
            raise _fail(game, seed, state, "chance outcomes", f"{outcomes!r} do not sum to 1")
        if any(not p > 0 for _, p in outcomes):
            raise _fail(
                game,
                seed,
                state,
                "chance outcomes",
                f"{outcomes!r} list an outcome of probability 0",
            )
        if sorted(a for a, _ in outcomes) != list(state.legal_actions(CHANCE)):
            raise _fail(game, seed, state, "chance outcomes", "actions differ from legal_actions")
        return acting
    if len(set(acting)) != len(acting) or any(not 0 <= p < n for p in acting):
        raise _fail(game, seed, state, "current_players", f"{acting!r} for {n} players")
    if len(acting) > 1 and not game.spec.simultaneous:
        raise _fail(
            game, seed, state, "current_players", "several players act in a sequential game"
        )
    for p in acting:
        legal = list(state.legal_actions(p))
        if not legal:
            raise _fail(game, seed, state, "legal actions", f"player {p} acts with no legal action")
        if legal != sorted(set(legal)) or not all(isinstance(a, int) for a in legal):
            raise _fail(game, seed, state, "legal actions", f"not sorted unique ints: {legal!r}")
        if legal[0] < 0 or legal[-1] >= num_actions:
            raise _fail(
                game, seed, state, "legal actions", f"outside 0..{num_actions - 1}: {legal}"
            )
        if not all(state.is_legal(p, a) for a in legal):
            raise _fail(game, seed, state, "is_legal", "refuses an action from legal_actions")
    if len(acting) == 1 and list(state.legal_actions()) != list(state.legal_actions(acting[0])):
        raise _fail(game, seed, state, "legal actions", "legal_actions() != legal_actions(player)")
    return acting


def _check_illegal(game: Game, seed: int, state: State, rng: random.Random, tally: _Tally) -> None:
    """Try a few illegal actions; each must raise IllegalActionError and change nothing."""
    acting = state.current_players
    player = acting[0]
    legal = set(state.legal_actions(player))
    candidates = [-1, game.spec.num_actions] + [
        rng.randrange(game.spec.num_actions) for _ in range(4)
    ]
    before = (len(state.history), _keys(state, game.num_players))
    for action in candidates:
        if action in legal:
            continue
        try:
            if len(acting) == 1:
                state.apply_action(action)
            else:
                joint = [state.legal_actions(p)[0] for p in acting]
                joint[0] = action
                state.apply_joint_action(joint)
        except IllegalActionError as err:
            if str(action) not in str(err):
                raise _fail(
                    game, seed, state, "illegal action", f"error does not name {action}"
                ) from err
        else:
            raise _fail(game, seed, state, "illegal action", f"{action} accepted for {player}")
        if (len(state.history), _keys(state, game.num_players)) != before:
            raise _fail(game, seed, state, "illegal action", f"refused {action} changed the state")
        tally.illegal_refused += 1


def _loose_forms(action: int) -> list[object]:
    """``action`` in types that are not actions (bools only where they equal the action)."""
    forms: list[object] = [float(action), str(action), np.float64(action)]
    if action in (0, 1):
        forms.append(bool(action))
    return forms


def _check_loose_types(game: Game, seed: int, state: State) -> None:
    """A legal action in a loose type is refused (state unchanged); as a numpy int it is taken."""
    acting = state.current_players
    joint = [state.legal_actions(p)[0] for p in acting]
    before = (len(state.history), _keys(state, game.num_players))
    for form in _loose_forms(joint[0]):
        try:
            if len(acting) == 1:
                state.apply_action(form)  # type: ignore[arg-type]
            else:
                state.apply_joint_action([form, *joint[1:]])  # type: ignore[list-item]
        except IllegalActionError as err:
            if repr(form) not in str(err) or type(form).__name__ not in str(err):
                raise _fail(
                    game, seed, state, "loose types", f"error does not name {form!r}: {err}"
                ) from err
        else:
            raise _fail(game, seed, state, "loose types", f"{form!r} accepted as an action")
        if (len(state.history), _keys(state, game.num_players)) != before:
            raise _fail(game, seed, state, "loose types", f"refused {form!r} changed the state")
    _check_joint_types(game, seed, state, joint)
    twin = state.clone()
    if len(acting) == 1:
        twin.apply_action(np.int64(joint[0]))  # type: ignore[arg-type]
    else:
        twin.apply_joint_action([np.int64(a) for a in joint])  # type: ignore[misc]
    entry = twin.history[-1]
    if not all(type(a) is int for a in (entry if isinstance(entry, tuple) else (entry,))):
        raise _fail(game, seed, state, "loose types", f"numpy ints stored as {entry!r}")


def _refused(
    game: Game,
    seed: int,
    state: State,
    error: type[Exception],
    value: object,
    call: Callable[..., object],
    *args: Any,
) -> None:
    """``call(*args)`` (given ``value``) raises ``error`` naming the value and its type."""
    try:
        call(*args)
    except error as err:
        if repr(value) not in str(err) or type(value).__name__ not in str(err):
            raise _fail(
                game, seed, state, "input types", f"error does not name {value!r}: {err}"
            ) from err
    except Exception as err:
        raise _fail(
            game,
            seed,
            state,
            "input types",
            f"{value!r} raised {type(err).__name__} ({err}), not {error.__name__}",
        ) from err
    else:
        raise _fail(game, seed, state, "input types", f"{value!r} accepted")


def _bad_seeds(seed: int) -> list[object]:
    return [seed + 0.5, float(seed), bool(seed % 2), str(seed), None]


def _check_seed_types(game: Game, seed: int, state: State) -> None:
    """A seed that is not an int is refused; a numpy integer seed deals the same game."""
    for bad in _bad_seeds(seed):
        _refused(game, seed, state, GameInputError, bad, game.new_initial_state, bad)
    same = game.new_initial_state(np.int64(seed))  # type: ignore[arg-type]
    if same.render() != state.render():
        raise _fail(game, seed, state, "input types", "a numpy integer seed deals another game")


def _not_sequences(joint: Sequence[int]) -> list[Any]:
    """Containers that are not a joint action, holding ``joint``'s actions where they can."""
    return [
        joint[0],
        set(joint),
        dict.fromkeys(joint),
        "".join(map(str, joint)),
        None,
        (a for a in joint),
    ]


def _check_joint_types(game: Game, seed: int, state: State, joint: Sequence[int]) -> None:
    """A joint action that is not a tuple, list or 1-D array is refused; nothing changes."""
    before = (len(state.history), _keys(state, game.num_players))
    for bad in _not_sequences(joint):
        _refused(game, seed, state, IllegalActionError, bad, state.apply_joint_action, bad)
        if (len(state.history), _keys(state, game.num_players)) != before:
            raise _fail(game, seed, state, "input types", f"refused {bad!r} changed the state")


def _check_history_types(game: Game, seed: int, state: State) -> None:
    """``replay`` refuses a seed that is not an int, a history that is not a list or tuple and a
    float entry; a tuple history replays like the list."""
    history = list(state.history)
    for bad in _bad_seeds(seed):
        _refused(game, seed, state, GameInputError, bad, game.replay, bad, history)
    first = history[0] if history else 0
    for container in ("".join(map(str, history[:3])), set(history[:1]), 0, None):
        _refused(game, seed, state, ReplayError, container, game.replay, seed, container)
    generator = (h for h in history)
    _refused(game, seed, state, ReplayError, generator, game.replay, seed, generator)
    if history:
        loose: Any = tuple(map(float, first)) if isinstance(first, tuple) else float(first)
        value = loose[0] if isinstance(loose, tuple) else loose
        _refused(game, seed, state, ReplayError, value, game.replay, seed, [loose, *history[1:]])
    again = game.replay(seed, tuple(history))
    if _keys(again, game.num_players) != _keys(state, game.num_players):
        raise _fail(game, seed, state, "input types", "a tuple history replays differently")


def _pick(state: State, acting: tuple[int, ...], choice: int) -> int | tuple[int, ...]:
    if acting == (CHANCE,):
        outcomes = state.chance_outcomes()
        return outcomes[choice % len(outcomes)][0]
    if len(acting) == 1:
        legal = state.legal_actions(acting[0])
        return legal[choice % len(legal)]
    picks = []
    for i, p in enumerate(acting):
        legal = state.legal_actions(p)
        picks.append(legal[(choice >> (4 * i)) % len(legal)])
    return tuple(picks)


def _apply(state: State, move: int | tuple[int, ...]) -> None:
    if isinstance(move, tuple):
        state.apply_joint_action(move)
    else:
        state.apply_action(move)


def _check_clone(game: Game, seed: int, state: State, move: int | tuple[int, ...]) -> None:
    before = (list(state.history), _keys(state, game.num_players), state.render())
    twin = state.clone()
    _apply(twin, move)
    if (list(state.history), _keys(state, game.num_players), state.render()) != before:
        raise _fail(
            game, seed, state, "clone independence", "stepping a clone changed the original"
        )


def _finish_randomly(state: State, rng: random.Random, max_steps: int) -> State:
    steps = 0
    while not state.is_terminal():
        _apply(state, _pick(state, state.current_players, rng.getrandbits(32)))
        steps += 1
        if steps > max_steps:
            raise ConformanceError(f"a playout from a sampled world ran past {max_steps} steps")
    return state


def _check_worlds(
    game: Game, seed: int, state: State, rng: random.Random, tally: _Tally, max_steps: int
) -> None:
    n = game.num_players
    for p in range(n):
        world = state.sample_world(p, rng)  # SamplingNotSupportedError propagates, named
        key, obs = state.information_set_key(p), state.observation(p)
        if world.information_set_key(p) != key:
            raise _fail(game, seed, state, "sample_world", f"changes player {p}'s information set")
        if world.observation(p) != obs:
            raise _fail(game, seed, state, "sample_world", f"changes player {p}'s observation")
        if world.current_players != state.current_players:
            raise _fail(game, seed, state, "sample_world", "changes who acts")
        if p in state.current_players and list(world.legal_actions(p)) != list(
            state.legal_actions(p)
        ):
            raise _fail(game, seed, state, "sample_world", f"changes player {p}'s legal actions")
        tally.sampled_worlds += 1
        others = [q for q in range(n) if q != p]
        if (
            any(world.information_set_key(q) != state.information_set_key(q) for q in others)
            or world.render() != state.render()
        ):
            tally.worlds_differing += 1
        _finish_randomly(world, rng, max_steps)
        if state.information_set_key(p) != key:
            raise _fail(game, seed, state, "sample_world", "playing the world changed the truth")


def _check_end(game: Game, seed: int, state: State) -> None:
    n = game.num_players
    returns = state.returns()
    if len(returns) != n or not all(math.isfinite(float(r)) for r in returns):
        raise _fail(game, seed, state, "returns", f"{returns!r} is not {n} finite floats")
    shares = state.win_shares()
    if len(shares) != n or abs(sum(shares) - 1.0) > 1e-9:
        raise _fail(game, seed, state, "win shares", f"{shares!r} do not sum to 1")
    if len(state.scores()) != n:
        raise _fail(game, seed, state, "scores", f"{state.scores()!r} has not {n} entries")
    if state.legal_actions(0):
        raise _fail(game, seed, state, "terminal", "legal actions after the end")
    try:
        state.apply_action(0)
    except IllegalActionError:
        pass
    else:
        raise _fail(game, seed, state, "terminal", "an action was accepted after the end")


def _check_replay(game: Game, seed: int, state: State, rng: random.Random) -> None:
    n = game.num_players
    history = list(state.history)
    again = game.replay(seed, history)
    if _keys(again, n) != _keys(state, n) or again.render() != state.render():
        raise _fail(game, seed, state, "replay", "replay from (seed, history) differs")
    if again.returns() != state.returns():
        raise _fail(game, seed, state, "replay", "replayed returns differ")
    cut = rng.randrange(len(history) + 1)
    prefix = game.replay(seed, history[:cut])
    for move in history[cut:]:
        _apply(prefix, move)
    if _keys(prefix, n) != _keys(state, n):
        raise _fail(
            game, seed, state, "replay", f"replaying a prefix of {cut} then the rest differs"
        )


def check_trajectory(
    game: Game,
    seed: int,
    choices: Sequence[int],
    *,
    sample_every: int = 4,
    max_steps: int = 100_000,
    tally: _Tally | None = None,
) -> State:
    """Play one game from ``seed``, picking ``choices[i] % len(options)`` at step ``i`` (random
    choices once the list runs out), and check every contract property along the way."""
    tally = tally if tally is not None else _Tally()
    rng = random.Random(seed * 7919 + len(choices))
    state = game.new_initial_state(seed)
    if game.new_initial_state(seed).render() != state.render():
        raise _fail(game, seed, state, "determinism", "new_initial_state(seed) differs twice")
    _check_seed_types(game, seed, state)
    step = 0
    while not state.is_terminal():
        if step > max_steps:
            raise _fail(game, seed, state, "termination", f"no end after {max_steps} steps")
        acting = _check_node(game, seed, state)
        tally.states += 1
        if acting != (CHANCE,):
            tally.decisions += 1
            if step % 3 == 0:
                _check_illegal(game, seed, state, rng, tally)
        if step % 7 == 1:
            _check_loose_types(game, seed, state)
        if game.spec.hidden_information and step % sample_every == 0:
            _check_worlds(game, seed, state, rng, tally, max_steps)
        choice = choices[step] if step < len(choices) else rng.getrandbits(32)
        move = _pick(state, acting, choice)
        if step % 5 == 0:
            _check_clone(game, seed, state, move)
        _apply(state, move)
        step += 1
    _check_end(game, seed, state)
    _check_replay(game, seed, state, rng)
    _check_history_types(game, seed, state)
    return state


def check_game(
    game: Game,
    *,
    playouts: int = 30,
    seed: int = 0,
    sample_every: int = 4,
    max_steps: int = 100_000,
) -> ConformanceReport:
    """Run the conformance checks on ``playouts`` random games; raise ConformanceError on failure.

    For hidden-information games, also require that sampled worlds differ from the truth somewhere
    (a ``sample_world`` that returns a copy would pass every other check and break ISMCTS).
    """
    if not game.spec.min_players <= game.num_players <= game.spec.max_players:
        raise ConformanceError(f"[{game.spec.name}] num_players outside its declared range")
    if game.spec.objective not in game.spec.objectives or game.spec.num_actions <= 0:
        raise ConformanceError(f"[{game.spec.name}] spec objective/num_actions inconsistent")
    tally = _Tally()
    lengths = []
    for i in range(playouts):
        final = check_trajectory(
            game, seed + i, (), sample_every=sample_every, max_steps=max_steps, tally=tally
        )
        lengths.append(len(final.history))
    if game.spec.hidden_information and tally.sampled_worlds and not tally.worlds_differing:
        raise ConformanceError(
            f"[{game.spec.name}] sample_world never changed hidden information in "
            f"{tally.sampled_worlds} samples: the sampler looks like a no-op"
        )
    return ConformanceReport(
        game=game.spec.name,
        playouts=playouts,
        states=tally.states,
        decisions=tally.decisions,
        illegal_refused=tally.illegal_refused,
        sampled_worlds=tally.sampled_worlds,
        worlds_differing=tally.worlds_differing,
        mean_length=sum(lengths) / max(1, len(lengths)),
    )


@dataclass(frozen=True)
class KernelReport:
    """What ``check_kernels`` compared (every comparison agreed if it returned)."""

    game: str  # spec name
    playouts: int  # games played to the end on both sides
    moves: int  # moves applied to both (chance outcomes included)
    information_sets: int  # distinct information sets seen, each under one key
    worlds: int  # determinizations compared
    rollouts: int  # random playouts compared
    encodings: int  # encoder rows compared (0: the game compiles no encoder)


class _KernelCheck:
    """One game's kernels against its rules (:func:`check_kernels`); ``fail`` names the check."""

    def __init__(self, game: Game, fast: FastGame) -> None:
        self.game, self.fast, self.ctx = game, fast, fast.ctx
        self.buf = np.zeros(max(fast.max_legal, 1), np.int64)
        encoder = game_plugin(game).hook("encoder") if fast.encode is not None else None
        self.encoder = encoder(game) if encoder is not None else None
        self.keys: dict[tuple[int, object], int] = {}  # (seat, Python key) -> kernel key
        self.owners: dict[tuple[int, int], object] = {}  # (seat, kernel key) -> Python key
        self.worlds = self.rollouts = self.encodings = 0

    def fail(self, seed: int, state: State, check: str, detail: str) -> ConformanceError:
        return _fail(self.game, seed, state, f"kernels: {check}", detail)

    def same_state(self, seed: int, state: State, packed: np.ndarray, what: str) -> None:
        expected = self.fast.pack(state)
        if expected.shape != packed.shape or not (expected == packed).all():
            raise self.fail(seed, state, what, f"kernel state {packed.tolist()} != pack "
                                               f"{expected.tolist()}")  # fmt: skip

    def node(self, seed: int, state: State, packed: np.ndarray) -> None:
        """Who acts, the legal moves and every seat's key at one position."""
        fast, ctx = self.fast, self.ctx
        acting = state.current_players
        want = OVER if not acting else CHANCE_NODE if acting == (CHANCE,) else acting[0]
        got = int(fast.current(ctx, packed))
        if got != want:
            raise self.fail(seed, state, "current", f"kernel says {got}, the rules {want}")
        for p in range(self.game.num_players):
            python, key = state.information_set_key(p), int(fast.info_key(ctx, packed, p))
            known, owner = (
                self.keys.setdefault((p, python), key),
                self.owners.setdefault((p, key), python),
            )
            if known != key or owner != python:
                raise self.fail(seed, state, "info_key", f"seat {p}: information sets and "
                                                         "kernel keys do not match one to one")  # fmt: skip
        if want < 0:
            return
        legal = list(state.legal_actions(want))
        n = int(fast.legal(ctx, packed, self.buf))
        if self.buf[:n].tolist() != legal:
            raise self.fail(seed, state, "legal", f"kernel {self.buf[:n].tolist()}, rules {legal}")

    def world(self, seed: int, state: State, packed: np.ndarray, player: int, draw: int) -> None:
        """``sample_world`` for ``player`` from one stream on both sides."""
        python = state.sample_world(player, stream := SplitMixRandom(draw))
        out, rs = np.zeros_like(packed), np.array([draw], np.uint64)
        self.fast.sample_world(self.ctx, packed, player, rs, out)
        self.same_state(seed, python, out, f"sample_world (seat {player}, stream {draw})")
        if int(rs[0]) != stream.state:
            raise self.fail(seed, state, "sample_world", "drew another count of random numbers")
        self.worlds += 1

    def rollout(self, seed: int, state: State, packed: np.ndarray, draw: int) -> None:
        """The ``random_rollout`` kernel against a uniform random playout of the rules."""
        entry = self.fast.rollouts.get("random_rollout")
        if entry is None:
            return
        rctx, kernel = entry
        sim, stream = state.clone(), SplitMixRandom(draw)
        while sim.current_players:
            acting = sim.current_players
            if acting == (CHANCE,):
                sim.apply_action(sample_chance(sim.chance_outcomes(), stream.random()))
            else:
                legal = sim.legal_actions(acting[0])
                sim.apply_action(legal[int(stream.random() * len(legal))])
        out, rs = np.zeros(self.game.num_players), np.array([draw], np.uint64)
        scratch = packed.copy()
        if not kernel(rctx, self.ctx, scratch, rs, out):
            raise self.fail(seed, state, "random_rollout", "the kernel could not play it")
        if (
            tuple(out.tolist()) != tuple(float(r) for r in sim.returns())
            or int(rs[0]) != stream.state
        ):
            raise self.fail(seed, state, "random_rollout", f"returns {out.tolist()} and stream "
                            f"{int(rs[0])}, the rules {sim.returns()} and {stream.state}")  # fmt: skip
        self.rollouts += 1

    def encoding(self, seed: int, state: State, packed: np.ndarray, player: int) -> None:
        """The compiled encoder against the plugin's encoder."""
        if self.encoder is None:
            return
        fast = self.fast
        n = int(fast.legal(self.ctx, packed, self.buf))
        obs = np.zeros(max(fast.obs_size, 1), np.float32)
        feats = np.zeros((max(fast.max_legal, 1), max(fast.feat_size, 1)), np.float32)
        fast.encode(fast.ectx, self.ctx, packed, player, self.buf, n, obs, feats)
        want_obs = self.encoder.encode_observation(state, player)
        want_feats = self.encoder.encode_actions(state, player, self.buf[:n].tolist())
        if not (np.array_equal(obs[: fast.obs_size], want_obs)
                and np.array_equal(feats[:n, : fast.feat_size], want_feats)):  # fmt: skip
            raise self.fail(
                seed, state, "encode", f"seat {player}'s inputs differ from the encoder's"
            )
        self.encodings += 1


def check_kernels(
    game: Game, fast: FastGame | None = None, *, playouts: int = 30, seed: int = 0
) -> KernelReport:
    """Check ``fast`` (default: the game's plugin hook ``fast_search``) against the game's rules
    on ``playouts`` random games (module docstring); raise ConformanceError on a difference.
    The kernels are called from Python here, numba-compiled or not."""
    if fast is None:
        hook = game_plugin(game).hook("fast_search")
        if hook is None:
            raise ConformanceError(f"[{game.spec.name}] has no compiled kernels (plugin hook "
                                   "fast_search)")  # fmt: skip
        fast, why = hook(game)
        if fast is None:
            raise ConformanceError(f"[{game.spec.name}] fast_search gives no kernels: {why}")
    check, moves = _KernelCheck(game, fast), 0
    for i in range(playouts):
        game_seed = seed + i
        rng, chance = random.Random(game_seed), SplitMixRandom(game_seed)
        state = game.new_initial_state(game_seed)
        packed = fast.pack(state)
        while True:
            check.node(game_seed, state, packed)
            acting = state.current_players
            if not acting:
                break
            draw = rng.getrandbits(63)
            if acting == (CHANCE,):
                if fast.chance is None:
                    raise check.fail(game_seed, state, "chance", "an explicit chance node, no "
                                                                  "chance kernel")  # fmt: skip
                rs = np.array([chance.state], np.uint64)
                state.apply_action(sample_chance(state.chance_outcomes(), chance.random()))
                fast.chance(check.ctx, packed, rs)
                if int(rs[0]) != chance.state:
                    raise check.fail(game_seed, state, "chance", "drew another count of numbers")
            else:
                player = acting[0]
                if game.spec.hidden_information:
                    check.world(game_seed, state, packed, player, draw)
                check.rollout(game_seed, state, packed, draw)
                check.encoding(game_seed, state, packed, player)
                action = rng.choice(state.legal_actions(player))
                state.apply_action(action)
                fast.apply(check.ctx, packed, action)
            moves += 1
            check.same_state(game_seed, state, packed, "apply")
        out = np.zeros(game.num_players)
        fast.returns(check.ctx, packed, out)
        if tuple(out.tolist()) != tuple(float(r) for r in state.returns()):
            raise check.fail(game_seed, state, "returns", f"kernel {out.tolist()}, rules "
                                                            f"{state.returns()}")  # fmt: skip
    return KernelReport(
        game=game.spec.name, playouts=playouts, moves=moves, information_sets=len(check.keys),
        worlds=check.worlds, rollouts=check.rollouts, encodings=check.encodings,
    )  # fmt: skip
