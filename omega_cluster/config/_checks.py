"""Value checks of a :class:`~omega_cluster.config.schema.Settings` (``validate``).

OmegaConf already checked the keys and the types of a composed config; these checks see the
values. Each value is checked once, where it is declared: a value that a component's config owns
is checked by that config, built here from the settings (``ISMCTSConfig``: the search knobs;
``SelfPlayConfig``: self-play's part of ``search.*`` and ``cluster.concurrent_games``;
``ModelConfig``: the sizes of ``model.*``; ``LearnerConfig``: ``learner.*`` but the replay window
and the warm start; ``GateConfig``: the promotion rule of ``gate.*``), its error reported under
the settings key (:class:`~omega_cluster.fields.FieldError`, one wording for both). What only the
settings have is checked here: the game and its parameters, the search leaf (parsed by
:func:`omega_cluster.players.leaf_spec.parse_leaf`), counts and flags of the cluster, tracking
and run, and the rules across sections (``selection=puct`` needs a network leaf,
``min_rows <= window_rows``, no Ray address with the local backend, a critic for
``value_target=critic``). The game is built once to check ``game.params``, the search leaf, the
model's hidden-state heads and the gate's anchor players against it. Ray resources are not
checked here: the driver may run without the cluster's CPUs or GPUs, so the cluster layer
compares actors with the cluster once Ray is up (likewise ``learner.device``: its name only).

Every problem is collected (not only the first) and raised as one :class:`ConfigError` whose lines
name the full key, the bad value and what is allowed. The checks are the components' own, so this
package sits above training and evaluation (it builds their configs to check them, and keeps
none) and below the service layer, which alone turns settings into components
(:mod:`omega_cluster.wiring`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from omega_cluster.config.errors import ConfigError
from omega_cluster.config.schema import (
    SEARCH_KNOBS,
    ClusterSettings,
    GameSettings,
    GateSettings,
    LearnerSettings,
    ModelSettings,
    RunSettings,
    SearchSettings,
    Settings,
    TrackingSettings,
)
from omega_cluster.data.schema import min_row_bytes
from omega_cluster.eval.gate import GateConfig
from omega_cluster.fields import (
    FieldError,
    budget_problem,
    choice_problem,
    flag_problem,
    int_problem,
    number_problem,
)
from omega_cluster.games.api import Game, GameError
from omega_cluster.games.encoding import EncoderError
from omega_cluster.games.fleet import FleetError, fleet_for
from omega_cluster.games.registry import (
    available_games,
    game_class,
    game_plugin,
    is_import_path,
    make_game,
)
from omega_cluster.model.encoders import encoder_for
from omega_cluster.model.network import ModelConfig
from omega_cluster.players.leaf_spec import (
    BLEND,
    CRITIC,
    NETWORK,
    ROLLOUT,
    LeafSpec,
    LeafSpecError,
    parse_leaf,
)
from omega_cluster.players.registry import PlayerSpecError, make_player
from omega_cluster.players.search import ALGORITHMS, rollout_policy
from omega_cluster.search.ismcts import ISMCTSConfig, simulation_bytes
from omega_cluster.train._tables import table_games
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig

__all__ = ["validate"]

GATE_PLAYERS = ("network", "search")
_ANY_GAME_ANCHORS = "gate.anchors={random:1000,heuristic:1400}"  # any game with a heuristic
BACKENDS = ("ray", "local")
CLUSTER_MODES = ("sync", "async")


class _Problems:
    """Collects one line per problem; each check returns whether the value passed."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, key: str, text: str) -> None:
        self.lines.append(f"{key}{text}")

    def _check(self, key: str, value: Any, problem: str | None) -> bool:
        if problem is not None:
            self.add(key, f"={value!r} {problem}")
        return problem is None

    def choice(self, key: str, value: Any, allowed: Sequence[str]) -> bool:
        return self._check(key, value, choice_problem(value, allowed))

    def integer(
        self, key: str, value: Any, minimum: int | None = None, *, optional: bool = False
    ) -> bool:
        return self._check(key, value, int_problem(value, minimum, optional=optional))

    def number(
        self,
        key: str,
        value: Any,
        low: float = -math.inf,
        high: float = math.inf,
        *,
        open_low: bool = False,
        open_high: bool = False,
        optional: bool = False,
    ) -> bool:
        problem = number_problem(value, low, high, open_low=open_low, open_high=open_high,
                                 optional=optional)  # fmt: skip
        return self._check(key, value, problem)

    def budget(self, key: str, value: Any, cost: Callable[[int], int], what: str) -> bool:
        """A budget that must fit in memory: ``cost(value)`` bytes (:func:`budget_problem`)."""
        return self._check(key, value, budget_problem(value, cost, what))

    def text(self, key: str, value: Any, *, optional: bool = False) -> bool:
        if (optional and value is None) or (isinstance(value, str) and value.strip()):
            return True
        self.add(key, f"={value!r} must be a non-empty string{' or null' if optional else ''}")
        return False

    def flag(self, key: str, value: Any) -> bool:
        return self._check(key, value, flag_problem(value))

    def built(
        self,
        config: Callable[..., object],
        section: str,
        values: Mapping[str, Any],
        renames: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether a component's config built from settings ``values`` (its field -> the value
        of key ``<section>.<field>``, or ``<section>.<renames[field]>``) accepts them: the
        component checks its own fields, and each :class:`FieldError` is reported under the
        settings key. A refused field (all the fields of a rule across fields) is left at the
        component's default and the config built again, so every bad value is reported (a rule
        naming a field left so is not: it would judge the default, not the user's value)."""
        names = renames or {}

        def key(field: str) -> str:
            return f"{section}.{names.get(field, field)}"

        kwargs, left = dict(values), set[str]()
        while True:
            try:
                config(**kwargs)
            except FieldError as err:
                if err.field is None or err.field not in kwargs:  # not a settings value's
                    self.add(section, f": {err}")
                    return False
                if not left & set(err.others):
                    self.lines.append(err.describe(key))
                for field in (err.field, *err.others):  # a rule's fields all left at default
                    kwargs.pop(field, None)
                    left.add(field)
                continue
            return not left


