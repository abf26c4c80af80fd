"""Every record survives the codec and the store unchanged; a stored value of the wrong shape is
refused with an error that names the record and the file."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import typing

import attrs
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from durable import codec, records as r
from durable.errors import CorruptSession, SessionLocked
from durable.storage import Batch, ConversationState, MemoryStorage, Opened, SQLiteStorage
from durable.tasks.generation.records import Prepare

from .builders import busy, submission, task, user
from .strategies import (
    CHECKPOINT_CASES,
    INPUT_CASES,
    LIVE_WITH_EVERY_PART,
    RECORD_CLASSES,
    STATE_CASES,
    TEXT,
    records,
    variants,
)

EXAMPLES = settings(max_examples=40, deadline=None)


def round_trips(value, cls) -> None:
    """Through plain data and through JSON text, the value comes back equal."""
    assert codec.from_data(codec.to_data(value, cls), cls) == value
    text = codec.dumps(value, cls)
    assert codec.loads(text, cls) == value
    assert codec.loads(text.encode("utf-8"), cls) == value


# ----------------------------------------------------------------------------- the tag tables


def test_every_union_has_a_tag_for_each_of_its_variants_and_no_other():
    for union, tags in codec._TAGS.items():
        assert set(tags.values()) == set(variants(union)), union
        assert len(set(tags.values())) == len(tags), f"two tags for one class in {union}"


def test_every_union_of_records_in_a_record_field_has_a_tag_table():
    # A new variant class, or a new union field, without tags would be stored untagged.
    tagged = {frozenset(variants(u)) for u in codec._TAGS}
    for cls in RECORD_CLASSES:
        for name, hint in typing.get_type_hints(cls).items():
            members = frozenset(a for a in typing.get_args(hint) if attrs.has(a))
            if len(members) > 1:
                assert members in tagged, f"{cls.__name__}.{name}: {hint}"


@pytest.mark.parametrize(
    "union, tag, cls",
    [(u, t, c) for u, tags in codec._TAGS.items() for t, c in tags.items()],
    ids=[f"{t}" for tags in codec._TAGS.values() for t in tags],
)
@EXAMPLES
@given(data=st.data())
def test_each_variant_is_stored_under_its_tag(union, tag, cls, data):
    value = data.draw(records(cls))
    stored = codec.to_data(value, union)
    assert stored["type"] == tag
    assert codec.tag_of(value) == tag
    assert codec.from_data(stored, union) == value
    assert codec.from_data(stored, typing.Optional[union]) == value
    assert codec.from_data(None, typing.Optional[union]) is None


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("cls", RECORD_CLASSES, ids=lambda c: c.__name__)
@EXAMPLES
@given(data=st.data())
def test_every_record_round_trips_through_the_codec(cls, data):
    round_trips(data.draw(records(cls)), cls)


@pytest.mark.parametrize("name, state", STATE_CASES, ids=[n for n, _ in STATE_CASES])
@EXAMPLES
@given(data=st.data())
def test_a_task_round_trips_in_every_state_and_outcome(name, state, data):
    round_trips(data.draw(records(r.Task, state=state)), r.Task)


@pytest.mark.parametrize("name, checkpoint", CHECKPOINT_CASES, ids=[n for n, _ in CHECKPOINT_CASES])
@EXAMPLES
@given(data=st.data())
def test_a_task_round_trips_with_every_checkpoint(name, checkpoint, data):
    round_trips(data.draw(records(r.Task, checkpoint=checkpoint)), r.Task)


@pytest.mark.parametrize("name, task_input", INPUT_CASES, ids=[n for n, _ in INPUT_CASES])
@EXAMPLES
@given(data=st.data())
def test_a_task_round_trips_with_every_input(name, task_input, data):
    round_trips(data.draw(records(r.Task, input=task_input)), r.Task)


@pytest.mark.parametrize("cls", variants(r.Entry), ids=lambda c: c.__name__)
@EXAMPLES
@given(data=st.data())
def test_every_entry_round_trips_on_its_own_and_at_its_place(cls, data):
    entry = data.draw(records(cls))
    round_trips(entry, r.Entry)
    round_trips(r.StoredEntry("root", 3, entry), r.StoredEntry)


@pytest.mark.parametrize("cls", variants(r.SubmissionStatus), ids=lambda c: c.__name__)
@EXAMPLES
@given(data=st.data())
def test_a_submission_round_trips_with_every_status(cls, data):
    round_trips(data.draw(records(r.Submission, status=records(cls))), r.Submission)


@EXAMPLES
@given(live=LIVE_WITH_EVERY_PART)
def test_a_live_document_with_every_part_round_trips(live):
    assert live.run and live.generation and live.generation.retry and live.generation.deferred
    assert live.tools and live.run_failure and live.compaction_failure
    round_trips(live, r.Live)


def test_a_value_json_cannot_hold_is_refused_with_a_codec_error():
    with pytest.raises(codec.CodecError, match="not JSON serializable"):
        codec.dumps(r.Terminal(r.Done(result=object())), r.State)


def test_text_with_lone_surrogates_round_trips_as_escaped_utf8():
    entry = r.UserEntry("raw \udcff bytes")
    text = codec.dumps(entry, r.Entry)
    text.encode("utf-8")  # storable in a TEXT column
    assert codec.loads(text, r.Entry) == entry
    assert codec.dumps(r.UserEntry("ünïcødé"), r.Entry) == '{"type":"user","text":"ünïcødé","submission_id":null}'


class _Text(str):
    pass


@pytest.mark.parametrize("result, stored", [
    (float("nan"), "NaN"),
    ([float("inf"), -float("inf"), 1e16, -0.0, 0.1], "[Infinity,-Infinity,1e+16,-0.0,0.1]"),
    (2**70, "1180591620717411303424"),
    ({1: "a", None: "b", 2.5: "c", True: "d"}, '{"1":"d","null":"b","2.5":"c"}'),
    ((1, (2, "x")), '[1,[2,"x"]]'),
    ({"k": _Text("v"), "q": 'a "quoted" \\ line\n\t'}, '{"k":"v","q":"a \\"quoted\\" \\\\ line\\n\\t"}'),
    ({"nested": {"ünï": ["cødé", None, False]}}, '{"nested":{"ünï":["cødé",null,false]}}'),
])
def test_a_done_result_is_stored_as_the_standard_json_text(result, stored):
    """The exact text of values whose JSON has edges (NaN, big integers, non-string keys, str
    subclasses, escapes): what `json.dumps` with compact separators writes, and it loads back."""
    text = codec.dumps(r.Done(result=result), r.Outcome)
    assert text == '{"type":"done","result":' + stored + "}"
    assert text == json.dumps({"type": "done", "result": result}, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("result, message", [
    ({b"bytes key": 1}, "keys must be str, int, float, bool or None, not bytes"),
    ([1, {"deep": {1.5, 2.5}}], "Object of type set is not JSON serializable"),
])
def test_a_value_json_cannot_hold_anywhere_in_a_result_is_refused_with_its_reason(result, message):
    with pytest.raises(codec.CodecError, match=f"Done cannot be stored as JSON: {message}"):
        codec.dumps(r.Done(result=result), r.Outcome)


# ----------------------------------------------------------------------------- what the codec refuses


GOOD_TASK = codec.to_data(task(7, state=r.Sleeping(until=3.5), checkpoint=Prepare(2)), r.Task)


@pytest.mark.parametrize(
    "data, message",
    [
        ({**GOOD_TASK, "state": {"type": "dozing"}}, "unknown tag 'dozing' (expected one of pending, running, sleeping, waiting, terminal)"),
        ({**GOOD_TASK, "state": {"type": "terminal", "outcome": {"type": "meh"}}}, "unknown tag 'meh' (expected one of done, failed, aborted, faulted)"),
        ({**GOOD_TASK, "state": {"until": 3.5}}, "unknown tag None"),
        ({**GOOD_TASK, "state": "sleeping"}, "expected an object with a 'type' tag, got 'sleeping'"),
        ({**GOOD_TASK, "state": {"type": "sleeping", "until": 1.0, "snooze": 2}}, "extra fields found (snooze) @ $.state"),
        ({**GOOD_TASK, "mood": "grumpy"}, "extra fields found (mood) @ $"),
        ({k: v for k, v in GOOD_TASK.items() if k != "kind"}, "required field missing @ $.kind"),
        ({**GOOD_TASK, "restarts": "many"}, "expected int @ $.restarts"),
        ({**GOOD_TASK, "input": {"type": "compaction", "trigger": "boredom"}}, "boredom not in literal"),
        ([GOOD_TASK], "expected an object"),
    ],
    ids=["unknown-tag", "unknown-nested-tag", "missing-tag", "not-an-object", "unknown-field-in-variant",
         "unknown-field", "missing-field", "wrong-type", "bad-literal", "a-list"],
)
def test_a_value_of_the_wrong_shape_is_refused_with_a_sentence_saying_where(data, message):
    with pytest.raises(codec.CodecError) as refused:
        codec.from_data(data, r.Task)
    assert message in str(refused.value)


def test_text_that_is_not_json_is_refused():
    with pytest.raises(codec.CodecError, match="not valid JSON"):
        codec.loads("{nope", r.Task)


def test_a_codec_error_is_a_durable_error_and_still_a_value_error():
    import durable

    with pytest.raises(durable.DurableError) as refused:
        codec.loads("{nope", r.Task)
    assert isinstance(refused.value, ValueError)
    assert durable.CodecError is codec.CodecError


def test_a_stored_stop_reason_is_what_a_model_may_return_or_aborted():
    assert typing.get_args(r.StopReason) == (*typing.get_args(r.ModelStopReason), "aborted")
    assert typing.get_args(r.ModelStopReason) == ("stop", "tool_use", "length", "error")


# ----------------------------------------------------------------------------- through a store


_files = itertools.count()


def _unique_batches() -> st.SearchStrategy[Batch]:
    return st.builds(
        Batch,
        tasks=st.lists(records(r.Task), max_size=4, unique_by=lambda t: t.id),
        entries=st.lists(
            records(r.StoredEntry, seq=st.integers(1, (1 << 63) - 1)),  # a seq counts from 1
            max_size=5,
            unique_by=lambda e: (e.conversation_id, e.seq),
        ),
        submissions=st.lists(records(r.Submission), max_size=3, unique_by=lambda s: s.id),
        live=st.dictionaries(TEXT, records(r.Live), max_size=2),
    )


def _expected_opened(batch: Batch) -> Opened:
    conversations = {}
    for cid, doc in batch.live.items():
        mine = [e for e in batch.entries if e.conversation_id == cid]
        compactions = [e for e in mine if isinstance(e.entry, r.CompactionEntry)]
        conversations[cid] = ConversationState(
            last_seq=max((e.seq for e in mine), default=0),
            live=doc,
            last_compaction=max(compactions, key=lambda e: e.seq) if compactions else None,
        )
    return Opened(
        conversations=conversations,
        live_tasks=sorted((t for t in batch.tasks if not t.terminal), key=lambda t: t.id),
        unsettled=[s for s in batch.submissions if not s.settled],
        next_task_id=max((t.id for t in batch.tasks), default=0) + 1,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=_unique_batches())
async def test_any_batch_of_records_reads_back_equal_from_the_store_and_after_a_reopen(tmp_path, kind, batch):
    path = os.fspath(tmp_path / f"roundtrip-{next(_files)}.db")
    memory = MemoryStorage()

    def new_store():
        return memory if kind == "memory" else SQLiteStorage(path)

    store = new_store()
    await store.open()
    await store.commit(batch)
    for t in batch.tasks:
        assert await store.get_task(t.id) == t
    assert await store.find_tasks() == sorted(batch.tasks, key=lambda t: t.id)
    for cid in {e.conversation_id for e in batch.entries}:
        assert await store.get_entries(cid) == sorted((e for e in batch.entries if e.conversation_id == cid), key=lambda e: e.seq)
    for s in batch.submissions:
        assert await store.get_submission(s.id) == s
    for cid, doc in batch.live.items():
        assert await store.get_live(cid) == doc
    await store.close()

    store = new_store()
    assert await store.open() == _expected_opened(batch)
    await store.close()


# ----------------------------------------------------------------------------- corrupt rows in a file


def _raw(path: str, sql: str, *args) -> None:
    conn = sqlite3.connect(path)
    with conn:
        assert conn.execute(sql, args).rowcount == 1
    conn.close()


async def _session_with(tmp_path, *damage: tuple[str, int | str]) -> str:
    """A session file holding tasks 6, 7 (terminal) and 8 (running), entries 1-3 of "root",
    submissions s1 (queued) and s2 (answered) and root's live document; then each `(sql, key)` of
    `damage` changes one row in place. Returns its path."""
    path = os.fspath(tmp_path / "session.db")
    store = SQLiteStorage(path)
    await store.open()
    await store.commit(
        Batch(
            tasks=[task(6), task(7, state=r.Terminal(r.Done("ok"))), task(8, state=r.Running())],
            entries=[user(1), user(2), user(3)],
            submissions=[submission("s1"), submission("s2", status=r.Answered())],
            live={"root": busy(8, "s1")},
        )
    )
    await store.close()
    for sql, key in damage:
        _raw(path, sql, key)
    return path


def _assert_names(error: BaseException, *words: str) -> None:
    """The error's message holds every one of `words`."""
    message = str(error)
    assert all(word in message for word in words), (message, words)


