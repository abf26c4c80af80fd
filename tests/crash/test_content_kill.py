"""SIGKILL while a request carrying an image is in flight: a real child process (a fresh
interpreter, `python -m durable.testing.child`) sends an input with a 200 kB image through a real
provider adapter to the 127.0.0.1 server of the provider tests and is killed once the server has
the request; a second process reopens the file, charges the interrupted attempt and sends it again
with the same bytes, read back from the session file; every invariant holds."""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import threading
import time

import pytest
from providers.conftest import FakeServer, Reply
from providers.test_harness_integration import NAME, PATH, USAGE, answer

from durable.records import AssistantEntry, Attachment, TextPart, UserEntry
from durable.storage.sqlite.reader import SessionReader
from durable.testing import explore
from durable.testing.invariants import check_invariants
from durable.testing.kill import _argv, _Child, _run_child

from .content_scenario import IMAGE_TOOL_ROUND, PICTURE

APIS = ["responses", "chat", "anthropic"]
SCENARIO = "tests.crash.content_scenario:IMAGE_REQUEST"


def image_bytes(api: str, body: dict) -> bytes:
    """The base64 image a request body carries, decoded."""
    if api == "anthropic":
        [block] = [b for b in body["messages"][0]["content"] if b["type"] == "image"]
        return base64.b64decode(block["source"]["data"])
    if api == "responses":
        [part] = [p for p in body["input"][0]["content"] if p["type"] == "input_image"]
        url = part["image_url"]
    else:
        [part] = [p for p in body["messages"][1]["content"] if p["type"] == "image_url"]
        url = part["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    return base64.b64decode(url[len(prefix):])


@pytest.mark.parametrize("api", APIS)
def test_a_request_with_an_image_cut_off_by_sigkill_is_sent_again_with_the_same_bytes(api, monkeypatch):
    server = FakeServer()
    server.start()
    arrived = threading.Event()
    server.script("POST", PATH[api], Reply(hold_before=True, arrived=arrived), answer(api, ["A login form."]))
    monkeypatch.setenv("DURABLE_CONTENT_SERVER", server.url)
    monkeypatch.setenv("DURABLE_CONTENT_API", api)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            epoch = time.time()
            argv = _argv(SCENARIO, workdir, "drive", epoch, stop_after=None, scale=1000.0, synchronous="EXTERNAL")
            child = _Child(argv, "exec", workdir)
            try:
                assert arrived.wait(60), f"the request never arrived: {child.lines}"
                assert child.kill()  # SIGKILL, the request in flight
                while child.read(1.0) is not None:
                    pass
            finally:
                child.kill()
                child.wait()
            acknowledged = [line.split()[2] for line in child.lines if line.startswith("event submitted ")]
            assert len(acknowledged) == 1

            recover = _argv(SCENARIO, workdir, "recover", epoch, stop_after=None, scale=1000.0,
                            synchronous="EXTERNAL")
            run = _run_child(recover, "exec", workdir, kill=None, timeout=60)
            assert run.code == 0, run.lines
            assert "event settled True" in run.lines

            first, second = server.requests_to("POST", PATH[api])
            assert image_bytes(api, first.body) == image_bytes(api, second.body) == PICTURE
            assert second.body == first.body  # the same request, byte for byte
            assert len(server.requests) == 2
            path = os.path.join(workdir, "session.sqlite")
            assert check_invariants(path, acknowledged=acknowledged, clean_close=True, quiescent=True) == []
            with SessionReader(path) as reader:
                entries = [e.entry for e in reader.entries("root")]
            picture = Attachment("image", hashlib.sha256(PICTURE).hexdigest(), "image/png", len(PICTURE))
            text = "What is on this screenshot?"
            assert entries == [UserEntry(text, acknowledged[0], (TextPart(text), picture)),
                               AssistantEntry("A login form.", "stop", (), USAGE[api], None, 2, model=NAME[api])]  # charged
    finally:
        server.stop()


@pytest.mark.anyio
async def test_every_commit_boundary_of_a_tool_round_with_images_keeps_every_invariant():
    """The explorer crashes the scenario at every commit boundary, both sides: the images and the
    receipt are stored with the commit that first references them and every request (checked by
    the invariants on the faux model's requests) carries their bytes."""
    exploration = await explore(IMAGE_TOOL_ROUND)
    print(f"\n{exploration.summary()}")
    assert exploration.commits > 0
    assert exploration.crash_points == 2 * exploration.commits
    exploration.assert_ok()