_SECTIONS: dict[str, type] = {
    "game": GameSettings,
    "search": SearchSettings,
    "model": ModelSettings,
    "learner": LearnerSettings,
    "gate": GateSettings,
    "cluster": ClusterSettings,
    "tracking": TrackingSettings,
    "run": RunSettings,
}


def validate(settings: Settings) -> Settings:
    """Check every value of ``settings``; return it unchanged or raise :class:`ConfigError`
    listing every problem (full key, value, allowed values)."""
    if not isinstance(settings, Settings):
        raise ConfigError(f"expected a Settings instance, got {type(settings).__name__}")
    p = _Problems()
    for name, kind in _SECTIONS.items():
        if not isinstance(getattr(settings, name), kind):
            p.add(name, f" must be a {kind.__name__}, got {type(getattr(settings, name)).__name__}")
    if p.lines:
        raise ConfigError(p.lines)
    game = _check_game(p, settings.game)
    leaf, searches = _check_search(p, settings.search, game)
    _check_model(p, settings.model, game)
    _check_learner(p, settings.learner, game)
    if settings.learner.value_target == "critic" and settings.model.critic is not True:
        p.add(
            "learner.value_target",
            "=critic regresses the value head on the perfect-information critic's values; "
            "set model.critic=true",
        )
    _check_gate(p, settings.gate, game)
    _check_cluster(p, settings.cluster, searches)
    _check_tracking(p, settings.tracking)
    _check_run(p, settings.run)
    _check_critic_leaf(p, settings, leaf)
    if p.lines:
        raise ConfigError(p.lines)
    return settings


def _check_game(p: _Problems, g: GameSettings) -> Game | None:
    """The game built from ``game.name`` and ``game.params`` (None when it cannot be built)."""
    if not p.text("game.name", g.name):
        return None
    known = available_games()
    if g.name not in known and ":" not in g.name:
        allowed = ", ".join(known)
        p.add(
            "game.name",
            f"={g.name!r} is not a registered game; allowed: {allowed}, openspiel:<name>, "
            "<module>:<Class>",
        )
        return None
    if is_import_path(g.name):  # a user's game: the module must import and name a Game
        try:
            game_class(g.name)
        except GameError as err:
            p.add("game.name", f"={g.name!r}: {err}")
            return None
    if not isinstance(g.params, Mapping) or not all(isinstance(k, str) for k in g.params):
        p.add("game.params", f"={g.params!r} must map parameter names to values")
        return None
    params = dict(g.params)
    try:
        game = make_game(g.name, **params)
    except (GameError, ValueError, ImportError) as err:
        p.add("game.params", f"={params!r} are not accepted by game {g.name!r}: {err}")
        return None
    try:  # every table of the mix, and one network layout for all of them
        table_games(fleet_for(g.name, params, g.fleet, g.objectives), like=game)
    except FleetError as err:
        key = "game.objectives" if str(err).startswith("game.objectives") else "game.fleet"
        text = str(err).removeprefix(f"{key}: ")
        p.add(key, f"={getattr(g, key.split('.')[1])!r}: {text}")
    return game