CORRUPTIONS = {
    "unknown-state-tag": ("UPDATE tasks SET body = json_set(body, '$.state.type', 'dozing') WHERE id = ?", "Task {id}", "dozing"),
    "unknown-task-field": ("UPDATE tasks SET body = json_set(body, '$.mood', 'grumpy') WHERE id = ?", "Task {id}", "mood"),
    "task-not-json": ("UPDATE tasks SET body = 'garbage{' WHERE id = ?", "Task {id}", "not valid JSON"),
}


@pytest.mark.anyio
@pytest.mark.parametrize("how", list(CORRUPTIONS))
async def test_a_corrupt_terminal_task_is_refused_when_read_naming_the_task_and_the_file(tmp_path, how):
    sql, what, detail = CORRUPTIONS[how]
    path = await _session_with(tmp_path, (sql, 7))

    store = SQLiteStorage(path)
    opened = await store.open()  # a terminal task is not read on open
    assert [t.id for t in opened.live_tasks] == [6, 8]
    for read in (lambda: store.get_task(7), lambda: store.find_tasks(state="terminal")):
        with pytest.raises(CorruptSession) as refused:
            await read()
        _assert_names(refused.value, what.format(id=7), path, detail)
        assert refused.value.location == path
    assert await store.get_task(6) == task(6)  # the store keeps working
    await store.close()


