# Two commands: `make check` (the main job) and `make test` (the test suite).
# Both create the virtual environment on first use and install the pinned dependencies into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: check test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

check: $(STAMP)
	$(BIN)/kepcheck check

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_explicit.py

clean:
	rm -rf $(VENV) reports .pytest_cache .hypothesis
