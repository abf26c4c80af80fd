"""One conformance suite for every store: what the engine may rely on, whatever the backend.

Each test runs on `MemoryStorage`, on `SQLiteStorage`, and on `SQLiteStorage` reopened after every
commit (see conftest). Assertions are exact: what is read back equals what was committed.
"""

from __future__ import annotations

import os

import pytest

from durable.errors import CommitFailed, SessionLocked, StorageClosed, StorageError
from durable.records import (
    Answered,
    Done,
    ErrorDetail,
    ErrorInfo,
    Failed,
    GenerationLive,
    Live,
    Running,
    Sleeping,
    Terminal,
    Unanswered,
    Waiting,
)
from durable.storage import Batch, ConversationState, Opened
from durable.tasks.generation.records import Prepare
from durable.tasks.tool import ToolProgress

from .builders import assistant, busy, compaction, submission, task, user

pytestmark = pytest.mark.anyio


async def reopen(backend, store):
    """Close `store` and open the file again: what a new process would find."""
    await store.close()
    again = backend.store()
    opened = await again.open()
    return again, opened


# ----------------------------------------------------------------------------- opening


async def test_a_new_store_opens_empty_and_reads_nothing(backend):
    store = backend.store()
    assert await store.open() == Opened(conversations={}, live_tasks=[], unsettled=[], next_task_id=1)
    assert await store.get_task(1) is None
    assert await store.get_entries("root") == []
    assert await store.get_submission("s1") is None
    assert await store.get_live("root") is None
    assert await store.find_tasks() == []
    await store.close()


async def test_an_empty_store_closed_and_reopened_is_still_empty(backend, store):
    store, opened = await reopen(backend, store)
    assert opened == Opened(conversations={}, live_tasks=[], unsettled=[], next_task_id=1)
    await store.close()


# ----------------------------------------------------------------------------- committing


async def test_a_committed_batch_reads_back_exactly_and_survives_a_reopen(backend, store):
    t1 = task(1, state=Running(), checkpoint=Prepare(attempt=1), created_at=10.0, updated_at=11.5)
    t2 = task(2, kind="tool", parent_id=1, state=Waiting(client=True), checkpoint=ToolProgress("partial"))
    entries = [user(1, "hello"), assistant(2, "hi"), user(3, "again")]
    s1 = submission("s1", seq=3)
    live = Live(run=busy(1, "s1").run, generation=GenerationLive(attempt=1))

    await store.commit(Batch(tasks=[t1, t2], entries=entries, submissions=[s1], live={"root": live}))

    assert await store.get_task(1) == t1
    assert await store.get_task(2) == t2
    assert await store.get_entries("root") == entries
    assert await store.get_submission("s1") == s1
    assert await store.get_live("root") == live
    assert await store.find_tasks() == [t1, t2]

    store, opened = await reopen(backend, store)
    assert opened == Opened(
        conversations={"root": ConversationState(last_seq=3, live=live, last_compaction=None)},
        live_tasks=[t1, t2],
        unsettled=[s1],
        next_task_id=3,
    )
    assert await store.get_entries("root") == entries
    await store.close()


async def test_an_empty_batch_commits_nothing(backend, store):
    await store.commit(Batch())
    store, opened = await reopen(backend, store)
    assert opened == Opened(conversations={}, live_tasks=[], unsettled=[], next_task_id=1)
    await store.close()


async def test_a_later_task_state_replaces_the_earlier_one(backend, store):
    await store.commit(Batch(tasks=[task(1)]))
    running = task(1, state=Running(), checkpoint=Prepare(2))
    await store.commit(Batch(tasks=[running]))
    assert await store.get_task(1) == running
    assert await store.find_tasks(state="pending") == []
    assert await store.find_tasks(state="running") == [running]

    done = task(1, state=Terminal(Done({"answer": 42})), checkpoint=Prepare(2))
    await store.commit(Batch(tasks=[done]))
    assert await store.get_task(1) == done
    assert await store.find_tasks(state="running") == []
    assert await store.find_tasks(state="terminal") == [done]


