# omega_cluster — portable Makefile (GNU make and macOS make).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# torch is pinned to a CPU-capable release (a bare `torch` may pull a multi-GB CUDA build on Linux).
# Override for a CUDA box or another release, e.g. make test TORCH_SPEC='torch>=2.3'
TORCH_SPEC ?= torch==2.13.0

.PHONY: help venv lint format test test-fast bench arena train clean

help:
	@echo "make train   set up $(VENV) and train the default experiment (embedded Ray, local MLflow)"
	@echo "             extra Hydra overrides: make train ARGS='run=smoke game=goofspiel'"
	@echo "make test    create $(VENV) if missing, install the project + dev extras, lint, run pytest"
	@echo "make lint    ruff + mypy on omega_cluster/"
	@echo "make bench   run the benchmarks in bench/ and print their figures"
	@echo "make arena   a sample Mexican Train match between the heuristic officers"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c 'import torch' 2>/dev/null || $(PY) -m pip install --quiet $(TORCH_SPEC)
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check omega_cluster tests bench examples
	$(PY) -m ruff format --check omega_cluster tests bench examples
	$(PY) -m mypy omega_cluster

format: $(STAMP)
	$(PY) -m ruff format omega_cluster tests bench examples
	$(PY) -m ruff check --fix omega_cluster tests bench examples

test: lint
	$(PY) -m pytest -n 2 -q tests

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 -q tests -m "not slow"

bench: $(STAMP)
	$(PY) -m bench

# ARGS: Hydra overrides, e.g. make train ARGS='run=smoke game=leduc_poker cluster.self_play_actors=2'
ARGS ?=
train: $(STAMP)
	$(VENV)/bin/omega-cluster train $(ARGS)

arena: $(STAMP)
	$(VENV)/bin/omega-cluster arena game=mexican_train players=4 seats=commander,lieutenant,ensign,ensign games=200

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
