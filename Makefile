# dpbench: `make quickstart` installs into .venv and runs the offline quickstart; `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The read-only data mirror beside the project, when present (DPBENCH_DATA_DIR set by the user wins).
SHARED_DATA := $(abspath ../shared/data)
export DPBENCH_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)/README.md),$(SHARED_DATA),)
export MPLBACKEND := Agg

.PHONY: install quickstart test lint bench zoo fig1-fixed reproduce-fig1 data-list audit clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask]'
	touch $@

install: $(VENV)/.installed

quickstart: install
	$(PY) -m dpbench sweep experiment=quickstart

test: install
	$(PY) -m pytest -q


lint: install
	$(PY) -m ruff check dpbench tests scripts

bench: install
	$(PY) scripts/bench.py

zoo: install
	$(PY) -m dpbench sweep experiment=zoo

fig1-fixed: install
	$(PY) -m dpbench sweep experiment=fig1_fixed

reproduce-fig1: fig1-fixed

data-list: install
	$(PY) -m dpbench data list

# the full empirical privacy audit: every private algorithm and design, eps 0.1, 1, 10, 2000 fits a side
# (AUDIT_ARGS="--n-jobs 8" etc. to change it); exits 1 on a violation
audit: install
	$(PY) -m dpbench audit --full $(AUDIT_ARGS)

# papers 003 (TukeyEM: R^2 table, PTR distance / R^2 / runtime vs m; ~15 min on 2 cores) and 004 (DP-ROBGD:
# Fig. 1 vs n, kappa, sigma at eps 1 and App. K.1's eps 0.1, label corruption; ~25 min): results/<analysis>/
.PHONY: reproduce-paper003 reproduce-paper004
reproduce-paper003: install
	$(PY) -m dpbench analysis paper003

reproduce-paper004: install
	$(PY) -m dpbench analysis paper004_fig1
	$(PY) -m dpbench analysis paper004_corruption
	$(PY) -m dpbench analysis paper004_fig1_eps0.1

# paper 001 (classification: BoostedAdaSSP vs DP-EBM vs DP-XGBoost), figures in results/paper001_figures/:
# reproduce-clf-fig1 (Fig. 1, training loss), reproduce-clf-sweep (the paper001 grid: Figs 2-4, 6-10; hours on
# 2 cores), reproduce-clf-fig5 (DP-EBM leaves), reproduce-clf-timing (1000 rounds DP-EBM vs BoostedAdaSSP),
# reproduce-clf-figures (draws every figure from what has run); reproduce-paper001 runs them all
.PHONY: reproduce-paper001 reproduce-clf-fig1 reproduce-clf-sweep reproduce-clf-fig5 reproduce-clf-timing reproduce-clf-figures
reproduce-clf-fig1: install
	$(PY) -m dpbench analysis clf_fig1

reproduce-clf-sweep: install
	$(PY) -m dpbench sweep experiment=paper001

reproduce-clf-fig5: install
	$(PY) -m dpbench sweep experiment=paper001_leaves

reproduce-clf-timing: install
	$(PY) -m dpbench analysis clf_timing

reproduce-clf-figures: install
	$(PY) -m dpbench analysis paper001_figures

reproduce-paper001: reproduce-clf-fig1 reproduce-clf-sweep reproduce-clf-fig5 reproduce-clf-timing
	$(PY) -m dpbench analysis paper001_figures

clean:
	rm -rf results/quickstart results/zoo .pytest_cache