async def test_terminal_tasks_disappear_from_the_live_tasks_but_still_count_for_the_next_id(backend, store):
    await store.commit(Batch(tasks=[task(1), task(2), task(3)]))
    failed = task(3, state=Terminal(Failed(ErrorInfo("no", ErrorDetail("model_error")))))
    await store.commit(Batch(tasks=[task(1, state=Terminal(Done())), failed]))

    store, opened = await reopen(backend, store)
    assert opened.live_tasks == [task(2)]
    assert opened.next_task_id == 4
    assert await store.get_task(3) == failed  # terminal tasks are kept, only not loaded on open
    await store.close()


async def test_a_terminal_task_made_live_again_is_loaded_again(backend, store):
    # The flag follows the state on every upsert, in both directions.
    await store.commit(Batch(tasks=[task(1, state=Terminal(Done()))]))
    await store.commit(Batch(tasks=[task(1, state=Sleeping(until=99.5))]))
    store, opened = await reopen(backend, store)
    assert opened.live_tasks == [task(1, state=Sleeping(until=99.5))]
    await store.close()


async def test_within_one_batch_the_last_write_of_a_task_or_submission_wins(backend, store):
    await store.commit(
        Batch(
            tasks=[task(1), task(1, state=Running()), task(2)],
            submissions=[submission("s1"), submission("s1", status=Answered())],
        )
    )
    assert await store.get_task(1) == task(1, state=Running())
    assert await store.find_tasks() == [task(1, state=Running()), task(2)]
    assert await store.get_submission("s1") == submission("s1", status=Answered())


async def test_a_settled_submission_is_no_longer_unsettled(backend, store):
    await store.commit(Batch(submissions=[submission("s1"), submission("s2"), submission("s3")]))
    await store.commit(
        Batch(submissions=[submission("s2", status=Unanswered("aborted", "The run was aborted")),
                           submission("s3", status=Answered())])
    )
    assert await store.get_submission("s2") == submission("s2", status=Unanswered("aborted", "The run was aborted"))
    store, opened = await reopen(backend, store)
    assert opened.unsettled == [submission("s1")]
    await store.close()


async def test_unsettled_submissions_come_back_in_the_order_they_were_first_committed(backend, store):
    await store.commit(Batch(submissions=[submission("zeta"), submission("alpha", conversation_id="other")]))
    await store.commit(Batch(submissions=[submission("mid")]))
    await store.commit(Batch(submissions=[submission("zeta", seq=4)]))  # an update keeps its place
    store, opened = await reopen(backend, store)
    assert opened.unsettled == [submission("zeta", seq=4), submission("alpha", conversation_id="other"), submission("mid")]
    await store.close()


async def test_a_later_live_document_replaces_the_earlier_one(backend, store):
    await store.commit(Batch(live={"root": busy(1, "s1")}))
    await store.commit(Batch(live={"root": Live(compactions=2)}))
    assert await store.get_live("root") == Live(compactions=2)


async def test_open_returns_each_conversation_with_its_last_seq_live_document_and_last_compaction(backend, store):
    await store.commit(
        Batch(
            entries=[user(1), assistant(2), compaction(3, 2), user(4), assistant(5)],
            live={"root": Live(compactions=1)},
        )
    )
    await store.commit(Batch(entries=[compaction(6, 5), user(7)], live={"root": busy(9, "s9")}))
    await store.commit(Batch(entries=[user(1, conversation_id="child")], live={"child": Live()}))
    await store.commit(Batch(live={"idle": Live()}))

    store, opened = await reopen(backend, store)
    assert opened.conversations == {
        "root": ConversationState(last_seq=7, live=busy(9, "s9"), last_compaction=compaction(6, 5)),
        "child": ConversationState(last_seq=1, live=Live(), last_compaction=None),
        "idle": ConversationState(last_seq=0, live=Live(), last_compaction=None),
    }
    await store.close()


