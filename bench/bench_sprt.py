"""Operating characteristics of the gate's SPRT on simulated result streams.

For each result model — Bernoulli (win/loss), trinomial (30% draws, as a head-to-head reduction of
multi-player tables gives when a third seat wins) and pentanomial (seat-swapped game pairs on one
deal, whose deal favours one seat by ±0.15 in win rate, 30% draws) — and each design (elo0 = 0,
elo1 = 40, alpha = beta = 0.05 as fishtest and Leela Zero, and alpha = beta = 0.01), 2,000
independent SPRTs run on streams whose true Elo is elo0, the midpoint and elo1.

Printed per row: the share accepting H1 (the false-positive rate at elo0, the power at elo1)
against its nominal value with the tolerance (3 binomial standard errors over the runs: a correct
test lands outside it with probability 0.3%), the mean games to a decision, the games a fixed-size
one-sided z test with the same alpha and beta needs (normal approximation, per-model variance),
and their ratio — the reference measured in the same run. Wald's theory puts that ratio at 0.49
(alpha = beta = 0.05) and 0.42 (0.01) at the hypotheses before overshoot; between them the SPRT is
at its slowest (about 0.8–1.0×). The LLR is evaluated after every game (every pair).

Then the gate's own question (:func:`gate_rows`): how often does a gate promote a candidate of
true Elo 0 (a false promotion), +20 and +35, on the pentanomial stream — (a) the old default,
fixed 40 games = 20 seat-swapped pairs, promote iff the score beats 0.5 (margin 0), against (b)
the new default, the pentanomial SPRT of ``conf/gate/default.yaml`` (the LLR checked every 10
pairs, as after a round of 20 games; an undecided test rejected at ``max_games``). These rows are
recorded in ``docs/results/bench_sprt.json`` (``python -m bench.results`` renders them).

``--quick`` runs 300 tests per row, one design, and records nothing.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from bench.results import Figure, record
from omega_cluster.eval.gate import GateConfig
from omega_cluster.eval.sprt import SPRT, fixed_sample_size, simulate_fixed, simulate_sprt
from omega_cluster.eval.stats import score_from_elo, wilson_interval

ELO0, ELO1 = 0.0, 40.0
DRAWS = 0.3  # draw rate of the trinomial and pentanomial streams
SEAT_BIAS = 0.15  # how much one deal favours a seat, in win rate (pentanomial streams)


def trinomial_pdf(elo: float, draws: float, bias: float = 0.0) -> np.ndarray:
    """(loss, draw, win) probabilities with expected score L(elo) + bias and a fixed draw rate."""
    s = score_from_elo(elo) + bias
    pdf = np.array([1.0 - s - draws / 2.0, draws, s - draws / 2.0])
    if np.any(pdf < 0):
        raise ValueError(f"no trinomial with score {s:.3f} and draw rate {draws}")
    return pdf


def pentanomial_pdf(elo: float, draws: float, seat_bias: float) -> np.ndarray:
    """Pair-score probabilities (0, 0.5, …, 2): the same deal played from both seats, the deal
    favouring the candidate's first seat by ``seat_bias`` and its second by ``-seat_bias``
    (the sign of the bias is symmetric, so the pair's distribution is one convolution)."""
    return np.convolve(trinomial_pdf(elo, draws, seat_bias), trinomial_pdf(elo, draws, -seat_bias))


MODELS: dict[str, tuple[str, int]] = {  # name -> (SPRT model, games per sample)
    "bernoulli": ("trinomial", 1),
    "trinomial": ("trinomial", 1),
    "pentanomial": ("pentanomial", 2),
}


def model_pdf(name: str, elo: float) -> np.ndarray:
    if name == "bernoulli":
        return trinomial_pdf(elo, 0.0)
    if name == "trinomial":
        return trinomial_pdf(elo, DRAWS)
    return pentanomial_pdf(elo, DRAWS, SEAT_BIAS)


@dataclass(frozen=True)
class Row:
    """One simulated design at one true Elo."""

    model: str
    alpha: float  # = beta
    true_elo: float
    runs: int
    accept_h1: float  # share of runs accepting H1
    nominal: float | None  # alpha at elo0, 1 - beta at elo1, None in between
    tolerance: float  # 3 binomial standard errors of the share at its nominal value
    mean_games: float
    fixed_games: float  # fixed-size test with the same alpha and beta
    undecided: float

    @property
    def ratio(self) -> float:
        return self.mean_games / self.fixed_games

    @property
    def within(self) -> bool:
        return self.nominal is None or abs(self.accept_h1 - self.nominal) <= self.tolerance


def run_design(
    model: str, alpha: float, *, runs: int, seed: int, check_every: int = 1
) -> list[Row]:
    """Simulate one design at elo0, the midpoint and elo1."""
    sprt_model, games_per_sample = MODELS[model]
    sprt = SPRT(ELO0, ELO1, alpha, alpha, model=sprt_model)
    fixed = games_per_sample * fixed_sample_size(
        model_pdf(model, ELO0), model_pdf(model, ELO1), alpha, alpha
    )
    rows = []
    for i, (elo, nominal) in enumerate(
        ((ELO0, alpha), ((ELO0 + ELO1) / 2.0, None), (ELO1, 1.0 - alpha))
    ):
        sim = simulate_sprt(
            sprt, model_pdf(model, elo), runs=runs, rng=seed + i, check_every=check_every
        )
        p = alpha if nominal is None else min(nominal, 1.0 - nominal)
        rows.append(
            Row(
                model=model,
                alpha=alpha,
                true_elo=elo,
                runs=runs,
                accept_h1=sim.accept_h1,
                nominal=nominal,
                tolerance=3.0 * math.sqrt(p * (1.0 - p) / runs),
                mean_games=games_per_sample * sim.mean_samples,
                fixed_games=fixed,
                undecided=sim.undecided,
            )
        )
    return rows


def format_rows(rows: list[Row]) -> str:
    head = (
        f"{'model':<12}{'a=b':>6}{'Elo':>6}{'P(H1)':>8}{'nominal':>14}{'ok':>4}"
        f"{'games':>9}{'fixed-N':>9}{'ratio':>7}{'undec.':>8}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        nominal = "-" if r.nominal is None else f"{r.nominal:.3f}±{r.tolerance:.3f}"
        lines.append(
            f"{r.model:<12}{r.alpha:>6.2f}{r.true_elo:>6.0f}{r.accept_h1:>8.3f}{nominal:>14}"
            f"{'y' if r.within else 'N':>4}{r.mean_games:>9.0f}{r.fixed_games:>9.0f}"
            f"{r.ratio:>7.2f}{r.undecided:>8.3f}"
        )
    return "\n".join(lines)


OLD_GATE_GAMES = 40  # the old default gate: fixed 40 games (20 seat-swapped pairs), margin 0
GATE_ELOS = (0.0, 20.0, 35.0)
CHECK_PAIRS = 10  # the gate checks after each round: 20 games = 10 pairs


@dataclass(frozen=True)
class GateRow:
    """One gate design's promotion rate at one true Elo."""

    design: str
    true_elo: float
    runs: int
    promoted: float  # share of runs that promote
    mean_games: float


def gate_rows(*, runs: int, seed: int, config: GateConfig | None = None) -> list[GateRow]:
    """Promotion rates of the old fixed gate and of the SPRT ``config`` (default: the gate's
    defaults) at each of :data:`GATE_ELOS`, on the pentanomial stream."""
    g = config or GateConfig()
    sprt = SPRT(g.elo0, g.elo1, g.alpha, g.beta, model="pentanomial")
    max_pairs = (g.max_games or 100_000) // 2
    new = f"SPRT elo0={g.elo0:g} elo1={g.elo1:g} a={g.alpha:g} b={g.beta:g} max {2 * max_pairs}"
    rows = []
    for i, elo in enumerate(GATE_ELOS):
        pdf = model_pdf("pentanomial", elo)
        fixed = simulate_fixed(pdf, samples=OLD_GATE_GAMES // 2, margin=0.0, runs=runs,
                               rng=seed + i)  # fmt: skip
        rows.append(GateRow(f"fixed {OLD_GATE_GAMES} games, margin 0", elo, runs, fixed,
                            float(OLD_GATE_GAMES)))  # fmt: skip
        chunk = CHECK_PAIRS * math.ceil(max_pairs / CHECK_PAIRS)
        sim = simulate_sprt(sprt, pdf, runs=runs, rng=seed + 100 + i, max_samples=max_pairs,
                            check_every=CHECK_PAIRS, chunk=chunk)  # fmt: skip
        rows.append(GateRow(new, elo, runs, sim.accept_h1, 2.0 * sim.mean_samples))
    return rows


def format_gate_rows(rows: list[GateRow]) -> str:
    head = f"{'gate':<44}{'Elo':>6}{'P(promote) [95%]':>22}{'games':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        ci = wilson_interval(r.promoted * r.runs, r.runs)
        share = f"{r.promoted:.3f} [{ci.low:.3f}, {ci.high:.3f}]"
        lines.append(f"{r.design:<44}{r.true_elo:>+6.0f}{share:>22}{r.mean_games:>8.0f}")
    return "\n".join(lines)


def gate_figures(rows: list[GateRow]) -> list[Figure]:
    """The rows as results-table figures: one per design and true Elo."""
    out = []
    for r in rows:
        ci = wilson_interval(r.promoted * r.runs, r.runs)
        what = "false promotions" if r.true_elo == 0 else "promotions"
        out.append(Figure(
            name=f"gate {what} at true Elo {r.true_elo:+.0f}: {r.design}",
            figure=f"{100 * r.promoted:.1f}% [{100 * ci.low:.1f}, {100 * ci.high:.1f}] of "
                   f"{r.runs:,} simulated gates, {r.mean_games:.0f} games on average",
            reference="pentanomial stream (30% draws, seat bias 0.15)",
            ratio=f"bar <= 5%: {'met' if r.promoted <= 0.05 else 'not met'}" if r.true_elo == 0
            else "",
            command="python -m bench.bench_sprt",
            table="strength",
        ))  # fmt: skip
    return out


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    runs = 300 if quick else 2000
    alphas = (0.05,) if quick else (0.05, 0.01)
    print(f"SPRT elo0={ELO0:.0f} elo1={ELO1:.0f}, {runs} simulated tests per row, exact GSPRT LLR")
    start = time.perf_counter()
    rows = [
        row
        for alpha in alphas
        for model in MODELS
        for row in run_design(model, alpha, runs=runs, seed=1000)
    ]
    print(format_rows(rows))
    print(f"({time.perf_counter() - start:.1f} s)")
    start = time.perf_counter()
    print(f"\ngate designs, pentanomial stream, {runs} simulated gates per row")
    gates = gate_rows(runs=runs, seed=2000)
    print(format_gate_rows(gates))
    print(f"({time.perf_counter() - start:.1f} s)")
    record("bench_sprt", gate_figures(gates), quick=quick)


if __name__ == "__main__":
    main()
