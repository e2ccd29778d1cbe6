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

# The demo: the bare seed against study -> build -> verify(RELOOP) on mini, offline (sim model).
demo: $(STAMP)
	$(BIN)/loopwright run builder-only research-build-verify --bench mini --reps 3 --seed 0 \
		--run-dir runs/demo-$$(date +%Y%m%d-%H%M%S)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

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
