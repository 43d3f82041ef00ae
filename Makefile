# Two commands: `make check` (the main job) and `make test` (the test suite); `make test-quick` is the
# test suite without its slow tests.
# Both create the virtual environment on first use and install the pinned dependencies into it.
# `make test` also installs the optional Dask and MkDocs extras and, when npm is available, Mermaid and GitHub's Markdown CSS for the report
# tests, and, when it is missing and apt-get can run as root, Chromium for the rendering test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MERMAID_DIR := .cache/mermaid
MERMAID_STAMP := $(MERMAID_DIR)/.installed-2
NPM_PACKAGES := mermaid@11.17.2 jsdom@29.1.1 github-markdown-css@5.9.0
CHROMIUM := /usr/bin/chromium

.PHONY: check test test-quick bench clean chromium gofmt

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(MERMAID_STAMP):
	@if command -v npm >/dev/null 2>&1 && npm install --silent --no-audit --no-fund --prefix $(MERMAID_DIR) \
	    $(NPM_PACKAGES); then touch $(MERMAID_STAMP); \
	else echo "npm or the npm registry is not available: the Mermaid parse and rendering tests will be skipped"; fi

# Debian's Chromium for tests/test_rendering.py, installed only when missing and apt-get runs as root.
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation) \
	    >/dev/null 2>&1 || echo "apt-get could not install chromium: the rendering test will be skipped"; \
	else echo "chromium is missing and apt-get cannot run as root: the rendering test will be skipped"; fi

# Debian's gofmt (golang-go) for tests/test_kube_export.py, installed only when missing and apt-get runs as root.
gofmt:
	@if command -v gofmt >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go) \
	    >/dev/null 2>&1 || echo "apt-get could not install golang-go: the gofmt test will be skipped"; \
	else echo "gofmt is missing and apt-get cannot run as root: the gofmt test will be skipped"; fi

check: $(STAMP)
	$(BIN)/kepcheck check --report reports

# The optional extras the tests exercise and `make check` does not need: Dask (kepcheck sweep --cluster)
# and MkDocs with the Material theme (the documentation site, built with --strict by tests/test_docs.py).
EXTRAS_STAMP := $(VENV)/.installed-extras
$(EXTRAS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet -e '.[distributed,docs]'
	touch $(EXTRAS_STAMP)

test: $(STAMP) $(EXTRAS_STAMP) $(MERMAID_STAMP) chromium gofmt
	KEPCHECK_MERMAID_DIR=$(CURDIR)/$(MERMAID_DIR) KEPCHECK_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -n auto

# The quick tier for every change: the same suite without the tests marked slow (timings: bench/README.md).
test-quick: $(STAMP) $(EXTRAS_STAMP) $(MERMAID_STAMP) chromium gofmt
	KEPCHECK_MERMAID_DIR=$(CURDIR)/$(MERMAID_DIR) KEPCHECK_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -n auto -m "not slow"

bench: $(STAMP)
	$(BIN)/python bench/bench_explicit.py
	$(BIN)/python bench/bench_toy.py

clean:
	rm -rf $(VENV) $(MERMAID_DIR) reports .pytest_cache .hypothesis