async def test_get_entries_returns_exactly_the_asked_range(backend, store):
    entries = [user(seq) for seq in range(1, 11)]
    await store.commit(Batch(entries=entries[:6]))
    await store.commit(Batch(entries=entries[6:] + [user(1, conversation_id="other")]))

    assert await store.get_entries("root") == entries
    assert await store.get_entries("root", 3, 5) == entries[2:5]
    assert await store.get_entries("root", 4) == entries[3:]
    assert await store.get_entries("root", 8, 100) == entries[7:]
    assert await store.get_entries("root", 1, 1 << 62) == entries
    assert await store.get_entries("root", 0, 2) == entries[:2]
    assert await store.get_entries("root", 7, 7) == [entries[6]]
    assert await store.get_entries("root", 11) == []
    assert await store.get_entries("root", 5, 4) == []
    assert await store.get_entries("other") == [user(1, conversation_id="other")]
    assert await store.get_entries("nobody") == []


async def test_get_context_gives_the_sent_entries_of_the_range_as_stored_with_their_token_total(backend, store):
    from durable import codec
    from durable.records import AssistantEntry, Entry, StoredEntry
    from durable.storage.protocol import RawContext
    from durable.tokens import entry_tokens

    odd = StoredEntry("root", 3, AssistantEntry("a \x1e record separator, a } brace, and non-ASCII: é 日本", "stop"))
    aborted = StoredEntry("root", 5, AssistantEntry("half an ans", "aborted"))  # never sent again
    entries = [user(1), assistant(2), odd, user(4), aborted, user(6), compaction(7, 4), user(8)]
    await store.commit(Batch(entries=entries[:4]))
    await store.commit(Batch(entries=[*entries[4:], user(1, "elsewhere", conversation_id="other")]))

    def raw(*kept):
        return RawContext([e.seq for e in kept], [codec.dumps(e.entry, Entry) for e in kept],
                          sum(entry_tokens(e.entry) for e in kept))

    def plain(context):
        return RawContext(list(context.seqs), list(context.bodies), context.tokens)

    assert plain(await store.get_context("root", 1, 8)) == raw(user(1), assistant(2), odd, user(4), user(6), user(8))
    assert plain(await store.get_context("root", 4, 8)) == raw(user(4), user(6), user(8))
    assert plain(await store.get_context("root", 3, 3)) == raw(odd)
    assert plain(await store.get_context("root", 5, 5)) == raw()
    assert plain(await store.get_context("root", 9, 20)) == raw()
    assert plain(await store.get_context("other", 1, 1)) == raw(user(1, "elsewhere", conversation_id="other"))
    assert plain(await store.get_context("nobody", 1, 10)) == raw()


async def test_get_context_of_a_long_conversation_with_gaps_gives_every_sent_entry_in_order(backend, store):
    # Long enough to be read in parts by a store that reads in parts (SQLite: 512 seqs a part),
    # with gaps longer than a part, entries never sent again and a compaction on the way.
    from durable import codec
    from durable.records import AssistantEntry, Entry, StoredEntry
    from durable.storage.protocol import RawContext
    from durable.tokens import entry_tokens

    seqs = [*range(1, 700), *range(2000, 2600), 5000, *range(5001, 5003)]
    entries = []
    for s in seqs:
        if s % 97 == 0:
            entries.append(StoredEntry("root", s, AssistantEntry(f"half {s}", "aborted")))  # never sent again
        elif s == 2100:
            entries.append(compaction(s, 1000))
        else:
            entries.append(user(s) if s % 2 else assistant(s, f"answer {s} \x1e é"))
    for start in range(0, len(entries), 300):
        await store.commit(Batch(entries=entries[start:start + 300]))
    await store.commit(Batch(entries=[user(1, "elsewhere", conversation_id="other"), user(3000, conversation_id="other")]))

    def raw(lo, hi):
        kept = [e for e in entries if lo <= e.seq <= hi and e.seq % 97 and e.seq != 2100]
        return RawContext([e.seq for e in kept], [codec.dumps(e.entry, Entry) for e in kept],
                          sum(entry_tokens(e.entry) for e in kept))

    def plain(context):
        return RawContext(list(context.seqs), list(context.bodies), context.tokens)

    for lo, hi in [(1, 6000), (1, 5002), (512, 2000), (513, 2100), (600, 1999), (700, 1999), (2099, 2101),
                   (1024, 4999), (4999, 9 * 10**18)]:
        assert plain(await store.get_context("root", lo, hi)) == raw(lo, hi), (lo, hi)
    assert len((await store.get_context("root", 1, 6000)).seqs) == len(seqs) - 13 - 1


