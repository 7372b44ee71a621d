# Two commands for a fresh machine with Python 3.11+: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint bench clean

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c requirements.lock -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/clustertco db upgrade
	$(BIN)/clustertco prices load
	$(BIN)/clustertco serve --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy app tests bench

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
