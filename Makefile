# Two commands: `make check` (the main job) and `make test` (the test suite).
# Both create the virtual environment on first use and install the pinned dependencies into it.
# `make test` also installs, when npm is available, the Mermaid parser the report tests use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MERMAID_DIR := .cache/mermaid
MERMAID_STAMP := $(MERMAID_DIR)/.installed

.PHONY: check test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(MERMAID_STAMP):
	@if command -v npm >/dev/null 2>&1 && npm install --silent --no-audit --no-fund --prefix $(MERMAID_DIR) \
	    mermaid@11.17.2 jsdom@29.1.1; then touch $(MERMAID_STAMP); \
	else echo "npm or the npm registry is not available: the real Mermaid parse test will be skipped"; fi

check: $(STAMP)
	$(BIN)/kepcheck check --report reports

test: $(STAMP) $(MERMAID_STAMP)
	KEPCHECK_MERMAID_DIR=$(CURDIR)/$(MERMAID_DIR) $(BIN)/python -m pytest -n auto

bench: $(STAMP)
	$(BIN)/python bench/bench_explicit.py
	$(BIN)/python bench/bench_toy.py

clean:
	rm -rf $(VENV) $(MERMAID_DIR) reports .pytest_cache .hypothesis