async def test_find_tasks_applies_every_filter_and_the_limit_in_id_order(backend, store):
    gen = task(1, state=Running())
    tool_a = task(2, kind="tool", parent_id=1, state=Running())
    tool_b = task(3, kind="tool", parent_id=1, state=Terminal(Done("ok")))
    comp = task(4, kind="compaction", conversation_id="child")
    gen_child = task(5, conversation_id="child", state=Waiting(on=(6,)))
    tool_child = task(6, kind="tool", parent_id=5, conversation_id="child")
    # Committed out of order: results still come by id.
    await store.commit(Batch(tasks=[tool_child, comp, gen]))
    await store.commit(Batch(tasks=[tool_b, gen_child, tool_a]))

    assert await store.find_tasks() == [gen, tool_a, tool_b, comp, gen_child, tool_child]
    assert await store.find_tasks(kind="tool") == [tool_a, tool_b, tool_child]
    assert await store.find_tasks(state="running") == [gen, tool_a]
    assert await store.find_tasks(state="terminal") == [tool_b]
    assert await store.find_tasks(state="waiting") == [gen_child]
    assert await store.find_tasks(conversation_id="child") == [comp, gen_child, tool_child]
    assert await store.find_tasks(parent_id=1) == [tool_a, tool_b]
    assert await store.find_tasks(kind="tool", state="running") == [tool_a]
    assert await store.find_tasks(kind="tool", conversation_id="child", parent_id=5) == [tool_child]
    assert await store.find_tasks(kind="generation", state="sleeping") == []
    assert await store.find_tasks(kind="tool", limit=2) == [tool_a, tool_b]
    assert await store.find_tasks(limit=1) == [gen]
    assert await store.find_tasks(kind="nothing") == []


# ----------------------------------------------------------------------------- refused commits


async def _committed_baseline(store) -> None:
    await store.commit(
        Batch(tasks=[task(1)], entries=[user(1), assistant(2)], submissions=[submission("s1")],
              live={"root": busy(1, "s1")})
    )


async def _assert_only_the_baseline(backend, store):
    """Nothing of a refused batch is visible, also after a reopen. Returns the reopened store."""
    for s in (store, None):
        if s is None:
            s, opened = await reopen(backend, store)
            assert opened == Opened(
                conversations={"root": ConversationState(2, busy(1, "s1"), None)},
                live_tasks=[task(1)],
                unsettled=[submission("s1")],
                next_task_id=2,
            )
        assert await s.find_tasks() == [task(1)]
        assert await s.get_entries("root") == [user(1), assistant(2)]
        assert await s.get_entries("side") == []
        assert await s.get_submission("s1") == submission("s1")
        assert await s.get_submission("s2") is None
        assert await s.get_live("root") == busy(1, "s1")
        assert await s.get_live("side") is None
    return s


def _batch_touching_everything(**change) -> Batch:
    """A batch that touches every kind of row on top of the baseline; a `change` makes it unstorable."""
    fields = dict(
        tasks=[task(1, state=Running()), task(2, kind="tool", parent_id=1)],
        entries=[user(1, conversation_id="side"), user(3)],
        submissions=[submission("s1", status=Answered()), submission("s2")],
        live={"root": Live(), "side": busy(2)},
    )
    fields.update(change)
    return Batch(**fields)


