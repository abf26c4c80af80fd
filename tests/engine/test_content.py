"""Content parts: inputs of text, images and files (`durable.Image`, `durable.File`), tools that
return images, the bytes stored once per session by sha256 in the commit that first references
them, read back for each request, the size limit checked before anything is committed, and
compaction summarizing around them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import durable
from durable import records as r
from durable.cli.export_data import export_session, to_markdown
from durable.cli.inspect_data import read_session
from durable.models.faux import FauxModel, call, reply
from durable.storage import MemoryStorage
from durable.tasks.compaction import SUMMARY_PROMPT
from durable.tasks.tool import ToolProgress

from .conftest import settings

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # 1,032 bytes with a PNG signature
PNG_SHA = hashlib.sha256(PNG).hexdigest()
PDF = b"%PDF-1.7\n" + b"x" * 100
PDF_SHA = hashlib.sha256(PDF).hexdigest()
SHOT = b"\x89PNG\r\n\x1a\n" + b"screen" * 50  # what the screenshot tool returns
SHOT_SHA = hashlib.sha256(SHOT).hexdigest()


def image(sha: str = PNG_SHA, size: int = len(PNG), name: str | None = None) -> r.Attachment:
    return r.Attachment("image", sha, "image/png", size, name)


async def test_an_input_of_text_an_image_and_a_file_is_stored_in_order_and_sent_with_its_bytes(host):
    model = FauxModel([reply("A chart and a report.")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit(["What are these?", durable.Image(PNG), durable.File(PDF), "Be short."])
        assert await sub.answer() == "A chart and a report."
        stored = await sub.get()
        [request] = model.requests
    parts = (r.TextPart("What are these?"), image(), r.Attachment("file", PDF_SHA, "application/pdf", len(PDF)),
             r.TextPart("Be short."))
    assert (stored.text, stored.parts) == ("What are these?\n\nBe short.", parts)
    assert await host.entries() == [
        r.UserEntry("What are these?\n\nBe short.", sub.id, parts),
        r.AssistantEntry("A chart and a report.", "stop", (), r.Usage(10, 6), None, 1, model="faux"),
    ]
    # The faux model received the entry with its references and the bytes, by hash.
    assert list(request.messages) == [r.UserEntry("What are these?\n\nBe short.", sub.id, parts)]
    assert dict(request.attachments) == {PNG_SHA: PNG, PDF_SHA: PDF}


async def test_a_plain_string_is_stored_exactly_as_before(host):
    model = FauxModel([reply("hi")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("Hello")
        await sub.answer()
    assert await host.entries() == [r.UserEntry("Hello", sub.id), r.AssistantEntry("hi", "stop", (), r.Usage(10, 1), model="faux")]
    assert model.requests[0].attachments == {}
    body = durable.codec.dumps(r.UserEntry("Hello", sub.id), r.Entry)
    assert body == f'{{"type":"user","text":"Hello","submission_id":"{sub.id}"}}'  # no "parts" key


async def test_the_same_screenshot_twice_is_one_row_written_in_the_commit_of_the_first_input():
    store = MemoryStorage()
    model = FauxModel([reply("one"), reply("two")])
    async with durable.open_harness(store, model=model, settings=settings()) as h:
        await (await h.root.submit(["first", durable.Image(PNG)])).answer()
        await (await h.root.submit(["again", durable.Image(PNG)])).answer()
        assert dict(model.requests[1].attachments) == {PNG_SHA: PNG}  # one image, referenced twice
    assert store.attachment_rows() == [(PNG_SHA, "image/png", len(PNG))]


async def test_an_image_read_from_a_path_keeps_its_file_name_and_media_type(host, tmp_path):
    (tmp_path / "shot.webp").write_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8 data")
    (tmp_path / "notes.txt").write_bytes(b"plain notes")
    model = FauxModel([reply("ok")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit([durable.Image(tmp_path / "shot.webp"), durable.File(str(tmp_path / "notes.txt"))])
        await sub.answer()
        parts = (await sub.get()).parts
    assert [(p.kind, p.media_type, p.size, p.name) for p in parts if isinstance(p, r.Attachment)] == [
        ("image", "image/webp", 20, "shot.webp"), ("file", "text/plain", 11, "notes.txt")]


def test_a_path_that_cannot_be_read_or_an_unknown_type_is_a_clear_error_naming_the_file(tmp_path):
    missing = tmp_path / "gone.png"
    with pytest.raises(durable.AttachmentError, match=r"Image '.*gone\.png' cannot be read: No such file"):
        durable.Image(missing)
    (tmp_path / "blob.unknownext").write_bytes(b"\x00\x01")
    with pytest.raises(durable.AttachmentError, match=r"The media type of the file '.*blob\.unknownext' is not known: "
                                                       r"pass media_type="):
        durable.File(tmp_path / "blob.unknownext")
    with pytest.raises(durable.AttachmentError, match=r"The media type of the image given as bytes is not known"):
        durable.Image(b"not an image")
    with pytest.raises(durable.AttachmentError, match=r"The image given as bytes is application/pdf, not an image: use "
                                                       r"durable.File"):
        durable.Image(PDF)
    assert isinstance(durable.AttachmentError("x"), durable.InvalidInput)


async def test_an_image_over_max_attachment_bytes_is_refused_at_submit_before_anything_is_committed(host, tmp_path):
    (tmp_path / "big.png").write_bytes(PNG)
    model = FauxModel([reply("never")])
    async with host.open(model, settings=settings(max_attachment_bytes=1000)) as h:
        with pytest.raises(durable.AttachmentTooLarge) as caught:
            await h.root.submit(["look", durable.Image(tmp_path / "big.png")])
        assert str(caught.value) == (
            f"The image '{tmp_path / 'big.png'}' in the input for conversation 'root' is 1.0 kB (1032 bytes), over "
            f"the limit of 1.0 kB (settings.max_attachment_bytes = 1000)")
        with pytest.raises(durable.AttachmentError, match=r"A part of the input for conversation 'root' is a int"):
            await h.root.submit(["look", 3])  # type: ignore[list-item]
        with pytest.raises(durable.InvalidInput, match="must be non-empty text"):
            await h.root.submit(["  "])
        assert await h.tasks() == []
    assert await host.entries() == []
    assert model.requests == []


async def test_a_retried_input_id_with_the_same_parts_is_the_same_input_and_with_others_is_refused(host):
    model = FauxModel([reply("ok")])
    async with host.open(model, settings=settings()) as h:
        first = await h.root.submit(["look", durable.Image(PNG)], id="in-1")
        again = await h.root.submit(["look", durable.Image(PNG)], id="in-1")
        assert again.id == first.id
        with pytest.raises(durable.InvalidInput, match=r"Submission id 'in-1' .* is taken by another input"):
            await h.root.submit(["look", durable.Image(SHOT)], id="in-1")
        await first.answer()
    assert [type(e).__name__ for e in await host.entries()] == ["UserEntry", "AssistantEntry"]


def screenshot_tool(value: Any) -> durable.Tool:
    async def screenshot() -> Any:
        """Take a screenshot."""
        return value

    return durable.define_tool(execute=screenshot)


async def test_a_tool_returning_an_image_stores_it_in_its_ending_commit_and_the_model_receives_it(host):
    model = FauxModel([reply("", tool_calls=[call("screenshot", {}, id="c1")]), reply("A login form.")])
    tool = screenshot_tool(["Screen captured", durable.Image(SHOT)])
    async with host.open(model, tools=[tool], settings=settings()) as h:
        sub = await h.root.submit("What is on screen?")
        assert await sub.answer() == "A login form."
    parts = (r.TextPart("Screen captured"), image(SHOT_SHA, len(SHOT)))
    result = r.ToolResultEntry("c1", "screenshot", "Screen captured", parts=parts)
    assert (await host.entries())[2] == result
    assert list(model.requests[1].messages)[2] == result
    assert dict(model.requests[1].attachments) == {SHOT_SHA: SHOT}
    # The bytes went to the store with the tool's ending, the first record to reference them.
    [first] = [b for b in host.storage.batches if b.attachments]
    assert first.attachments == {SHOT_SHA: ("image/png", SHOT)}
    [ended] = [t for t in first.tasks if t.kind == "tool"]
    assert isinstance(ended.checkpoint, ToolProgress) and ended.checkpoint.result == result


async def test_a_tool_returning_only_an_image_or_an_image_too_large_for_the_limit(host):
    model = FauxModel([reply("", tool_calls=[call("screenshot", {}, id="c1")]), reply("done")])
    async with host.open(model, tools=[screenshot_tool(durable.Image(SHOT))],
                         settings=settings(max_attachment_bytes=100)) as h:
        await (await h.root.submit("Shoot")).answer()
    error = ("Tool screenshot failed: AttachmentTooLarge: The image given as bytes in the result of tool screenshot "
             "is 308 B (308 bytes), over the limit of 100 B (settings.max_attachment_bytes = 100)")
    assert (await host.entries())[2] == r.ToolResultEntry(
        "c1", "screenshot", error, True, (r.Diagnostic("error", "tool_error", error),))
    assert not any(b.attachments for b in host.storage.batches)


async def test_compaction_summarizes_around_images_with_placeholders(host):
    model = FauxModel([reply("A cat."), reply("Summary: a cat picture.")])
    async with host.open(model, settings=settings(compaction=durable.Compaction(keep_last=1))) as h:
        sub = await h.root.submit(["What is this?", durable.Image(PNG)])
        await sub.answer()
        task_id = await h.root.compact()
        await h.wait_for_task(task_id)
    summary_request = model.requests[1]
    assert list(summary_request.messages) == [
        r.UserEntry("What is this?\n\n[image: image/png, 1.0 kB]", sub.id),
        r.UserEntry(SUMMARY_PROMPT),
    ]
    assert summary_request.attachments == {}


async def test_inspect_and_export_show_references_with_size_and_type_never_the_bytes(host):
    model = FauxModel([reply("seen")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit(["look", durable.Image(PNG)])
        await sub.answer()
    data = read_session(host.path)
    ref = {"type": "attachment", "kind": "image", "sha256": PNG_SHA, "media_type": "image/png", "size": len(PNG),
           "name": None}
    assert data["conversations"][0]["entries"][0] == {
        "seq": 1, "type": "user", "text": "look", "submission_id": sub.id,
        "parts": [{"type": "text", "text": "look"}, ref]}
    assert data["submissions"][0]["parts"] == [{"type": "text", "text": "look"}, ref]
    assert (data["file"]["counts"]["attachments"], data["file"]["counts"]["attachment_bytes"]) == (1, len(PNG))
    exported = export_session(host.path)
    assert "base64" not in json.dumps(exported) and PNG_SHA in json.dumps(exported)
    assert "### 1 · user\n\nlook\n\n[image: image/png, 1.0 kB]\n\n### 2 · assistant (stop, by faux)" in to_markdown(exported)


async def test_the_invariant_checker_finds_an_image_referenced_but_not_stored_or_stored_otherwise(host):
    from durable.storage import Batch
    from durable.testing.invariants import check_invariants

    store = MemoryStorage()
    await store.open()
    shot = image(SHOT_SHA, len(SHOT))
    await store.commit(Batch(entries=[r.StoredEntry("root", 1, r.UserEntry("look", None, (image(),))),
                                      r.StoredEntry("root", 2, r.UserEntry("again", None, (shot,)))],
                             attachments={PNG_SHA: ("image/jpeg", PNG)}))
    assert check_invariants(store) == [
        f"Entry 1 of conversation 'root' references the image {PNG_SHA} as image/png, {len(PNG)} bytes; it is "
        f"stored as image/jpeg, {len(PNG)} bytes",
        f"Entry 2 of conversation 'root' references the image {SHOT_SHA}, which is not stored",
    ]
    model = FauxModel([reply("seen")])
    async with host.open(model, settings=settings()) as h:
        await (await h.root.submit(["look", durable.Image(PNG)])).answer()
    assert check_invariants(host.path, clean_close=True, quiescent=True) == []


def test_a_stored_context_decodes_only_the_entries_that_hold_an_attachment_to_find_them():
    from durable import codec
    from durable.engine.context import Context
    from durable.storage.protocol import RawContext

    entries = [r.UserEntry('text "type":"attachment" quoted', "s1"), r.UserEntry("look", "s2", (image(),)),
               r.AssistantEntry("seen", "stop"), r.ToolResultEntry("c1", "shot", "", parts=(image(SHOT_SHA, 9),))]
    bodies = [codec.dumps(e, r.Entry) for e in entries]
    decoded: list[int] = []

    def decode(seq: int, body: str) -> r.StoredEntry:
        decoded.append(seq)
        return r.StoredEntry("root", seq, codec.loads(body, r.Entry))  # type: ignore[arg-type]

    context = Context.stored(RawContext([1, 2, 3, 4], bodies, 40), decode)
    assert context.attachments(4) == [image(), image(SHOT_SHA, 9)]
    assert decoded == [2, 4]
    assert context.messages(3, tail=(entries[3],)).attachments() == [image(), image(SHOT_SHA, 9)]
    context.append(r.StoredEntry("root", 5, r.UserEntry("more", "s3", (image(PDF_SHA, 7),))))
    assert context.attachments(5) == [image(), image(SHOT_SHA, 9), image(PDF_SHA, 7)]
    assert context.attachments(2) == [image()]
    assert decoded == [2, 4]  # each entry looked at once


async def test_a_client_tool_answered_with_a_screenshot_stores_it_with_the_result(host):
    from .conftest import until_live

    ask = durable.define_tool("screen", "The user's screen", client=True)
    model = FauxModel([reply("", tool_calls=[call("screen", {}, id="q1")]), reply("I see it.")])
    async with host.open(model, tools=[ask], settings=settings(max_attachment_bytes=300)) as h:
        sub = await h.root.submit("Look at my screen")
        await until_live(h, lambda live: [s.status for s in live.tools] == ["waiting"])
        with pytest.raises(durable.AttachmentTooLarge, match=r"The image given as bytes in the result of tool call "
                                                              r"q1 is 308 B \(308 bytes\), over the limit of 300 B"):
            await h.submit_tool_result("q1", ["Here", durable.Image(SHOT)])
        await h.submit_tool_result("q1", ["Here", durable.Image(SHOT[:200])])
        assert await sub.answer() == "I see it."
    small = hashlib.sha256(SHOT[:200]).hexdigest()
    assert (await host.entries())[2] == r.ToolResultEntry("q1", "screen", "Here",
                                                          parts=(r.TextPart("Here"), image(small, 200)))
    assert dict(model.requests[1].attachments) == {small: SHOT[:200]}


async def test_the_input_and_the_bytes_it_references_are_one_commit_and_a_lone_image_is_an_input(host):
    model = FauxModel([reply("A chart.")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit(durable.Image(PNG))
        await sub.answer()
    assert host.storage.history[0] == (
        f"task 1 generation running/request; entry root#1 user; submission {sub.id} queued; live root; "
        f"attachment {PNG_SHA[:12]} image/png {len(PNG)} bytes")
    assert (await host.entries())[0] == r.UserEntry("", sub.id, (image(),))


async def test_the_invariant_checker_finds_a_request_sent_without_the_bytes_it_references(host):
    from durable.models.protocol import ModelRequest
    from durable.testing.invariants import check_invariants

    model = FauxModel([reply("seen")], keep_requests=None)
    async with host.open(model, settings=settings()) as h:
        await (await h.root.submit(["look", durable.Image(PNG)])).answer()
    [sent] = model.requests
    assert check_invariants(host.path, requests=[sent]) == []
    bare = ModelRequest(sent.system, tuple(sent.messages), key=sent.key)
    wrong = ModelRequest(sent.system, tuple(sent.messages), key=sent.key, attachments={PNG_SHA: SHOT})
    assert check_invariants(host.path, requests=[bare, wrong]) == [
        f"Request {sent.key} was sent without the bytes of the image {PNG_SHA}"] * 2


async def test_durable_inspect_prints_the_placeholders_of_entries_and_inputs_not_as_markup(host, capsys):
    from durable.cli.inspect_view import print_session

    model = FauxModel([reply("seen")])
    async with host.open(model, settings=settings()) as h:
        await (await h.root.submit(["look", durable.Image(PNG)])).answer()
    print_session(read_session(host.path))
    printed = capsys.readouterr().out
    assert "attachments  1 image(s) and file(s), 1,032 bytes" in printed
    assert printed.count("look [image: image/png, 1.0 kB]") == 2  # the entry and the submission


async def test_a_tool_ending_refused_once_is_sent_again_with_its_image(host):
    from durable.errors import CommitFailed
    from durable.testing.invariants import check_invariants

    model = FauxModel([reply("", tool_calls=[call("screenshot", {}, id="c1")]), reply("A login form.")])
    refused: list[int] = []
    async with host.open(model, tools=[screenshot_tool(durable.Image(SHOT))], settings=settings()) as h:
        inner = host.storage.inner
        real_commit = inner.commit

        async def commit(batch: Any) -> None:
            if batch.attachments and not refused:  # the tool's ending: refused once, for a passing cause
                refused.append(len(batch.tasks))
                raise CommitFailed(f"A commit to {host.path} failed and was rolled back (disk I/O error, injected)",
                                   location=host.path)
            await real_commit(batch)

        inner.commit = commit
        assert await (await h.root.submit("What is on screen?")).answer() == "A login form."
    assert refused == [2]  # the tool and its generation (the round closes with it)
    assert dict(model.requests[1].attachments) == {SHOT_SHA: SHOT}
    assert check_invariants(host.path, clean_close=True, quiescent=True, requests=model.requests) == []
