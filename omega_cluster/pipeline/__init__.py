"""The training loop as the service runs it: collect → train → gate → promote, sync or async.

* :mod:`.driver` — :class:`Pipeline`: one set of steps (collect a chunk of self-play, train a
  candidate, gate it, promote or reject), run in lockstep (sync) or by a small event scheduler
  (async, with back-pressure on how far self-play may run ahead of training);
* :mod:`.backend` — how the driver reaches its workers: the :class:`Backend` protocol and the
  in-process :class:`LocalBackend` (``omega_cluster.cluster`` gives the Ray one);
* :mod:`.run_state` — the run directory's layout and the state the driver keeps on disk.

It sits above training and evaluation (it drives both) and below the service, which wires it
from the settings; it knows nothing of Ray or MLflow (observers and backends are passed in).
"""
