# dpbench: `make quickstart` installs into .venv and runs the offline quickstart; `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The read-only data mirror beside the project, when present (DPBENCH_DATA_DIR set by the user wins).
SHARED_DATA := $(abspath ../shared/data)
export DPBENCH_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)/README.md),$(SHARED_DATA),)
export MPLBACKEND := Agg

.PHONY: install quickstart test lint docs bench mutants zoo fig1-fixed reproduce-fig1 reproduce-paper000 data-list audit clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask,docs]'
	touch $@

install: $(VENV)/.installed

quickstart: install
	$(PY) -m dpbench sweep experiment=quickstart

# the suite on TEST_WORKERS processes (pytest-xdist; worksteal: an idle worker takes tests queued on the other, so
# the two long fixtures -- the fast audit, the claims' rates -- do not leave one core idle); TEST_WORKERS=0: one process
TEST_WORKERS ?= 2
test: install
	$(PY) -m pytest -q --durations=10 $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist worksteal)


lint: install
	$(PY) -m ruff check dpbench tests scripts

# the documentation site from docs/ into site/ (strict: a broken link, figure or docstring fails)
docs: install
	$(PY) -m mkdocs build --strict

bench: install
	$(PY) scripts/bench.py

# deliberate privacy bugs in a temporary copy (scripts/mutants.py): each must be caught by the test named beside it
mutants: install
	$(PY) scripts/mutants.py

zoo: install
	$(PY) -m dpbench sweep experiment=zoo

fig1-fixed: install
	$(PY) -m dpbench sweep experiment=fig1_fixed

# Paper 000 Figs 1-5 (three tuning settings each; Fig. 5 two), Fig. 12 (n/d) and Fig. 1(c) under the 1:sqrt(T):1
# budget split: each a sweep into results/<fig>/ (parquet + PNG + PDF).  SWEEP_ARGS adds overrides, e.g.
# `make reproduce-fig1 SWEEP_ARGS=tuning=quick` for short studies.  reproduce-paper000 (below) runs them all.
SWEEP_ARGS ?=
.PHONY: reproduce-fig2 reproduce-fig3 reproduce-fig4 reproduce-fig5 reproduce-fig12 reproduce-fig1-split report
reproduce-fig1: install
	$(PY) -m dpbench sweep experiment=fig1 $(SWEEP_ARGS)
reproduce-fig2: install
	$(PY) -m dpbench sweep experiment=fig2 $(SWEEP_ARGS)
reproduce-fig3: install
	$(PY) -m dpbench sweep experiment=fig3 $(SWEEP_ARGS)
reproduce-fig4: install
	$(PY) -m dpbench sweep experiment=fig4 $(SWEEP_ARGS)
reproduce-fig5: install
	$(PY) -m dpbench sweep experiment=fig5 $(SWEEP_ARGS)
reproduce-fig12: install
	$(PY) -m dpbench sweep experiment=fig12 $(SWEEP_ARGS)
reproduce-fig1-split: install
	$(PY) -m dpbench sweep experiment=fig1_split $(SWEEP_ARGS)
