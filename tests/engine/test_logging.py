"""Logging: every report is also a record on a child of the `durable` logger, with structured
`extra`; a report callback that raises is logged with its traceback; the library adds no handler
but a NullHandler."""

from __future__ import annotations

import logging

import durable.tasks.generation.attempts
import pytest

import durable
from durable import records as r
from durable.engine.reports import ErrorReport, Reporter, TaskInterrupted, TaskRef
from durable.models import FauxModel, faux
from durable.testing import crash

from .conftest import partial_is, settings, until_live

pytestmark = pytest.mark.anyio

HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"
# The report sites name their topic (`ErrorReport(..., topic="model")`).


def records(caplog):
    return [(rec.name, rec.levelname, rec.getMessage(), rec.report_type, rec.task_id, rec.task_kind,
             rec.conversation_id, rec.reason) for rec in caplog.records if rec.name.startswith("durable")]


def test_the_library_adds_no_handler_but_a_null_handler():
    import durable.engine.reports  # noqa: F401 - the module that configures the logger

    handlers = logging.getLogger("durable").handlers
    assert [type(h) for h in handlers] == [logging.NullHandler]
    for name in ("durable.recovery", "durable.commit", "durable.model", "durable.reports", "durable.task"):
        assert logging.getLogger(name).handlers == []