def _check_search(
    p: _Problems, s: SearchSettings, game: Game | None
) -> tuple[LeafSpec | None, dict[str, Any]]:
    """The search section; returns its leaf (None when ``search.leaf`` is not one) and, when
    they passed, self-play's searches (``SelfPlayConfig``'s ``search`` and ``fast_simulations``:
    ``cluster.concurrent_games`` runs that many of them at once; else none)."""
    p.choice("search.algorithm", s.algorithm, ALGORITHMS)
    leaf = _check_leaf(p, s.leaf)
    search = _check_search_knobs(p, s)
    knobs_ok = search is not None
    p.integer("search.rollouts", s.rollouts, 1)
    selfplay = {name: getattr(s, name) for name in _SELFPLAY_KNOBS}
    # one game's searches here (the games in flight are cluster.concurrent_games')
    selfplay_ok = p.built(SelfPlayConfig, "search", {**selfplay, "concurrent_games": 1})
    searches: dict[str, Any] = {}
    if search is not None and selfplay_ok:
        searches = {"search": search, "fast_simulations": s.fast_simulations}
    p.number("search.network_value_weight", s.network_value_weight, 0.0, 1.0)
    if knobs_ok and leaf is not None and s.selection == "puct" and not leaf.uses_network:
        p.add(
            "search.selection",
            f"=puct reads the network's prior and needs search.leaf={NETWORK} or "
            f"{NETWORK}+<rollout leaf>, got {s.leaf!r}",
        )
    if game is None:
        return leaf, searches
    if s.algorithm == "ismcts" and game.spec.simultaneous:
        p.add(
            "search.algorithm",
            f"=ismcts searches turn-based games and {game.spec.name} has simultaneous moves; "
            "allowed: auto, smmcts",
        )
    if leaf is not None and leaf.rollout is not None:
        _check_rollout(p, s.leaf, leaf.rollout, game)
    return leaf, searches


def _check_search_knobs(p: _Problems, s: SearchSettings) -> ISMCTSConfig | None:
    """The search's own knobs (:data:`SEARCH_KNOBS`), checked where they are declared: by
    ``ISMCTSConfig`` itself (returned; None when refused); its error is reported under the key
    it names."""
    try:
        return ISMCTSConfig(**{name: getattr(s, name) for name in SEARCH_KNOBS})
    except FieldError as err:  # worded by field: under its key
        if err.field not in SEARCH_KNOBS:
            raise
        p.lines.append(err.describe(lambda name: f"search.{name}"))
        return None
    except (ValueError, TypeError) as err:
        text = str(err)
        named = [(text.find(name), name) for name in SEARCH_KNOBS if name in text]
        key = min(named)[1] if named else SEARCH_KNOBS[0]
        p.add(f"search.{key}", f"={getattr(s, key)!r}: {text}")
        return None


_SELFPLAY_KNOBS = ("fast_simulations", "full_search_probability", "temperature",
                   "final_temperature", "temperature_moves", "max_moves")  # fmt: skip
"""The :class:`SearchSettings` fields that are self-play's own (``SelfPlayConfig``'s)."""

_SEARCH_LEAVES = (NETWORK, CRITIC, ROLLOUT, BLEND)  # the table leaves are the players' only
_SEARCH_FORMS = "network, random, random_rollout, <player>_rollout, critic"


def _check_leaf(p: _Problems, text: Any) -> LeafSpec | None:
    """``search.leaf`` parsed by :func:`parse_leaf` (None, and a problem, when it is not a
    self-play leaf)."""
    try:
        leaf = parse_leaf(text)
    except LeafSpecError:
        leaf = None
    if leaf is not None and leaf.kind in _SEARCH_LEAVES:
        return leaf
    p.add(
        "search.leaf",
        f"={text!r} is not allowed; allowed: {_SEARCH_FORMS}, or {NETWORK}+<one of the rollout "
        "leaves>",
    )
    return None


