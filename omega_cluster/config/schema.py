"""The structured configuration of a training run: one dataclass per Hydra group.

``conf/config.yaml`` composes these groups (``game``, ``search``, ``model``, ``learner``,
``gate``, ``cluster``, ``tracking``, ``run``); :mod:`omega_cluster.config.load` registers
:class:`Settings` as the schema so that an unknown key or a value of the wrong type fails at
start, and :func:`omega_cluster.config.load.validate` checks the values (each error names the
key and the allowed values). The service layer turns the groups into the pure components' own
configs (``SelfPlayConfig``, ``LearnerConfig``, ``ModelConfig``, ``GateConfig`` and the workers'
configs) in :mod:`omega_cluster.wiring`.

Plain types only (str, int, float, bool, lists, dicts, ``None``): OmegaConf checks them, and
they log as MLflow params as they are. Comments give each field's meaning and allowed values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train.config import SelfPlayConfig

__all__ = [
    "SEARCH_KNOBS",
    "ClusterSettings",
    "GameSettings",
    "GateSettings",
    "LearnerSettings",
    "ModelSettings",
    "RunSettings",
    "SearchSettings",
    "Settings",
    "TrackingSettings",
]


@dataclass
class GameSettings:
    """Which game to train (any registered name, or ``openspiel:<name>``) and its parameters."""

    name: str = "mexican_train"
    params: dict[str, Any] = field(default_factory=dict)  # e.g. {players: 2, rounds: 1}
    # the mix of tables one network trains and is gated on (omega_cluster/games/fleet.py):
    # {player count: weight}, e.g. {2: 1, 3: 1, 4: 2, 6: 1, 8: 1}; empty: the table of params
    fleet: dict[int, float] = field(default_factory=dict)
    objectives: list[str] = field(default_factory=list)  # e.g. [points, go_out]; empty: params'


@dataclass
class SearchSettings:
    """The self-play search (ISMCTS or SM-MCTS, chosen by the game unless ``algorithm`` says).

    The fields of :data:`SEARCH_KNOBS` are the search's own knobs: they become one
    ``ISMCTSConfig``, which checks them (the checks are not repeated here or in self-play)."""

    algorithm: str = "auto"  # auto | ismcts | smmcts
    leaf: str = "random"  # network (the network leaf) | a rollout leaf: random, commander_rollout,
    # ... | network+<rollout leaf>: the network's prior, value mixed by network_value_weight
    rollouts: int = 1  # rollouts per leaf for the rollout leaves
    network_value_weight: float = 0.0  # network+<rollout>: weight of the network's value in [0, 1]
    # the defaults are the components' own (the search's ISMCTSConfig, self-play's
    # SelfPlayConfig), set there once; conf/search/default.yaml says what the presets change
    simulations: int = ISMCTSConfig.simulations  # full search budget per move
    fast_simulations: int = SelfPlayConfig.fast_simulations  # cheap search budget
    # (playout-cap randomisation)
    full_search_probability: float = SelfPlayConfig.full_search_probability  # share of moves
    # searched fully and recorded
    selection: str = ISMCTSConfig.selection  # uct | puct (puct reads the network prior:
    # leaf=network)
    c_uct: float = ISMCTSConfig.c_uct
    c_puct: float = ISMCTSConfig.c_puct
    temperature: float = SelfPlayConfig.temperature  # move temperature for the first
    # temperature_moves decisions
    temperature_moves: int = SelfPlayConfig.temperature_moves
    final_temperature: float = SelfPlayConfig.final_temperature
    dirichlet_alpha: float = ISMCTSConfig.dirichlet_alpha
    dirichlet_fraction: float = ISMCTSConfig.dirichlet_fraction  # root noise weight (needs
    # selection=puct)
    max_moves: int | None = SelfPlayConfig.max_moves  # abandon a game after this many decisions


SEARCH_KNOBS = (
    "simulations",
    "selection",
    "c_uct",
    "c_puct",
    "dirichlet_alpha",
    "dirichlet_fraction",
)
"""The :class:`SearchSettings` fields that are the full search's own knobs (``ISMCTSConfig``'s)."""


@dataclass
class ModelSettings:
    """Sizes of the action-conditioned policy/value network (``ModelConfig``)."""

    trunk: str = "mlp"  # mlp | transformer
    hidden_size: int = 128
    num_layers: int = 2
    action_embedding_size: int = 64
    policy_hidden_size: int = 64
    value_hidden_size: int = 64
    dropout: float = 0.0
    init_seed: int = 0  # torch seed of the first champion's random weights
    # heads that learn through the records' hidden state (training only): the belief head
    # predicts where each hidden item is (needs an encoder whose hidden state is "locations");
    # the critic is a perfect-information value that also reads it (needs a hidden state)
    belief_head: bool = False
    critic: bool = False


@dataclass
class LearnerSettings:
    """The learner (``LearnerConfig``) and how much it trains per new row."""

    mode: str = "alphazero"  # alphazero | actor_critic
    value_target: str = "final"  # final | round | search | mixed | critic (needs model.critic)
    lr: float = 1e-3
    weight_decay: float = 1e-4
    schedule: str = "constant"  # constant | cosine
    warmup_steps: int = 0
    batch_size: int = 256
    steps_per_candidate: int = 200  # learner steps between two candidates
    grad_clip: float | None = 1.0
    device: str = "auto"  # auto (CUDA, then MPS, then CPU) | cpu | cuda | cuda:<i> | mps
    threads: int | None = 1  # torch intra-op threads of the learner process
    window_rows: int = 100_000  # replay window: the most recent N rows
    min_rows: int = 256  # no training before the window holds this many rows
    max_samples_per_row: float = 8.0  # KataGo's cap: samples trained per new row seen (0 = off)
    # over a mix of tables (game.fleet): sample each table (slice) in proportion to its weight in
    # the mix, not to the rows it produced (no effect on a run of one table)
    balance_slices: bool = False
    # the first champion from a teacher (omega_cluster/train/warm_start.py): games of the game's
    # rule-based player labelled with its moves (0 = off: v0 is the fresh network), and steps
    warm_start_games: int = 0
    warm_start_steps: int = 1000


@dataclass
class GateSettings:
    """The gatekeeper: candidate vs champion bench games and the promotion rule (``GateConfig``)."""

    mode: str = "sprt"  # sprt | fixed (conf/gate/default.yaml: the design and its simulation)
    games_per_slice: int = 40  # fixed: games per slice before deciding
    margin: float = 0.0  # fixed: promote iff 2S - 1 > margin
    elo0: float = 0.0  # sprt: H0 "Elo gain <= elo0"
    elo1: float = 30.0  # sprt: H1 "Elo gain >= elo1"
    alpha: float = 0.025  # sprt: false-promotion rate at elo0
    beta: float = 0.1  # sprt: false-rejection rate at elo1
    min_games: int = 0  # sprt
    max_games: int | None = 1000  # sprt: reject an undecided test at this many games (all tables)
    slice_level: float = 0.95
    require_no_worse_slice: bool = True
    player: str = "network"  # how both sides play the bench: network (greedy policy) | search
    bench_simulations: int = ISMCTSConfig.simulations  # player=search: simulations per move
    paired: bool = True  # 2 players: a deal's seat-swapped games are a pair (N > 2: always)
    # the first decisions of every bench deal drawn at random, the same in both games of the
    # deal: a game without chance (connect four) between greedy networks would otherwise play
    # one game on every deal (0 = off: a game with chance varies by itself)
    opening_moves: int = 0
    chunk_games: int = 20  # games per bench task fanned out to the workers
    # the fixed anchors each champion is rated against: player spec -> its fixed Elo; empty: the
    # game's own ladder (its plugin's: Mexican Train's officers Ensign, Lieutenant, Commander at
    # 1000/1200/1400; other games random at 1000 and their heuristic at 1400). A value replaces
    # the mapping whole
    anchors: dict[str, float] = field(default_factory=dict)
    # games of each champion against each anchor, per objective of the fleet and per player
    # (the network alone, the network in the search): 4 x anchor_games x anchors per champion
    # with two objectives (0 = off, the schema's default: the run presets set it)
    anchor_games: int = 0
    # the network alone's games per anchor (null: anchor_games): a move is one forward pass, so
    # it can afford the games that narrow the headline rating's interval
    anchor_network_games: int | None = None


@dataclass
class ClusterSettings:
    """Where and how the actors run."""

    backend: str = "ray"  # ray | local (everything in this process, no Ray)
    address: str | None = None  # None: embedded Ray started in-process; "auto" or host:port
    num_cpus: int | None = None  # CPUs of the embedded Ray (None: all of this machine's)
    self_play_actors: int = 1
    bench_workers: int = 1
    learner_gpus: float | None = None  # None: 1 if the cluster has a GPU, else 0
    mode: str = "sync"  # sync (collect -> train -> gate per iteration) | async
    games_per_chunk: int = 16  # games an actor plays between weight pulls (one shard each)
    concurrent_games: int = 8  # games in flight per actor (their leaves share batches)
    max_policy_lag: int = (
        1  # async: an actor refreshes when the champion is this many versions ahead
    )
    max_rows_ahead: int = 20_000  # async back-pressure: rows self-play may be ahead of training
    max_restarts: int = 3  # Ray restarts of a crashed self-play actor or bench worker
    torch_threads: int = 1  # torch intra-op threads per self-play actor, bench worker, gatekeeper
    dashboard: bool = False  # embedded Ray: start the dashboard (127.0.0.1:8265)
    dashboard_host: str = "127.0.0.1"


@dataclass
class TrackingSettings:
    """MLflow tracking: one MLflow run per training run."""

    enabled: bool = True
    uri: str | None = None  # None: sqlite store in the run directory
    experiment: str = "omega_cluster"
    model_name: str | None = None  # registered model name (None: omega-<game>)
    flush_every_s: float = 5.0  # metric batches sent at most this often
    log_onnx: bool = True  # export and log each champion as ONNX


@dataclass
class RunSettings:
    """The run as a whole: where it writes, its seed, how long it goes."""

    name: str = "default"  # the preset's name (run=smoke | run=default)
    dir: str | None = None  # run directory (None: runs/<game>-<time>)
    seed: int = 0  # every actor's seed derives from it
    iterations: int = 10  # gate decisions before the run stops
    games_per_iteration: int = 64  # sync mode: self-play games per iteration (all actors)
    max_minutes: float | None = None  # stop after this long (whatever the iteration count)
    resume: str | None = None  # a run directory or MLflow run id to continue
    shard_store: str | None = (
        None  # shard store URI (s3://bucket/run, file://...; None: <dir>/shards)
    )
    progress: bool = True  # live rich display


@dataclass
class Settings:
    """A whole run's configuration (the composed Hydra config)."""

    game: GameSettings = field(default_factory=GameSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    learner: LearnerSettings = field(default_factory=LearnerSettings)
    gate: GateSettings = field(default_factory=GateSettings)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    tracking: TrackingSettings = field(default_factory=TrackingSettings)
    run: RunSettings = field(default_factory=RunSettings)
