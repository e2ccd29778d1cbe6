# make demo: set up .venv if needed, install, run the demo job (offline).
# make test: set up .venv if needed, install, then lint, type-check and run the whole test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,ray]'
	@touch $(STAMP)

# The demo: evolve the bare seed on mini, offline (sim model): calibration, 4 generations of 6,
# the winner's holdout gain over the seed with its interval, the winning graph (a few minutes).
demo: $(STAMP)
	$(BIN)/loopwright evolve --bench mini --seed-workflow builder-only --model sim \
		--generations 4 --population 6 --seed 0 --run-dir runs/demo-$$(date +%Y%m%d-%H%M%S)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/grading_overhead.py
	$(BIN)/python bench/inner_loop_overhead.py
	$(BIN)/python bench/search_bookkeeping.py
	$(BIN)/python bench/parallel_efficiency.py
	$(BIN)/python bench/report_speed.py
	$(BIN)/python bench/search_efficiency.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache build dist
