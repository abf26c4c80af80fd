# The two quick-start commands: `make demo` (the main job) and `make test` (the suite).
# Each one sets up everything it needs on a fresh machine: a virtual environment in .venv with
# durable and its test dependencies installed.
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
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider
