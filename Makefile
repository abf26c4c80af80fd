# The two quick-start commands: `make demo` (the main job) and `make test` (the suite).
# Each one sets up everything it needs on a fresh machine, in a virtual environment in .venv:
# `make demo` installs durable alone, `make test` durable with its test extras. Python 3.11 or
# newer is checked before anything is made (choose one with `make demo PYTHON=python3.12`), and a
# .venv made by another Python is made again. `make clean` removes what these commands made.
# `make test` lints (ruff), type-checks (mypy --strict, configured in pyproject.toml),
# builds the documentation site strict (MkDocs: any warning fails; offline) and then runs the
# suite (in parallel: TEST_WORKERS); it stops at the first of them that fails. `make docs` builds
# the documentation into site/.
PYTHON ?= python3
# `make test` runs the suite in this many pytest-xdist workers (auto: one per core; 0 runs it in
# this process). Each worker has its own temp dirs, PostgreSQL server and browser; a module whose
# tests share an expensive fixture is kept on one worker (`xdist_group`, with --dist loadgroup).
TEST_WORKERS ?= auto
# The suite's temporary files (pytest's tmp_path, the crash tests' session files, the PostgreSQL
# test server's folder) go to this folder: memory (/dev/shm) when it is writable with 2 GB free and
# not mounted noexec (some tests run scripts they write), else the system's temp folder
# (TEST_TMPDIR= keeps the system's). Its SQLite files sync often, and
# on a disk those syncs only cost time: no test cuts the machine's power (power cuts are
# simulated by durable.testing.powercut). Measured, two runs each: pytest 356 and 366 s against
# 391 and 375 s on /tmp (ext4).
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && \
  [ "$$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $$4}')" -gt 2097152 ] 2>/dev/null && \
  ! awk '$$2 == "/dev/shm" && $$4 ~ /(^|,)noexec(,|$$)/ {found = 1} END {exit !found}' /proc/mounts 2>/dev/null && \
  echo /dev/shm)
VENV := .venv
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.installed-demo-stamp
DOCS_STAMP := $(VENV)/.installed-docs-stamp

# An interpreter's identity, and that of the one .venv was made from (empty when .venv is missing
# or its Python is gone): when they differ, .venv is made again.
IDENTITY := import sys; print(sys.version.split()[0], sys.base_prefix)
PYTHON_ID := $(shell $(PYTHON) -c '$(IDENTITY)' 2>/dev/null)
VENV_ID := $(shell $(VENV)/bin/python -c '$(IDENTITY)' 2>/dev/null)
ifneq ($(PYTHON_ID),$(VENV_ID))
STALE_VENV := stale-venv
endif

define make_venv
	@if [ "$$($(VENV)/bin/python -c '$(IDENTITY)' 2>/dev/null)" != "$(PYTHON_ID)" ]; then \
	  if [ -d $(VENV) ]; then echo "$(VENV) was made by another Python: making it again with $(PYTHON)"; fi; \
	  rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); \
	fi
endef

$(STAMP): pyproject.toml $(STALE_VENV) | python-version
	$(make_venv)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP) $(DOCS_STAMP)

$(DEMO_STAMP): pyproject.toml $(STALE_VENV) | python-version
	$(make_venv)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e .
	touch $(DEMO_STAMP)

$(DOCS_STAMP): pyproject.toml $(STALE_VENV) | python-version
	$(make_venv)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[docs]'
	touch $(DOCS_STAMP)

.PHONY: demo test docs setup clean python-version stale-venv
setup: $(STAMP)

stale-venv: ;

python-version:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "durable needs Python 3.11 or newer, and $(PYTHON) was not found: run make $(or $(MAKECMDGOALS),demo) PYTHON=python3.11 (or newer)" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "durable needs Python 3.11 or newer, and $(PYTHON) is $$($(PYTHON) -V 2>&1): run make $(or $(MAKECMDGOALS),demo) PYTHON=python3.11 (or newer)" >&2; exit 1; }

clean:
	rm -rf $(VENV) build dist site *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache
	rm -rf durable-demo-scratch durable-demo.sqlite durable-demo.sqlite-wal durable-demo.sqlite-shm durable-demo.sqlite.lock
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

demo: $(DEMO_STAMP)
	$(VENV)/bin/durable demo

# The site (mkdocs.yml: the pages in docs/ and the API reference from the docstrings) into site/;
# strict: any warning or dangling link fails it. No network is used.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/python -m mkdocs build --strict --site-dir site

# The suite's docs test checks the site this target built instead of building it again.
test: export DURABLE_DOCS_SITE := site
test: $(STAMP)
	scripts/ensure-postgres
	scripts/ensure-chromium
	$(VENV)/bin/ruff check durable
	$(VENV)/bin/mypy durable
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/python -m mkdocs build --strict --quiet --site-dir site
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR) )$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup
