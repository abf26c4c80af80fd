# The two quick-start commands: `make demo` (the main job) and `make test` (the suite).
# Each one sets up everything it needs on a fresh machine: a virtual environment in .venv with
# durable and its test dependencies installed. `make test` lints (ruff), type-checks (mypy --strict,
# configured in pyproject.toml) and then runs the suite; it stops at the first of them that fails.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

.PHONY: demo test setup
setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/durable demo

test: $(STAMP)
	$(VENV)/bin/ruff check durable
	$(VENV)/bin/mypy durable
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider
