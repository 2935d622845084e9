# Every target sets up what it needs on a fresh clone: a .venv with the locked dependencies and the
# project installed in editable mode (redone when requirements.lock or pyproject.toml change).

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.benchwarmers-installed

.PHONY: run test bench lint lock

run: $(STAMP)
	$(VENV)/bin/bench up

test: $(STAMP)
	$(PY) -m pytest -q --tb=short -p no:cacheprovider tests/

bench: $(STAMP)
	$(PY) -m benchmarks.panel

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy shared services cli benchmarks suite

lock: $(PY)
	@test -x $(VENV)/bin/uv || $(PY) -m pip install -q uv
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev -o requirements.lock --python-version 3.11

$(PY):
	python3 -m venv $(VENV)

$(STAMP): requirements.lock pyproject.toml | $(PY)
	$(PY) -m pip install -q -r requirements.lock
	$(PY) -m pip install -q --no-deps -e .
	@touch $@