def _check_critic_leaf(p: _Problems, settings: Settings, leaf: LeafSpec | None) -> None:
    """``search.leaf=critic`` reads the model's perfect-information critic on each sampled
    world: the model must have one (``model.critic``'s own check asks the game for a hidden
    state)."""
    critic = leaf is not None and leaf.kind == CRITIC
    if critic and getattr(settings.model, "critic", False) is not True:
        p.add("search.leaf", "='critic' reads the model's critic; set model.critic=true")


def _check_rollout(p: _Problems, text: str, policy: str, game: Game) -> None:
    """The rollout leaf must have a policy for the game (Commander plays only Mexican Train)."""
    try:
        rollout_policy(game, policy)
    except PlayerSpecError as err:
        p.add("search.leaf", f"={text!r} cannot play {game.spec.name}: {err}")


def _check_model(p: _Problems, m: ModelSettings, game: Game | None) -> None:
    sizes = ("trunk", "hidden_size", "num_layers", "action_embedding_size", "policy_hidden_size",
             "value_hidden_size", "dropout")  # fmt: skip
    p.built(ModelConfig, "model", {name: getattr(m, name) for name in sizes})
    p.integer("model.init_seed", m.init_seed, 0)
    belief = p.flag("model.belief_head", m.belief_head) and m.belief_head
    critic = p.flag("model.critic", m.critic) and m.critic
    if game is None or not (belief or critic):
        return
    try:
        hidden = encoder_for(game).info().hidden
    except EncoderError:  # the game's encoder problem is reported where the run builds it
        return
    name = game.spec.name
    if belief and (hidden is None or hidden.kind != "locations"):
        what = "declares no hidden state" if hidden is None else f"has a {hidden.kind!r} one"
        p.add(
            "model.belief_head",
            f"=true predicts where each hidden item is and needs an encoder whose hidden state "
            f"is 'locations'; {name}'s encoder {what}: set it to false",
        )
    if critic and hidden is None:
        p.add(
            "model.critic",
            f"=true reads the records' hidden state and {name}'s encoder declares none: "
            "set it to false",
        )


def _check_learner(p: _Problems, le: LearnerSettings, game: Game | None) -> None:
    # the device's name only: the driver may have no GPU while the cluster does
    fields = ("mode", "value_target", "lr", "weight_decay", "schedule", "warmup_steps",
              "batch_size", "grad_clip", "device", "threads")  # fmt: skip
    values = {name: getattr(le, name) for name in fields}
    values["steps_per_call"] = le.steps_per_candidate
    p.built(LearnerConfig, "learner", values, {"steps_per_call": "steps_per_candidate"})
    row = min_row_bytes()
    window_ok = p.integer("learner.window_rows", le.window_rows, 1) and p.budget(
        "learner.window_rows", le.window_rows, lambda rows: rows * row,
        f"the replay window's rows (>= {row} B each)",
    )  # fmt: skip
    if p.integer("learner.min_rows", le.min_rows, 1) and window_ok and le.min_rows > le.window_rows:
        p.add(
            "learner.min_rows",
            f"={le.min_rows} must be <= learner.window_rows={le.window_rows} "
            "(the window never holds more rows, so training would never start)",
        )
    p.number("learner.max_samples_per_row", le.max_samples_per_row, 0.0)
    p.flag("learner.balance_slices", le.balance_slices)
    p.integer("learner.warm_start_steps", le.warm_start_steps, 1)
    games_ok = p.integer("learner.warm_start_games", le.warm_start_games, 0)
    if games_ok and le.warm_start_games and game is not None:  # the teacher: game's heuristic
        try:
            make_player("heuristic", game)
        except (PlayerSpecError, ValueError) as err:
            p.add(
                "learner.warm_start_games",
                f"={le.warm_start_games} needs the game's rule-based player (heuristic) as "
                f"teacher; {game.spec.name} has none ({err}); set it to 0",
            )