@pytest.mark.anyio
@pytest.mark.parametrize("how", list(CORRUPTIONS))
async def test_a_corrupt_live_task_refuses_the_open_naming_the_task_and_the_file(tmp_path, how):
    sql, what, detail = CORRUPTIONS[how]
    path = await _session_with(tmp_path, (sql, 8))

    for _ in range(2):  # the refused open released the file: the second try is refused the same way
        with pytest.raises(CorruptSession) as refused:
            await SQLiteStorage(path).open()
        _assert_names(refused.value, what.format(id=8), path, detail)
        assert not isinstance(refused.value, SessionLocked)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "sql, key, what, detail",
    [
        ("UPDATE entries SET body = json_set(body, '$.type', 'poem') WHERE seq = ?", 2,
         "Entry 2 of conversation 'root'", "unknown tag 'poem'"),
        ("UPDATE submissions SET body = json_set(body, '$.status.type', 'lost') WHERE id = ?", "s2",
         "Submission s2", "unknown tag 'lost'"),
    ],
    ids=["entry", "settled-submission"],
)
async def test_a_corrupt_entry_or_submission_is_refused_when_read(tmp_path, sql, key, what, detail):
    path = await _session_with(tmp_path, (sql, key))
    store = SQLiteStorage(path)
    await store.open()
    with pytest.raises(CorruptSession) as refused:
        if isinstance(key, int):
            await store.get_entries("root")
        else:
            await store.get_submission(key)
    _assert_names(refused.value, what, path, detail)
    await store.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "sql, key, what, detail",
    [
        ("UPDATE documents SET body = json_set(body, '$.run.colour', 'red') WHERE conversation_id = ?", "root",
         "Live document of conversation 'root'", "colour"),
        ("UPDATE submissions SET body = json_set(body, '$.mood', 1) WHERE id = ?", "s1", "Submission s1", "mood"),
        ("UPDATE entries SET body = json_set(body, '$.type', 'poem') WHERE seq = ?", 3,
         "Entry 3 of conversation 'root'", "unknown tag 'poem'"),
    ],
    ids=["live-document", "unsettled-submission", "compaction-kind-entry"],
)
async def test_a_corrupt_row_that_open_reads_refuses_the_open(tmp_path, sql, key, what, detail):
    # An entry's key: make entry 3 the conversation's last compaction, then break its body.
    compaction = [("UPDATE entries SET kind = 'compaction' WHERE seq = ?", key)] if isinstance(key, int) else []
    path = await _session_with(tmp_path, *compaction, (sql, key))
    with pytest.raises(CorruptSession) as refused:
        await SQLiteStorage(path).open()
    _assert_names(refused.value, what, path, detail)


def test_a_stored_json_body_is_the_codec_text():
    # What the file holds is exactly `codec.dumps`: readable, tagged, compact.
    stored = codec.dumps(task(7, state=r.Sleeping(until=3.5)), r.Task)
    assert json.loads(stored)["state"] == {"type": "sleeping", "until": 3.5}
    assert ", " not in stored


def test_an_answered_status_stores_the_answer_text_and_seq_and_an_older_bare_one_still_loads():
    answered = r.Answered("It is 42.", 4)
    assert json.loads(codec.dumps(answered, r.SubmissionStatus)) == {"type": "done", "text": "It is 42.", "seq": 4}
    round_trips(answered, r.SubmissionStatus)
    # What durable wrote before the answer was kept in the status: the defaults fill it in.
    assert codec.loads('{"type": "done"}', r.SubmissionStatus) == r.Answered("", None)