# the reference verdicts (results/reference/, committed: nothing runs), then the report of your own results/ if any
report: install
	$(PY) -m dpbench report results_dir=results/reference
	@if ls -d results/*/parts >/dev/null 2>&1; then $(PY) -m dpbench report; fi

data-list: install
	$(PY) -m dpbench data list

# the full empirical privacy audit: every private algorithm and design, eps 0.1, 1, 10, 2000 fits a side
# (AUDIT_ARGS="--n-jobs 8" etc. to change it); exits 1 on a violation
audit: install
	$(PY) -m dpbench audit --full $(AUDIT_ARGS)

# The whole reproduction, in order, then the report (results/report.html): every sweep and analysis of papers
# 000-004 (`python -m dpbench reproduce`; the one list of its parts is dpbench/cli/reproduce.py).  Resumable:
# finished runs and analyses are skipped.  A progress line per part with its estimate; DRY_RUN=1 prints each
# part's estimate and the total in hours and runs nothing (a few minutes: each sweep's estimate calibrates).
# reproduce-paperNNN: one paper's parts, then the report.
DRY_RUN ?=
REPRODUCE_ARGS = $(if $(filter-out 0,$(DRY_RUN)),--dry-run)
.PHONY: reproduce-all reproduce-paper001 reproduce-paper003 reproduce-paper004
reproduce-all: install
	$(PY) -m dpbench reproduce $(REPRODUCE_ARGS)
reproduce-paper000: install
	$(PY) -m dpbench reproduce --paper 000 $(REPRODUCE_ARGS)
reproduce-paper001: install
	$(PY) -m dpbench reproduce --paper 001 $(REPRODUCE_ARGS)
# papers 003 (TukeyEM: R^2 table, PTR distance / R^2 / runtime vs m) and 004 (DP-ROBGD: Fig. 1 vs n, kappa, sigma
# at eps 1 and App. K.1's eps 0.1, label corruption): analyses into results/<analysis>/
reproduce-paper003: install
	$(PY) -m dpbench reproduce --paper 003 $(REPRODUCE_ARGS)
reproduce-paper004: install
	$(PY) -m dpbench reproduce --paper 004 $(REPRODUCE_ARGS)

# paper 001 (classification: BoostedAdaSSP vs DP-EBM vs DP-XGBoost), figures in results/paper001_figures/:
# reproduce-clf-fig1 (Fig. 1, training loss), reproduce-clf-sweep (the paper001 grid: Figs 2-4, 6-10; hours on
# 2 cores), reproduce-clf-fig5 (DP-EBM leaves), reproduce-clf-timing (1000 rounds DP-EBM vs BoostedAdaSSP),
# reproduce-clf-figures (draws every figure from what has run); reproduce-paper001 (above) runs them all
.PHONY: reproduce-clf-fig1 reproduce-clf-sweep reproduce-clf-fig5 reproduce-clf-timing reproduce-clf-figures
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

# Paper 000 Sec. V (Figs 6-11, robustness to outliers) and Sec. VI / App. E (zero-dimensional theory).
# One sweep per corruption holds BoostedAdaSSP, AdaSSP and TukeyEM (1000 and 10,000 models), so a figure pair
# shares its BoostedAdaSSP runs: results/robust_<label|feature|model>/robust_<...>.png, top row Fig. 6 / 8 / 10
# (vs AdaSSP), the rows below Fig. 7 / 9 / 11 (vs TukeyEM).  The full grid (10 trials) takes ~2 h on 2 busy cores;
# ROBUST_ARGS="seeds=[0,1,2] runner.n_jobs=2" runs a sub-grid.  reproduce-theory: the analysis `theory` (~2 min);
# robust-smoke: the CI versions (seconds each).
ROBUST_ARGS ?=
.PHONY: reproduce-fig6 reproduce-fig7 reproduce-fig8 reproduce-fig9 reproduce-fig10 reproduce-fig11 reproduce-theory robust-smoke
reproduce-fig6 reproduce-fig7: install
	$(PY) -m dpbench sweep experiment=robust_label $(ROBUST_ARGS)
reproduce-fig8 reproduce-fig9: install
	$(PY) -m dpbench sweep experiment=robust_feature $(ROBUST_ARGS)
reproduce-fig10 reproduce-fig11: install
	$(PY) -m dpbench sweep experiment=robust_model $(ROBUST_ARGS)
reproduce-theory: install
	$(PY) -m dpbench analysis theory
robust-smoke: install
	$(PY) -m dpbench sweep experiment=smoke/robust_label
	$(PY) -m dpbench sweep experiment=smoke/robust_feature
	$(PY) -m dpbench sweep experiment=smoke/robust_model

clean:
	rm -rf results/quickstart results/zoo .pytest_cache