def _check_gate(p: _Problems, g: GateSettings, game: Game | None) -> None:
    rule = ("mode", "games_per_slice", "margin", "elo0", "elo1", "alpha", "beta", "min_games",
            "max_games", "slice_level")  # fmt: skip
    p.built(GateConfig, "gate", {name: getattr(g, name) for name in rule})
    p.flag("gate.require_no_worse_slice", g.require_no_worse_slice)
    p.choice("gate.player", g.player, GATE_PLAYERS)
    if p.integer("gate.bench_simulations", g.bench_simulations, 1):
        p.budget("gate.bench_simulations", g.bench_simulations, simulation_bytes,
                 "the search tree")  # fmt: skip
    p.integer("gate.chunk_games", g.chunk_games, 1)
    p.flag("gate.paired", g.paired)
    p.integer("gate.opening_moves", g.opening_moves, 0)
    p.integer("gate.anchor_games", g.anchor_games, 0)
    p.integer("gate.anchor_network_games", g.anchor_network_games, 0, optional=True)
    if not isinstance(g.anchors, Mapping):
        p.add("gate.anchors", f"={g.anchors!r} must map player specs to Elo: {_ANY_GAME_ANCHORS}")
    elif g.anchors or game is None:
        _check_anchors(p, g.anchors, game)
    else:  # the game's own ladder
        _check_anchors(p, game_plugin(game).rating_anchors(), game)


def _check_anchors(p: _Problems, anchors: Mapping[Any, Any], game: Game | None) -> None:
    for spec, rating in anchors.items():
        key = f"gate.anchors.{spec}"
        if not p.text(key, spec):
            continue
        p.number(key, rating)  # its fixed Elo
        if game is None:
            continue
        try:
            make_player(spec, game)
        except (PlayerSpecError, ValueError, OSError) as err:
            officer = spec in ("lieutenant", "commander")  # the default run's: Mexican Train's
            p.add(key, f": not a player for {game.spec.name}: {err}"
                  + (f"; another game: {_ANY_GAME_ANCHORS}" if officer else ""))  # fmt: skip


def _check_cluster(p: _Problems, c: ClusterSettings, searches: Mapping[str, Any]) -> None:
    """``searches``: self-play's checked searches (:func:`_check_search`), which
    ``cluster.concurrent_games`` runs at once (none: the defaults')."""
    backend_ok = p.choice("cluster.backend", c.backend, BACKENDS)
    address_ok = p.text("cluster.address", c.address, optional=True)
    if backend_ok and address_ok and c.backend == "local" and c.address is not None:
        p.add(
            "cluster.address",
            f"={c.address!r} needs cluster.backend=ray (backend=local runs without Ray)",
        )
    p.integer("cluster.num_cpus", c.num_cpus, 1, optional=True)
    # self-play actors produce every training row: a run without one could never train
    p.integer("cluster.self_play_actors", c.self_play_actors, 1)
    p.integer("cluster.bench_workers", c.bench_workers, 0)
    p.number("cluster.learner_gpus", c.learner_gpus, 0.0, optional=True)
    p.choice("cluster.mode", c.mode, CLUSTER_MODES)
    p.integer("cluster.games_per_chunk", c.games_per_chunk, 1)
    p.built(SelfPlayConfig, "cluster", {"concurrent_games": c.concurrent_games, **searches})
    for name in ("max_rows_ahead", "torch_threads"):
        p.integer(f"cluster.{name}", getattr(c, name), 1)
    p.integer("cluster.max_policy_lag", c.max_policy_lag, 0)
    p.integer("cluster.max_restarts", c.max_restarts, -1)  # Ray: -1 restarts forever
    p.flag("cluster.dashboard", c.dashboard)
    p.text("cluster.dashboard_host", c.dashboard_host)


def _check_tracking(p: _Problems, t: TrackingSettings) -> None:
    p.flag("tracking.enabled", t.enabled)
    p.text("tracking.uri", t.uri, optional=True)
    p.text("tracking.experiment", t.experiment)
    p.text("tracking.model_name", t.model_name, optional=True)
    p.number("tracking.flush_every_s", t.flush_every_s, 0.0, open_low=True)
    p.flag("tracking.log_onnx", t.log_onnx)


def _check_run(p: _Problems, r: RunSettings) -> None:
    p.text("run.name", r.name)
    p.text("run.dir", r.dir, optional=True)
    p.integer("run.seed", r.seed, 0)
    p.integer("run.iterations", r.iterations, 1)
    p.integer("run.games_per_iteration", r.games_per_iteration, 1)
    p.number("run.max_minutes", r.max_minutes, 0.0, open_low=True, optional=True)
    p.text("run.resume", r.resume, optional=True)
    p.text("run.shard_store", r.shard_store, optional=True)
    p.flag("run.progress", r.progress)