async def _refused_whole(backend, store, change: dict):
    """Commit the baseline, then `_batch_touching_everything(**change)`: it is refused with
    `CommitFailed` naming the store and nothing of it is written. Returns the refusal and the store
    to go on with (see `_assert_only_the_baseline`)."""
    await _committed_baseline(store)
    with pytest.raises(CommitFailed) as refused:
        await store.commit(_batch_touching_everything(**change))
    assert store.location in str(refused.value)
    return refused.value, await _assert_only_the_baseline(backend, store)


@pytest.mark.parametrize(
    "why, change",
    [
        ("an entry seq already committed", dict(entries=[user(1, conversation_id="side"), user(3), user(2)])),
        ("the same entry seq twice in the batch", dict(entries=[user(1, conversation_id="side"), user(3), user(3, "twice")])),
    ],
)
async def test_a_batch_whose_entry_seq_collides_is_refused_whole_and_the_store_keeps_working(
    backend, store, why, change
):
    refused, store = await _refused_whole(backend, store, change)
    assert "UNIQUE" in str(refused)
    good = _batch_touching_everything()
    await store.commit(good)
    assert await store.find_tasks() == good.tasks
    assert await store.get_entries("root") == [user(1), assistant(2), user(3)]
    assert await store.get_submission("s2") == submission("s2")
    assert await store.get_live("side") == busy(2)
    await store.close()


@pytest.mark.parametrize(
    "why, change",
    [
        ("an object JSON cannot hold", dict(tasks=[task(1, state=Terminal(Done(result=object())))])),
        ("a set in a result", dict(tasks=[task(2, kind="tool", state=Terminal(Done(result={1, 2})))])),
        ("a task id past 64 bits", dict(tasks=[task(1 << 64)])),
        ("an entry seq past 64 bits", dict(entries=[user(3), user(1 << 63)])),
    ],
)
async def test_a_batch_with_a_value_that_cannot_be_stored_raises_commit_failed_and_writes_nothing(
    backend, store, why, change
):
    _, store = await _refused_whole(backend, store, change)
    await store.close()


async def test_text_with_a_lone_surrogate_is_stored_and_read_back_exactly(backend, store):
    # Text decoded with errors="surrogateescape" (a tool's raw output) is not valid UTF-8.
    weird = user(1, "bytes \udcff\udcfe from a tool")
    t = task(1, state=Terminal(Done("\ud800")))
    await store.commit(Batch(tasks=[t], entries=[weird]))
    store, _ = await reopen(backend, store)
    assert await store.get_entries("root") == [weird]
    assert await store.get_task(1) == t
    await store.close()


# ----------------------------------------------------------------------------- ownership and closing


async def test_a_second_open_while_open_is_refused_and_the_owner_keeps_working(backend, store):
    await _committed_baseline(store)
    second = backend.store()
    with pytest.raises(SessionLocked) as refused:
        await second.open()
    assert refused.value.pid == os.getpid()
    assert store.location in str(refused.value) and str(os.getpid()) in str(refused.value)

    await store.commit(Batch(entries=[user(3)]))
    assert await store.get_entries("root", 3) == [user(3)]

    store, opened = await reopen(backend, store)
    assert opened.conversations["root"].last_seq == 3
    await store.close()


async def test_every_operation_after_close_raises_storage_closed(backend, store):
    await _committed_baseline(store)
    await store.close()
    await store.close()  # idempotent
    calls = {
        "commit": lambda: store.commit(Batch(entries=[user(3)])),
        "get_task": lambda: store.get_task(1),
        "find_tasks": lambda: store.find_tasks(),
        "get_entries": lambda: store.get_entries("root"),
        "get_submission": lambda: store.get_submission("s1"),
        "get_live": lambda: store.get_live("root"),
    }
    for name, call in calls.items():
        with pytest.raises(StorageClosed) as closed:
            await call()
        assert isinstance(closed.value, StorageError), name
        assert store.location in str(closed.value), name

    # Closing released the file: a new opener finds everything, and nothing of the refused commit.
    again = backend.store()
    opened = await again.open()
    assert opened.conversations["root"].last_seq == 2
    await again.close()

