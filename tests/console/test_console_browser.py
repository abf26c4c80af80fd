"""The console in a real browser (headless Chromium through Selenium) on session files that agent
processes own: the answer grows on the page as it is committed; a SIGKILL and a restart show the
recovery story; an edited call approved from the page runs once; a tool's `<script>` output is
inert text; a wrong token is refused. Screenshots of the main views go to docs/."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import durable
from durable.models import FauxModel

from .agent import LONG, XSS

DOCS = Path(__file__).resolve().parents[2] / "docs"
WAIT = 60.0  # a deadline, not a pause: every wait ends as soon as the page shows what it waits for


def screenshot(driver, name: str, tmp_path: Path) -> None:
    """The page as a PNG: into docs/ with DURABLE_CONSOLE_SCREENSHOTS=1 (how the ones there were
    taken), else beside the test's files (a test run leaves the checkout as it was)."""
    folder = DOCS if os.environ.get("DURABLE_CONSOLE_SCREENSHOTS") == "1" else tmp_path
    assert driver.save_screenshot(str(folder / name))


def text_of(driver, selector: str) -> str:
    """The text of the first element `selector` finds, read in one script (the page re-renders)."""
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.innerText : ''",
                                 selector)


def wait_for(driver, predicate, what: str):
    return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(lambda d: predicate(d), message=what)


def test_the_answer_grows_on_the_page_as_it_is_committed(browser, agent, console, tmp_path):
    path = tmp_path / "stream.sqlite"
    writer = agent("stream", path)
    browser.get(console(path))
    wait_for(browser, lambda d: text_of(d, "#status").startswith("live ·"), "the page following the file")
    writer.send("go")  # the answer streams from now on, the page watching
    writer.expect("paused")  # after 20 pieces: the page must show them
    wait_for(browser, lambda d: text_of(d, "#partial-text").rstrip() == LONG[:120].rstrip(),
             "a partial answer on the page (20 pieces of 6 characters)")
    writer.send("more")
    writer.expect("paused")  # after 40
    wait_for(browser, lambda d: text_of(d, "#partial-text").rstrip() == LONG[:240].rstrip(),
             "the partial answer grown (40 pieces)")
    assert "generating" in text_of(browser, 'nav a[data-conversation="root"]')
    screenshot(browser, "console-streaming.png", tmp_path)
    writer.send("rest")
    # The whole answer lands as an entry, and the partial is gone.
    wait_for(browser, lambda d: "word119" in text_of(d, '.entry.assistant'), "the answer committed as an entry")
    root = 'nav a[data-conversation="root"]'
    wait_for(browser, lambda d: text_of(d, "#partial") == "" and "idle" in text_of(d, root),
             "the partial gone, the conversation idle")


def test_a_kill_and_a_restart_show_the_recovery_story(browser, agent, console, tmp_path):
    path = tmp_path / "crash.sqlite"
    first = agent("hang", path)
    browser.get(console(path))
    wait_for(browser, lambda d: text_of(d, "#partial-text") == "Partial words before the crash", "the partial")
    first.kill()  # SIGKILL
    second = agent("resume", path)
    second.expect("settled")
    wait_for(browser, lambda d: "The whole answer, after recovery." in text_of(d, "#transcript"), "the answer")
    aborted = browser.find_element(By.CSS_SELECTOR, ".entry.aborted")
    assert "Partial words before the crash" in aborted.text
    assert "cut off by a crash: aborted partial" in aborted.text
    story = text_of(browser, "#recovery")
    assert ("root #2: An answer (attempt 1) was cut off by the death of its process after 30 characters: the partial "
            "is kept, marked aborted, and the attempt is charged (task_interrupted).") in story
    # The answer's reasoning, collapsed until opened; usage by kind of token.
    answer = browser.find_elements(By.CSS_SELECTOR, ".entry.assistant")[-1]
    details = answer.find_element(By.CSS_SELECTOR, "details.reasoning")
    assert (details.get_attribute("open"), details.text) == (None, "Reasoning (18 characters)")
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.find_element(By.CSS_SELECTOR, ".text").text == "Recovering calmly."
    assert text_of(browser, "#usage thead").strip().split("\t") == [
        "model", "requests", "input", "cache read", "cache write", "output", "reasoning", "cost (USD)"]
    total = "total\t2\t400\t800\t0\t180\t120\tunknown"  # requests, input, cache read/write, output, reasoning
    wait_for(browser, lambda d: text_of(d, "#usage tbody").strip().split("\n")[-1] == total, "the usage totals")
    screenshot(browser, "console-recovery.png", tmp_path)


def test_an_edited_call_approved_from_the_page_runs_once_and_xss_is_inert(browser, agent, console, tmp_path):
    path = tmp_path / "approve.sqlite"
    agent("approve", path)
    browser.get(console(path))
    card = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '.approval[data-call="call_note"]'),
                    "the approval card")[0]
    assert json.loads(card.find_element(By.CSS_SELECTOR, "pre.given").text) == {"text": "draft"}
    screenshot(browser, "console-approval.png", tmp_path)
    note = '.approval[data-call="call_note"]'

    def edit(text: str, state: str) -> str:
        """Type `text` as the edited arguments, send it, and wait for the card's `data-state`."""
        area = card.find_element(By.CSS_SELECTOR, "textarea.arguments")
        area.clear()
        area.send_keys(text)
        browser.execute_script("document.querySelector(arguments[0]).dataset.state = ''", note)
        card.find_element(By.CSS_SELECTOR, "button.edit").click()
        wait_for(browser, lambda d: d.execute_script(
            "return document.querySelector(arguments[0]).dataset.state", note) == state, f"the card {state}")
        return card.find_element(By.CSS_SELECTOR, ".message").text

    card.find_element(By.CSS_SELECTOR, "button.edit").click()  # shows the editor
    assert edit("[1, 2]", "refused") == "the arguments must be a JSON object"
    # The server checks the tool's schema (kept with the waiting call) before anything is sent.
    assert edit('{"text": 5}', "refused") == (
        "not sent: Tool call call_note (save_note) was not approved: Tool save_note: invalid arguments: "
        "$.text: 5 is not of type 'string' (keyword: type)")
    assert edit('{"text": "edited"}', "sent") == "approved: sent (committed)"
    wait_for(browser, lambda d: "saved edited" in text_of(d, "#transcript"), "the tool's result")
    wait_for(browser, lambda d: "Saved." in text_of(d, "#transcript"), "the final answer")
    assert (tmp_path / "approve.sqlite.runs").read_text() == "edited\n"  # ran once, with the edit
    # The tool output holding a <script> is shown as text, and nothing of it ran.
    assert XSS in text_of(browser, ".entry.tool_result")
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.find_elements(By.CSS_SELECTOR, "#view script, #view img") == []
    screenshot(browser, "console-transcript.png", tmp_path)


async def made(path: Path) -> None:
    """An empty session file, made in this process (no agent needed)."""
    async with durable.open_harness(path, model=FauxModel([])):
        pass


def test_a_wrong_token_is_refused(browser, agent, console, tmp_path):
    path = tmp_path / "refused.sqlite"
    anyio.run(made, path)
    url = console(path)
    wrong = url.replace("token=", "token=wrong")
    browser.delete_all_cookies()
    browser.get(wrong)
    assert "forbidden" in browser.find_element(By.TAG_NAME, "body").text
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(wrong.replace("/?", "/api/sessions?"), timeout=10)
    assert refused.value.code == 403
