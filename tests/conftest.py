"""Shared test configuration. `@pytest.mark.anyio` tests run on trio unless a test or a
directory's conftest parametrizes `anyio_backend` itself."""

from __future__ import annotations

import faulthandler
import os
import shutil
import sys
import tempfile
from typing import Any

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


SHARED = ("tests/cli/test_packaging.py", "tests/cli/test_errors.py", "tests/cli/test_inspect.py",
          "tests/cli/test_export_watch.py", "tests/cli/test_inspect_odd_text.py", "tests/cli/test_main_module.py",
          "tests/console/test_console_browser.py", "tests/engine/test_tracing.py", "tests/storage/test_damage_fuzz.py",
          "tests/storage/test_prune_kill.py", "tests/cli/test_key_file.py", "tests/storage/test_pg_schema.py")
"""The modules whose tests share a module-scoped fixture (a built wheel, a session file the demo
wrote) or the browser: under pytest-xdist each runs whole on one worker, so that is made once."""


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`make test` runs the suite under pytest-xdist (`-n auto --dist loadgroup`): every test goes
    to whichever worker is free, except that a module of `SHARED` goes whole to one worker. (Not
    xdist's own `xdist_group` marks: xdist 3.8 cannot rename pytest 9's node ids to group them.)
    Each worker has its own temp dirs and its own PostgreSQL server (`postgres_server` is made
    once per process)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in SHARED else nodeid

    return SharedModulesTogether(config, log)  # type: ignore[arg-type]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(pytest-xdist, in the controller) What the workers need to see of this process."""
    node.workerinput["durable_columns"] = os.environ.get("COLUMNS")
    node.workerinput["durable_run_dir"] = node.config.stash[RUN_DIR]


GRACE = 60.0
"""Seconds a test may run past its pytest-timeout limit before `pytest_runtest_protocol`'s guard
ends the process."""

_guard_fd: int | None = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """A hung test fails visibly instead of holding its worker forever. pytest-timeout
    (`timeout_method = "signal"`) raises its failure in the main thread, and that is not enough
    for an anyio test on trio: anyio runs trio as a guest of a loop of its own in the main thread
    (a queue it waits on), so the failure only leaves that loop, the trio run (and the hung test
    task, which may be shielded) stays, and the runner's exit then waits for the run to end:
    forever, with no report, the worker idle in a futex wait. So `GRACE` seconds after the limit,
    faulthandler (a C thread, whatever the main thread waits on) writes every thread's traceback
    to stderr and ends the process with status 1; pytest-xdist reports the test the worker was
    running as failed ("worker crashed") and starts another worker for the rest."""
    limit = _timeout_of(item)
    if limit > 0 and _guard_fd is not None:
        faulthandler.dump_traceback_later(limit + GRACE, exit=True, file=_guard_fd)
    try:
        yield
    finally:
        if limit > 0 and _guard_fd is not None:
            faulthandler.cancel_dump_traceback_later()


def _timeout_of(item: pytest.Item) -> float:
    """The test's pytest-timeout limit (its mark, else --timeout, else the ini's); 0: none."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    value = item.config.getoption("timeout", None)
    if value is None:
        try:
            value = item.config.getini("timeout")
        except ValueError:  # pytest-timeout not loaded (-p no:timeout)
            return 0.0
    return float(value or 0)


def pytest_configure(config: pytest.Config) -> None:
    """The guard's stderr (a copy of the descriptor: the tests' output capture replaces fd 2
    meanwhile); the run's directory (`run_dir`: the controller's, in a worker). In a pytest-xdist
    worker, COLUMNS is what the run was started with: a worker is started with COLUMNS=80, which
    would narrow `durable inspect`'s piped output (it is 140 wide unless COLUMNS says otherwise)
    and change what the tests read."""
    global _guard_fd
    if _guard_fd is None:
        try:
            _guard_fd = os.dup(sys.stderr.fileno())
        except (AttributeError, ValueError, OSError):  # not a real file (an xdist worker's stderr may not be)
            _guard_fd = os.dup(sys.__stderr__.fileno()) if sys.__stderr__ is not None else None
    given = getattr(config, "workerinput", None)
    if given is not None and "durable_run_dir" in given:
        config.stash[RUN_DIR] = given["durable_run_dir"]
    else:
        config.stash[RUN_DIR] = tempfile.mkdtemp(prefix="durable-test-run-")
        config.stash[OWN_RUN_DIR] = True
    if given is not None and "durable_columns" in given:
        if given["durable_columns"] is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = given["durable_columns"]


RUN_DIR = pytest.StashKey[str]()
OWN_RUN_DIR = pytest.StashKey[bool]()


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(OWN_RUN_DIR, False):
        shutil.rmtree(config.stash[RUN_DIR], ignore_errors=True)


@pytest.fixture(scope="session")
def run_dir(pytestconfig: pytest.Config) -> str:
    """A directory of the whole pytest run, shared by its pytest-xdist workers (the controller
    makes it and removes it at the end): what one test leaves there for another (`tests/moves.py`)."""
    return pytestconfig.stash[RUN_DIR]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keeps `SHARED` true: a test module that uses a module-scoped fixture or the browser and is
    not listed there is an error of the collection."""
    missing = set()
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = [d[-1] for d in info.name2fixturedefs.values() if d] if info is not None else []
        # (`anyio_backend` is redefined per test here; pytest's own xunit fixtures start with "_".)
        if any(d.argname == "browser" or (d.scope == "module" and d.argname != "anyio_backend"
                                          and not d.argname.startswith("_")) for d in defs):
            path = item.nodeid.split("::", 1)[0]
            if path not in SHARED:
                missing.add(path)
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: add {', '.join(sorted(missing))} to SHARED (a module-scoped "
                                "fixture or the browser: its tests must run on one pytest-xdist worker)")


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server for the whole run (durable.testing.pgcluster): initdb in a
    temp dir (as the `postgres` user when this is root), pg_ctl on a free port of 127.0.0.1,
    stopped (`-m immediate`) and removed at the end. Started only when a test asks for it. Without
    the server binaries it fails, saying to run scripts/ensure-postgres, unless
    DURABLE_SKIP_POSTGRES=1, which skips the PostgreSQL tests instead. fsync is off: the tests
    crash the server process (whose writes the OS keeps), never the machine."""
    from durable.testing.pgcluster import PostgresNotFound, TempCluster

    try:
        cluster = TempCluster(fsync=False)
    except PostgresNotFound as exc:
        if os.environ.get("DURABLE_SKIP_POSTGRES") == "1":
            pytest.skip(f"DURABLE_SKIP_POSTGRES=1: {exc}")
        pytest.fail(str(exc), pytrace=False)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_dsn(postgres_server) -> str:
    return postgres_server.dsn