async def test_a_crash_recovery_is_logged_on_durable_recovery_with_the_task_and_the_decision(host, caplog):
    caplog.set_level(logging.DEBUG, logger="durable")
    model = FauxModel([faux.hang("Hello wor")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hello wor"))
        crash(h)
    assert records(caplog) == []
    async with host.open(FauxModel([faux.reply("Hello world")]), settings=settings()) as h:
        await h.resume()
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(1.0)
        assert await h.root.submission(sub.id).wait() == r.Answered("Hello world", 3)
    assert records(caplog) == [
        ("durable.recovery", "INFO",
         f"Task 1 (generation, conversation root) was cut off once (interrupted): {HOST_STOPPED_1}",
         "task_interrupted", 1, "generation", "root", "interrupted"),
    ]
    (record,) = [rec for rec in caplog.records if rec.name.startswith("durable")]
    assert record.report == host.reports[0]


async def test_at_the_restart_limit_the_ending_is_a_warning(host, caplog):
    caplog.set_level(logging.DEBUG, logger="durable")
    model = FauxModel([faux.hang("Hello wor")])
    async with host.open(model, settings=settings(restart_limit=1)) as h:
        sub = await h.root.submit("hi")
        await until_live(h, partial_is("Hello wor"))
        crash(h)
    async with host.open(FauxModel([]), settings=settings(restart_limit=1)) as h:
        result = await h.root.submission(sub.id).wait()
    assert isinstance(result, r.Unanswered) and result.reason == "restart_limit"
    (report,) = host.reports
    assert records(caplog) == [
        ("durable.recovery", "WARNING",
         f"Task 1 (generation, conversation root) was cut off once (restart_limit): {report.detail}",
         "task_interrupted", 1, "generation", "root", "restart_limit"),
    ]


async def test_a_task_whose_code_raises_is_logged_as_errors_on_durable_task(host, caplog):
    caplog.set_level(logging.DEBUG, logger="durable")

    class Broken(FauxModel):
        def stream(self, request):
            raise ZeroDivisionError("oops")

    async with host.open(Broken([]), settings=settings()) as h:
        assert (await (await h.root.submit("hi")).wait()).reason == "faulted"
    message = "Task 1 (generation) raised ZeroDivisionError: oops"
    assert records(caplog) == [
        ("durable.task", "ERROR", message, "error", 1, "generation", "root", "task"),
        ("durable.task", "ERROR", f"Task 1 (generation, conversation root) faulted (exception): {message}",
         "task_faulted", 1, "generation", "root", "exception"),
    ]


async def test_a_provider_error_and_its_retry_are_logged_on_durable_model(host, caplog):
    caplog.set_level(logging.DEBUG, logger="durable")
    model = FauxModel([faux.error("Overloaded", kind="overloaded", status_code=529, retry_after=5.0),
                       faux.reply("Fine now")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("hi")
        await host.clock.wait_for_timer("retry:1")
        host.clock.advance(5.0)
        assert await sub.wait() == r.Answered("Fine now", 2)
    assert records(caplog) == [
        ("durable.model", "WARNING", "Attempt 1 of task 1 failed: Overloaded", "error", 1, "generation", "root",
         "model"),
    ]


def test_a_report_callback_that_raises_is_logged_with_its_traceback_and_the_harness_goes_on(caplog):
    caplog.set_level(logging.DEBUG, logger="durable")
    seen = []

    def callback(report):
        seen.append(report)
        raise ValueError("the dashboard is down")

    reporter = Reporter(callback)
    report = TaskInterrupted(TaskRef(3, "tool", "root"), "not_rerun", 1, "Tool pay is not run again")
    reporter(report)
    reporter(ErrorReport("A commit could not commit and will try again: disk full", topic="commit"))
    assert len(seen) == 2
    assert records(caplog) == [
        ("durable.recovery", "WARNING",
         "Task 3 (tool, conversation root) was cut off once (not_rerun): Tool pay is not run again",
         "task_interrupted", 3, "tool", "root", "not_rerun"),
        ("durable.reports", "ERROR",
         "The report callback test_a_report_callback_that_raises_is_logged_with_its_traceback_and_the_harness_goes_on"
         ".<locals>.callback raised on the task_interrupted report about task 3 (tool); the harness goes on",
         "task_interrupted", 3, "tool", "root", "callback_raised"),
        ("durable.commit", "WARNING", "A commit could not commit and will try again: disk full", "error",
         None, None, None, "commit"),
        ("durable.reports", "ERROR",
         "The report callback test_a_report_callback_that_raises_is_logged_with_its_traceback_and_the_harness_goes_on"
         ".<locals>.callback raised on the error report; the harness goes on",
         "error", None, None, None, "callback_raised"),
    ]
    failing = [rec for rec in caplog.records if rec.name == "durable.reports"]
    assert all(rec.exc_info[0] is ValueError and "the dashboard is down" in rec.exc_text for rec in failing)


def test_a_percent_sign_in_a_provider_message_is_logged_as_text(caplog):
    caplog.set_level(logging.DEBUG, logger="durable")
    Reporter(None)(ErrorReport("Quota at 100% (%s)", TaskRef(1, "generation", "root"), topic="model"))
    assert [rec.getMessage() for rec in caplog.records] == ["Quota at 100% (%s)"]


def test_nothing_is_formatted_when_the_level_is_off(caplog):
    caplog.set_level(logging.ERROR, logger="durable")
    Reporter(None)(TaskInterrupted(TaskRef(1, "generation", "root"), "interrupted", 1, "again"))
    assert caplog.records == []


async def test_a_refused_commit_is_a_warning_on_durable_commit_and_is_retried(host, caplog):
    import anyio

    from .test_faults import noise, page_count, set_page_limit

    caplog.set_level(logging.DEBUG, logger="durable")
    errors = anyio.Event()
    big = noise(300_000)

    def report(event):
        host.reports.append(event)
        errors.set()

    async with host.open(FauxModel([faux.reply(big)]), settings=settings(progress=durable.Progress(persist_within=3600.0))) as h:
        h.report._callback = report
        await set_page_limit(h, await page_count(h) + 2)
        sub = await h.root.submit("write a lot")
        await errors.wait()
        await set_page_limit(h, 1_000_000)
        assert await sub.wait() == r.Answered(big, 2)
    logged = records(caplog)
    assert logged and {rec[:2] for rec in logged} == {("durable.commit", "WARNING")}
    assert logged[0][2].startswith("Task 1 (generation) could not commit and will try again: ")
    assert logged[0][3:] == ("error", None, None, None, "commit")
