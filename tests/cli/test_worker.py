"""`durable worker`: errors a person can act on are one line (exit status 2); the takeover itself
is tested against a real server in tests/storage/test_postgres_workers.py."""

from __future__ import annotations

import pytest

from .conftest import one_line_error, run_durable


@pytest.mark.parametrize(("app", "error"), [
    pytest.param("no_such_module_here:make_app",
                 "Cannot load the worker app 'no_such_module_here:make_app': No module named 'no_such_module_here'",
                 id="an app that cannot be loaded says so"),
    pytest.param("json", "--app takes module:attribute, not 'json'",
                 id="an app spec without an attribute says so"),
    pytest.param("json:JSONDecoder",
                 "The worker app 'json:JSONDecoder' is a JSONDecoder, not a durable.worker.WorkerApp",
                 id="an app that is not a worker app names its type"),
    pytest.param("json:dumps",
                 "The worker app factory 'json:dumps' raised TypeError: dumps() missing 1 required positional "
                 "argument: 'obj'",
                 id="an app factory that raises says what it raised"),
])
def test_worker_with_a_bad_app_says_what_is_wrong_in_one_line(app, error):
    done = run_durable("worker", "--dsn", "host=127.0.0.1 port=1", "--app", app)
    assert one_line_error(done) == f"durable: error: {error}"
