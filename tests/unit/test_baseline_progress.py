"""The baseline's live display (omega_cluster/progress.py, BaselineProgress): a rich panel on a
terminal whose clock and time left run between events, one unwrapped line per event elsewhere."""

from __future__ import annotations

import io
import time

from rich.console import Console

from omega_cluster.progress import BaselineProgress

SUMMARY = {"iteration": 3.0, "env_steps": 12000.0, "episodes": 250.0, "main_return_mean": 0.125,
           "total_loss": 0.5, "seconds": 4.25}  # fmt: skip


def test_off_a_terminal_each_event_is_one_line_with_the_time_left() -> None:
    out = io.StringIO()
    console = Console(file=out, width=40)  # narrow: a line must still not wrap
    started = time.monotonic() - 30.0  # the command started 30 s ago, limit 2 min
    panel = BaselineProgress("rllib_ppo", "leduc_poker", minutes=2, started=started,
                             console=console)  # fmt: skip
    assert not panel.live_enabled
    panel.start()
    panel.built()
    panel.iteration(SUMMARY)
    panel.stop("after iteration 3, the next would end past the limit")
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert "leduc_poker, limit 2 min: starting Ray and building RLlib's PPO" in lines[0]
    assert lines[1].startswith("[   30.") and "built in 30." in lines[1]
    assert "iteration 3: 12000 env steps, 250 episodes, main return 0.125, loss 0.500" in lines[2]
    assert "(4.2 s; 90 s left)" in lines[2] or "(4.2 s; 89 s left)" in lines[2]
    assert lines[3].endswith("stopped: after iteration 3, the next would end past the limit")


def test_on_a_terminal_the_panel_shows_the_fields_and_the_clock_runs() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    panel = BaselineProgress("rllib_ppo", "kuhn_poker", minutes=1, started=time.monotonic(),
                             console=console)  # fmt: skip
    assert panel.live_enabled
    panel.start()
    try:
        panel.iteration(SUMMARY)
        drawn = len(out.getvalue())
        first = panel.left()
        time.sleep(0.8)  # no event: the panel is redrawn all the same, with less time left
        assert first is not None and panel.left() < first  # type: ignore[operator]
        assert len(out.getvalue()) > drawn
    finally:
        panel.close()
    text = out.getvalue()
    assert "omega-cluster baseline rllib_ppo" in text and "kuhn_poker" in text
    assert "left" in text and "12000" in text and "4.2 s" in text
    panel.close()  # twice: nothing to do
