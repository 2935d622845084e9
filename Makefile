# Every target sets up what it needs on a fresh clone: a .venv with the locked dependencies and the
# project installed in editable mode (redone when requirements.lock or pyproject.toml change).

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.benchwarmers-installed
# checkov (the deploy/ policy check in the tests) in a venv of its own: it pins packaging<24, pytest needs 24+.
CHECKOV := $(VENV)/checkov/bin/checkov
# The product this project implements (benchwarmers 0.3.3), run beside it by `make bench` (benchmarks/anchor.py),
# in a venv of its own: its distribution is named benchwarmers too.
ANCHOR := $(VENV)/anchor/.installed
# The dashboard's browser tests drive Debian's Chromium (never Playwright's own download, which these machines
# cannot reach): installed when missing if we are root with apt-get; else those tests skip, saying why.
CHROMIUM := /usr/bin/chromium

.PHONY: run test bench bench-ledger bench-selection lint lock chromium

run: $(STAMP)
	$(VENV)/bin/bench up

test: $(STAMP) $(CHECKOV) $(ANCHOR) chromium
	$(PY) -m pytest -q --tb=short -p no:cacheprovider tests/

bench: $(STAMP) $(ANCHOR)
	$(PY) -m benchmarks.panel

# Issue 23: the ledger at 1M and 10M seats through the real fold (fold rate, report, SQL, export, rebuild).
bench-ledger: $(STAMP)
	$(PY) -m benchmarks.ledger

# Issue 22's study: every figure and plot of docs/selection.md, from fixed seeds (a few minutes, 1 core).
bench-selection: $(STAMP)
	$(PY) -m benchmarks.selection --write

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy shared services cli benchmarks suite

lock: $(PY)
	@test -x $(VENV)/bin/uv || $(PY) -m pip install -q uv
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev -o requirements.lock --python-version 3.11
	# The image's: runtime dependencies only, at the versions the tests run with.
	$(VENV)/bin/uv pip compile pyproject.toml -c requirements.lock -o requirements-runtime.lock --python-version 3.11
	$(VENV)/bin/uv pip compile requirements-checkov.in -o requirements-checkov.lock --python-version 3.11
	$(VENV)/bin/uv pip compile requirements-anchor.in -o requirements-anchor.lock --python-version 3.11 \
	  --generate-hashes

$(PY):
	python3 -m venv $(VENV)

$(STAMP): requirements.lock pyproject.toml | $(PY)
	$(PY) -m pip install -q -r requirements.lock
	$(PY) -m pip install -q --no-deps -e .
	@touch $@

chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  { apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; } || \
	  echo "chromium could not be installed with apt-get: the dashboard's browser tests will skip"; \
	else echo "no $(CHROMIUM) (apt-get install chromium, as root): the dashboard's browser tests will skip"; fi

$(CHECKOV): requirements-checkov.lock | $(PY)
	test -x $(VENV)/checkov/bin/python || python3 -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/python -m pip install -q -r requirements-checkov.lock
	@touch $@

$(ANCHOR): requirements-anchor.lock | $(PY)
	test -x $(VENV)/anchor/bin/python || python3 -m venv $(VENV)/anchor
	$(VENV)/anchor/bin/python -m pip install -q --require-hashes -r requirements-anchor.lock
	@touch $@
