"""`durable worker`: errors a person can act on are one line (exit status 2); the takeover itself
is tested against a real server in tests/storage/test_postgres_workers.py."""

from __future__ import annotations

from .conftest import one_line_error, run_durable


def test_worker_with_an_app_that_cannot_be_loaded_says_so_in_one_line():
    done = run_durable("worker", "--dsn", "host=127.0.0.1 port=1", "--app", "no_such_module_here:make_app")
    assert one_line_error(done) == ("durable: error: Cannot load the worker app 'no_such_module_here:make_app': "
                                    "No module named 'no_such_module_here'")


def test_worker_with_an_app_spec_without_an_attribute_says_so_in_one_line():
    done = run_durable("worker", "--dsn", "host=127.0.0.1 port=1", "--app", "json")
    assert one_line_error(done) == "durable: error: --app takes module:attribute, not 'json'"


def test_worker_with_an_app_that_is_not_a_worker_app_names_its_type():
    done = run_durable("worker", "--dsn", "host=127.0.0.1 port=1", "--app", "json:JSONDecoder")
    assert one_line_error(done) == ("durable: error: The worker app 'json:JSONDecoder' is a JSONDecoder, "
                                    "not a durable.worker.WorkerApp")


def test_worker_with_an_app_factory_that_raises_says_what_it_raised():
    done = run_durable("worker", "--dsn", "host=127.0.0.1 port=1", "--app", "json:dumps")
    assert one_line_error(done) == ("durable: error: The worker app factory 'json:dumps' raised TypeError: "
                                    "dumps() missing 1 required positional argument: 'obj'")
