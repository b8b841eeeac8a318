# omega_cluster — portable Makefile (GNU make and macOS make).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# torch is pinned to a CPU-capable release (a bare `torch` may pull a multi-GB CUDA build on Linux).
# Override for a CUDA box or another release, e.g. make test TORCH_SPEC='torch>=2.3'
TORCH_SPEC ?= torch==2.13.0

# the folders ruff checks (experiments/ when it is there)
LINT_PATHS := omega_cluster tests bench examples $(wildcard experiments)

.PHONY: help venv lint format test test-fast browser soak bench results arena train local-cluster stop-cluster clean

help:
	@echo "make train   set up $(VENV) and train the default experiment (embedded Ray, local MLflow)"
	@echo "             extra Hydra overrides: make train ARGS='run=smoke game=goofspiel'"
	@echo "make local-cluster  this machine as a Ray cluster: Ray head (dashboard 127.0.0.1:8265),"
	@echo "             MLflow server (127.0.0.1:5050), then submit a training job (ARGS as for train)"
	@echo "make stop-cluster   stop the Ray head and MLflow server that local-cluster started"
	@echo "make test    create $(VENV) if missing, install the project + dev extras, lint, run pytest"
	@echo "             (and Debian's chromium + chromium-driver for the browser test, when missing)"
	@echo "make lint    ruff, mypy, then the import contract (lint-imports: the layers in pyproject.toml)"
	@echo "make soak    train on the embedded Ray while random parts are SIGKILLed (scripts/soak.py)"
	@echo "make bench   run the benchmarks in bench/ and print their figures (recorded in docs/results/)"
	@echo "make results rewrite the tables of docs/results.md and the README from docs/results/*.json"
	@echo "make arena   a sample Mexican Train match between the heuristic officers"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c 'import torch' 2>/dev/null || $(PY) -m pip install --quiet $(TORCH_SPEC)
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)
	$(PY) -m mypy omega_cluster
	$(VENV)/bin/lint-imports

format: $(STAMP)
	$(PY) -m ruff format $(LINT_PATHS)
	$(PY) -m ruff check --fix $(LINT_PATHS)

test: lint browser
	$(PY) -m pytest -n 2 --dist loadgroup -q --durations=30 tests

# The web table's browser test (tests/integration/test_web_browser.py) drives Debian's chromium
# through its chromedriver (browser downloads cannot reach their hosts from CI): installed with
# apt-get when /usr/bin/chromium is missing (CI runs as root on a clean Debian machine; sudo
# otherwise); elsewhere a note (e.g. brew install chromium chromedriver: the test finds them on PATH).
browser:
	@test -x /usr/bin/chromium && test -x /usr/bin/chromedriver || { \
	  if command -v apt-get >/dev/null; then \
	    SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
	    echo "installing chromium and chromium-driver (apt-get) for the browser test"; \
	    $$SUDO apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "note: the browser test needs chromium and chromedriver (on PATH or in /usr/bin)"; fi; }

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup -q tests -m "not slow"

# The long soak (tests/faults/test_soak.py runs a short one in CI): kills, resumes, then checks
# the run's invariants; the report is printed and written as soak.json in the run directory.
soak: $(STAMP)
	$(PY) scripts/soak.py $(ARGS)

bench: $(STAMP)
	$(PY) -m bench

results: $(STAMP)
	$(PY) -m bench.results

# ARGS: Hydra overrides, e.g. make train ARGS='run=smoke game=leduc_poker cluster.self_play_actors=2'
ARGS ?=
train: $(STAMP)
	$(VENV)/bin/omega-cluster train $(ARGS)

# This workstation as a Ray cluster; the logic is in scripts/local_cluster.sh (its header says what
# it starts and why). Ports and state dir from the environment: RAY_PORT, DASHBOARD_PORT,
# MLFLOW_PORT, LOCAL_CLUSTER_DIR, e.g. make local-cluster MLFLOW_PORT=5051 ARGS='run=smoke'
local-cluster: $(STAMP)
	VENV=$(VENV) sh scripts/local_cluster.sh start $(ARGS)

stop-cluster:
	VENV=$(VENV) sh scripts/local_cluster.sh stop

arena: $(STAMP)
	$(VENV)/bin/omega-cluster arena game=mexican_train players=4 seats=commander,lieutenant,ensign,ensign games=200

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .grimp_cache .import_linter_cache
