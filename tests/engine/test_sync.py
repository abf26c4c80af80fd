"""`durable.sync`: the harness behind blocking calls, on an event loop in a background thread.
Same semantics as the async API (submit after the commit, wait blocks, follow as an iterator),
exceptions with their own classes, a clean close that ends the thread, also on an exception; and
a program using it that is killed with SIGKILL mid-stream resumes when it opens the file again."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading

import anyio
import pytest

import durable
import durable.sync
from durable import records as r
from durable.models import FauxModel, faux
from durable.storage.sqlite.reader import SessionReader
from durable.tasks.generation.records import Request

from .conftest import used

HOST_STOPPED_1 = "The host stopped while the model was answering, on attempt 1"
FAST = durable.Settings(retry=durable.RetryPolicy(base_delay=0.01),
                        progress=durable.Progress(persist_within=0, output_interval=0))


@pytest.fixture
def path(tmp_path) -> str:
    return str(tmp_path / "session.sqlite")


@pytest.fixture(autouse=True)
def no_stray_threads():
    """Every test ends with the threads it started ended (the portal's, the store's writer)."""
    before = set(threading.enumerate())
    yield
    assert set(threading.enumerate()) - before == set()


def stored_entries(path: str) -> list[r.Entry]:
    """The entries of the root conversation as the file holds them (read-only, also while the
    file is owned)."""
    with SessionReader(path) as reader:
        return [e.entry for e in reader.entries("root")]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_submit_wait_answer_entries_and_a_later_process_reading_the_answer(path, backend):
    model = FauxModel([faux.reply("Hello world"), faux.reply("Again")])
    with durable.sync.open_harness(path, model=model, settings=FAST, backend=backend) as h:
        assert h.state is durable.HarnessState.OPEN
        sub = h.root.submit("hi")
        assert sub.wait() == r.Answered("Hello world", 2)
        assert sub.answer() == "Hello world"
        assert h.root.submit("again", when_busy="reject").answer() == "Again"
        assert [(e.seq, e.entry.text) for e in h.root.entries()] == [
            (1, "hi"), (2, "Hello world"), (3, "again"), (4, "Again")]
        assert [t.kind for t in h.tasks(kind="generation", state="terminal")] == ["generation", "generation"]
        assert h.wait_for_task(1).state == r.Terminal(r.Done({"seq": 2}))
        assert h.wake() == durable.Wake(False, None)
        assert h.root.live() == r.Live(usage=used(2, 20, 5))
        assert h.root.usage() == h.usage() == used(2, 20, 5)
        assert h.conversations() == [r.ConversationInfo("root", 4, usage=used(2, 20, 5))]
    assert h.harness.state is durable.HarnessState.CLOSED
    with durable.sync.open_harness(path, model=FauxModel(), backend=backend) as h:
        assert h.root.submission(sub.id).get().status == r.Answered("Hello world", 2)
        assert h.root.submission(sub.id).answer() == "Hello world"


def test_submit_returns_after_the_commit_while_wait_blocks_until_the_run_settles(path):
    started = threading.Event()
    release: list[anyio.Event] = []

    async def gate(q: str) -> str:
        """Waits until the test releases it."""
        release.append(anyio.Event())
        started.set()
        await release[0].wait()
        return "opened"

    tool = durable.define_tool("gate", execute=gate)
    model = FauxModel([faux.reply("", tool_calls=[faux.call("gate", {"q": "x"})]), faux.reply("Done.")])
    with durable.sync.open_harness(path, model=model, tools=[tool], settings=FAST) as h:
        sub = h.root.submit("open it")
        assert stored_entries(path)[0] == r.UserEntry("open it", sub.id)  # on disk when submit returned
        settled: list[r.SubmissionStatus] = []
        waiter = threading.Thread(target=lambda: settled.append(sub.wait()))
        waiter.start()
        assert started.wait(timeout=30)
        assert settled == [] and waiter.is_alive()
        h.portal.call(release[0].set)
        waiter.join(timeout=30)
        assert settled == [r.Answered("Done.", 4)]


def test_a_wait_blocked_in_another_thread_ends_with_harness_closed_when_the_block_is_left(path):
    errors: list[BaseException] = []

    def wait(sub: durable.sync.SubmissionHandle) -> None:
        try:
            sub.wait()
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    with durable.sync.open_harness(path, model=FauxModel([faux.hang("...")]), settings=FAST) as h:
        sub = h.root.submit("never answered")
        waiter = threading.Thread(target=wait, args=(sub,))
        waiter.start()
        for live in h.root.follow():
            if live.generation is not None and live.generation.message.text == "...":
                break
        # A gate, not a sleep: the block is left only once the waiter waits for the settlement
        # (its event exists only while someone waits on it); earlier, it would be refused as
        # "closing" instead.
        session = h._harness.session
        while not h.portal.call(lambda: sub.id in session._settled):
            pass
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    assert [(type(e), str(e)) for e in errors] == [
        (durable.HarnessClosed, f"The harness on {path} closed while this call was waiting")]


def test_a_follower_that_reads_on_after_the_close_still_gets_every_committed_document(path):
    model = FauxModel([faux.reply("One two three")], token_size=4)
    closed = threading.Event()
    seen: list[r.Live] = []

    def follow(h: durable.sync.Harness, first: threading.Event) -> None:
        for live in h.root.follow():
            seen.append(live)
            first.set()
            closed.wait(timeout=30)  # the rest is read only once the harness has closed

    first = threading.Event()
    with durable.sync.open_harness(path, model=model, settings=FAST) as h:
        follower = threading.Thread(target=follow, args=(h, first))
        follower.start()
        assert first.wait(timeout=30)
        assert h.root.submit("count").wait() == r.Answered("One two three", 2)
    closed.set()
    follower.join(timeout=30)
    assert not follower.is_alive()
    assert seen[0] == r.Live() and seen[-1] == r.Live(usage=used(1, 10, 4)) and len(seen) > 2  # start, partials, end


def test_follow_is_an_iterator_of_committed_live_documents_that_ends_at_close(path):
    model = FauxModel([faux.reply("One two three")], token_size=4)
    seen: list[r.Live] = []
    following = threading.Event()

    def follow(h: durable.sync.Harness) -> None:
        for live in h.root.follow():
            seen.append(live)
            following.set()

    with durable.sync.open_harness(path, model=model, settings=FAST) as h:
        follower = threading.Thread(target=follow, args=(h,))
        follower.start()
        assert following.wait(timeout=30)  # a gate: the submission starts once the follower follows
        h.root.submit("count").wait()
    follower.join(timeout=30)
    assert not follower.is_alive()  # the iterator ended when the harness closed
    assert seen[0] == r.Live() and seen[-1] == r.Live(usage=used(1, 10, 4))
    partials = [live.generation.message.text for live in seen if live.generation is not None]
    assert partials[-1] == "One two three" and partials == sorted(partials, key=len)


def test_a_follower_between_two_documents_when_the_harness_closes_ends_without_an_error(path):
    seen: list[r.Live] = []
    errors: list[BaseException] = []
    got_first, closed = threading.Event(), threading.Event()

    def follow(h: durable.sync.Harness) -> None:
        try:
            for live in h.root.follow():
                seen.append(live)
                got_first.set()
                assert closed.wait(timeout=30)  # a gate: the next document is asked for after the close
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion below
            errors.append(exc)

    with durable.sync.open_harness(path, model=FauxModel([]), settings=FAST) as h:
        follower = threading.Thread(target=follow, args=(h,))
        follower.start()
        assert got_first.wait(timeout=30)
    closed.set()
    follower.join(timeout=30)
    assert not follower.is_alive()
    assert (seen, errors) == ([r.Live()], [])


def test_following_a_closed_harness_is_refused(path):
    with durable.sync.open_harness(path, model=FauxModel([]), settings=FAST) as h:
        pass
    with pytest.raises(durable.HarnessClosed, match="is closed; it accepts no more work"):
        next(iter(h.root.follow()))


def test_errors_reach_the_caller_with_their_own_classes(path):
    model = FauxModel([faux.hang("Thinking")])
    with durable.sync.open_harness(path, model=model, settings=FAST) as h:
        with pytest.raises(durable.SessionLocked):  # a second owner of the file, in this process
            with durable.sync.open_harness(path, model=model):
                pass
        first = h.root.submit("first")
        for live in h.root.follow():
            if live.generation is not None and live.generation.message.text == "Thinking":
                break
        with pytest.raises(durable.ConversationBusy, match="Conversation 'root' is busy"):
            h.root.submit("second", when_busy="reject")
        with pytest.raises(ValueError, match="must be non-empty text"):
            h.root.submit("  ")
        with pytest.raises(durable.ToolResultRejected):
            h.submit_tool_result("call_nope", "x")
        with pytest.raises(durable.UnknownSubmission):
            h.root.submission("sub_nope").get()
        h.root.abort()
        with pytest.raises(durable.SubmissionUnanswered) as caught:
            first.answer()
        assert (caught.value.reason, caught.value.detail) == ("aborted", "The run was aborted")
    with pytest.raises(durable.HarnessClosed, match=f"The harness on {path} is closed"):
        h.root.submit("late")


def test_an_exception_in_the_block_closes_the_harness_cleanly_and_propagates(path):
    model = FauxModel([faux.hang("Half an ans")])

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with durable.sync.open_harness(path, model=model, settings=FAST) as h:
            h.root.submit("hi")
            for live in h.root.follow():
                if live.generation is not None and live.generation.message.text == "Half an ans":
                    raise Boom()
    # A clean close, not a crash: the request is sent again without a charge.
    with durable.sync.open_harness(path, model=FauxModel([faux.reply("Whole answer")]), settings=FAST) as h:
        task = h.task(1)
        assert task is not None and (task.state, task.restarts) == (r.Pending(), 0)
        [first] = h.root.entries(1, 1)
        assert isinstance(first.entry, r.UserEntry) and first.entry.submission_id is not None
        assert h.root.submission(first.entry.submission_id).wait() == r.Answered("Whole answer", 3)
    assert [(type(e).__name__, e.text) for e in stored_entries(path)] == [
        ("UserEntry", "hi"), ("AssistantEntry", "Half an ans"), ("AssistantEntry", "Whole answer")]
    assert stored_entries(path)[1] == r.AssistantEntry(  # kept as a partial, not charged as an interruption
        "Half an ans", "aborted", usage=stored_entries(path)[1].usage, error=None, attempt=1, model="faux")


def test_a_failed_open_raises_and_leaves_no_thread(tmp_path):
    not_a_session = tmp_path / "notes.txt"
    not_a_session.write_text("not sqlite at all, just some text that is long enough " * 100)
    with pytest.raises(durable.NotASession):
        with durable.sync.open_harness(str(not_a_session), model=FauxModel()):
            pass


def test_close_is_idempotent_and_ends_the_thread(path):
    h = durable.sync.open_harness(path, model=FauxModel([faux.reply("x")]))
    with h:
        pass
    h.close()
    h.close()
    with pytest.raises(RuntimeError, match="entered only once"):
        with h:
            pass


# --------------------------------------------------------------------------- SIGKILL and resume


CHILD = textwrap.dedent("""
    import sys

    import durable
    import durable.sync
    from durable.models import FauxModel, faux

    settings = durable.Settings(progress=durable.Progress(persist_within=0))
    with durable.sync.open_harness(sys.argv[1], model=FauxModel([faux.hang("Hello wor")]), settings=settings) as h:
        sub = h.root.submit("hi")
        for live in h.root.follow():
            if live.generation is not None and live.generation.message.text == "Hello wor":
                print("partial", sub.id, flush=True)  # committed: the parent kills now
    """)


def test_a_sync_program_killed_mid_stream_resumes_on_reopen_with_the_interrupted_attempt_charged(tmp_path, path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        line = child.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("partial "), (line, child.stderr.read() if child.poll() is not None else "")  # type: ignore[union-attr]
        sid = line.split()[1]
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL

    reports: list[durable.Report] = []
    model = FauxModel([faux.reply("Hello world")])
    with durable.sync.open_harness(path, model=model, settings=FAST, report=reports.append) as h:
        task = h.task(1)
        assert task is not None and (task.state, task.restarts, task.checkpoint) == (r.Pending(), 1, Request(1))
        assert h.root.submission(sid).wait() == r.Answered("Hello world", 3)
        assert h.root.live() == r.Live(usage=used(2, 10, 3))  # the request the kill cut off, and attempt 2
    entries = stored_entries(path)
    assert entries[0] == r.UserEntry("hi", sid)
    assert entries[1] == r.AssistantEntry("Hello wor", "aborted", usage=entries[1].usage,  # type: ignore[union-attr]
                                          error=HOST_STOPPED_1, attempt=1, interrupted=True, model="faux")
    assert (entries[2].text, entries[2].stop_reason, entries[2].attempt) == (  # type: ignore[union-attr]
        "Hello world", "stop", 2)
    assert len(entries) == 3
    assert model.requests[0].messages == (r.UserEntry("hi", sid),) and model.requests[0].attempt == 2
    assert [(type(x).__name__, x.reason, x.restarts, x.detail) for x in reports] == [  # type: ignore[union-attr]
        ("TaskInterrupted", "interrupted", 1, HOST_STOPPED_1)]
