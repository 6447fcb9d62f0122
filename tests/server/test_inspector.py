"""The inspector at /ui, clicked through in headless Chromium against a real server process.

The browser is Debian's `chromium`, driven over the DevTools protocol
(`cdp.py`); the server is `flowgraph serve` in a subprocess; the threads are
made with the official client. Each step asserts on what the page shows
(its DOM text), then on what the API says the click did. The page's requests
are recorded: all go to the server itself, and the token travels only in the
`x-api-key` header. Set FLOWGRAPH_UPDATE_SCREENSHOT=1 to write the README's
picture (docs/inspector.png) from the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from viz.test_chromium import CHROMIUM

from .cdp import Chromium
from .conftest import APPS, ROOT, Connect, Serve, ServerProcess

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian: apt-get install chromium); .ci/run installs it",
)
TOKEN = "inspector-token-7d1f"
BOOK = {"messages": [{"role": "user", "content": "Book a meeting with Ada on Friday"}]}
EXAMPLE = ROOT / "examples" / "serve_agent.py"
SCREENSHOT = ROOT / "docs" / "inspector.png"

# what the page shows, read in the page
MESSAGES = """[...document.querySelectorAll('#conversation .message')]
  .map(m => m.dataset.role + ': ' + (m.querySelector('.text')?.innerText ?? ''))"""
TAKEN_EDGES = """[...document.querySelectorAll('#graph g.fg-edge')]
  .filter(g => g.querySelector('title').textContent.includes('taken'))
  .map(g => g.dataset.source + ' -> ' + g.dataset.target).sort()"""
BRANCHES = """[...document.querySelectorAll('#checkpoints .branch')].map(b => ({
  current: b.classList.contains('current'),
  ids: [...b.querySelectorAll(':scope > .chain > li > .checkpoint-row')]
    .map(r => r.dataset.checkpointId)}))"""


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Chromium]:
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "chromium", width=1440, height=1160)
    yield chromium
    chromium.close()


def run_ended(browser: Chromium, count: int) -> str:
    """Wait until the page has followed `count` runs to their end; the live panel's text."""
    browser.wait_for(
        "document.getElementById('live').dataset.state === 'ended' && "
        f"document.getElementById('live').dataset.followed === '{count}'",
        what=f"run {count} to end on the page",
    )
    return browser.text("#live")


def history_tree(connect_client: Any, thread_id: str) -> dict[str, list[str]]:
    """{checkpoint id: its children's ids} as the API reports the thread's history."""
    children: dict[str, list[str]] = {}
    for state in connect_client.threads.get_history(thread_id, limit=100):
        parent = state["parent_checkpoint_id"]
        if parent:
            children.setdefault(parent, []).append(state["checkpoint_id"])
    return children


def sign_in(browser: Chromium, server: ServerProcess) -> None:
    browser.goto(f"{server.url}/ui")
    browser.wait_for("document.getElementById('token-dialog').open", what="the token dialog")
    assert "API token" in browser.text("#token-dialog")
    browser.type("#token-input", "not-the-token")
    browser.press_enter()
    browser.wait_for(
        "document.getElementById('token-dialog').open && "
        "!document.getElementById('token-error').hidden",
        what="the wrong token to be refused",
    )
    assert browser.text("#token-error") == "Invalid API token"
    browser.type("#token-input", TOKEN)
    browser.click("#token-form button[type=submit]")
    browser.wait_for("document.body.dataset.ready === 'true'", what="the page to load its data")
    assert not browser.evaluate("document.getElementById('token-dialog').open")
    # kept for this tab only
    assert browser.evaluate("sessionStorage.getItem('flowgraph.inspector.token')") == TOKEN
    assert browser.evaluate("localStorage.length") == 0


def check_requests(browser: Chromium, server: ServerProcess, token: str | None) -> None:
    """Every request went to the server; the token only ever in the x-api-key header."""
    requests = list(browser.requests.values())
    assert requests
    for request in requests:
        assert request.url.startswith(f"{server.url}/") or request.url.startswith("data:"), (
            request.url
        )
        if token:
            assert token not in request.url
        api = not request.url.startswith(f"{server.url}/ui") and request.url != f"{server.url}/info"
        if api and request.url.startswith(server.url):
            if token is None:
                assert "x-api-key" not in request.headers, request
            elif request.status != 401:  # the calls made before the token was typed
                assert request.headers.get("x-api-key") == token, request
    assert browser.errors == []


def test_static_files_are_open_and_keep_the_page_to_itself(serve: Serve) -> None:
    server = serve(None, "agent", token=TOKEN)
    with httpx.Client(base_url=server.url) as http:
        moved = http.get("/ui")
        root = http.get("/")
        page = http.get("/ui/")
        script = http.get("/ui/inspector.js")
        refused = http.post("/threads/search", json={})
        missing = http.get("/ui/no-such-file.js")

    assert moved.status_code == 307 and moved.headers["location"].endswith("/ui/")
    assert root.status_code == 307 and root.headers["location"] == "/ui/"
    assert f"Inspector: {server.url}/ui/" in server.output()  # said at startup
    assert page.status_code == 200 and "<title>flowgraph inspector</title>" in page.text
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "script-src 'self'" in policy and "unsafe" not in policy
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert 'from "./api.js"' in script.text
    assert refused.status_code == 401
    assert missing.status_code == 404
    # nothing the page loads names another host
    for name in ("index.html", "inspector.js", "api.js", "render.js", "diff.js", "inspector.css"):
        text = (ROOT / "flowgraph" / "server" / "ui" / name).read_text()
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, name


@pytest.fixture
def booking(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of the README's booking agent (examples/serve_agent.py) and `slow`, with a token."""
    server = ServerProcess(
        str(tmp_path / "meetings.db"), (f"agent={EXAMPLE}:app", f"slow={APPS}:slow"),
        token=TOKEN, cwd=tmp_path, env={"FLOWGRAPH_MODEL": ""},  # the scripted model
    )  # fmt: skip
    yield server
    server.stop()


def test_click_through_a_thread(
    booking: ServerProcess, connect: Connect, browser: Chromium, tmp_path: Path
) -> None:
    client = connect(booking, api_key=TOKEN)
    thread_id = client.threads.create(metadata={"user": "ada"})["thread_id"]
    client.runs.wait(thread_id, "agent", input=BOOK)
    other = client.threads.create()["thread_id"]
    client.runs.wait(
        other, "slow", input={"delay": 0, "messages": [{"role": "user", "content": "go"}]}
    )
    # newest first: the model's step, the input's, the checkpoint before the input
    original = client.threads.get_history(thread_id)
    first, asked = original[1]["checkpoint_id"], original[0]["checkpoint_id"]
    before_input = original[2]["checkpoint_id"]
    call = original[0]["values"]["messages"][1]

    sign_in(browser, booking)

    # the list: both threads, with status, graph, message count
    row = f'.thread-item[data-thread-id="{thread_id}"]'
    browser.wait_for(f"!!document.querySelector('{row}')", what="the thread in the list")
    listed = browser.text(row).split()
    assert listed[:2] == [thread_id[-8:], "interrupted"]
    assert listed[2:7] == ["agent", "·", "2", "messages", "·"]
    assert browser.text(f'.thread-item[data-thread-id="{other}"]').split()[1:3] == ["idle", "slow"]

    # the thread: its conversation, its graph with the path, the question waiting
    browser.click(row)
    browser.wait_for("!!document.querySelector('#graph svg')", what="the graph")
    assert browser.evaluate(MESSAGES) == ["human: Book a meeting with Ada on Friday", "ai: "]
    assert browser.texts("#conversation .tool-call") == [
        '→ book_meeting\n{"who":"Ada","when":"Friday 10:00"}\nno result yet'
    ]
    assert f"path of thread {thread_id}" in browser.text("#graph")
    assert browser.evaluate(TAKEN_EDGES) == ["__start__ -> agent"]
    assert browser.text("#interrupt .question-text") == "Run these tool calls?"
    assert "book_meeting({'who': 'Ada', 'when': 'Friday 10:00'})" in browser.text("#interrupt")
    assert browser.text("#thread-status") == "interrupted"

    # its checkpoints, oldest first, and what the newest changed against its parent
    assert [r.split() for r in browser.texts("#checkpoints .checkpoint-row")] == [
        ["step", "-1", "input", "→", "__start__", before_input[-8:]],
        ["step", "0", "input", "→", "agent", first[-8:]],
        ["step", "1", "agent", "→", "approve", "paused", "head", asked[-8:]],
    ]
    browser.click(f'.checkpoint-row[data-checkpoint-id="{asked}"]')
    browser.wait_for("!document.getElementById('checkpoint').hidden", what="the checkpoint")
    assert browser.text("#checkpoint-id") == asked
    assert browser.texts("#tab-changes .change") == [
        f"messages\n+\nAI\n{call['id'][:12]}…\n→ book_meeting\n"
        '{"who":"Ada","when":"Friday 10:00"}\n7 in · 5 out tokens'
    ]
    browser.click('.tabs [data-tab="state"]')
    state_view = browser.text("#tab-state")  # messages folded to one line each
    assert "human: Book a meeting with Ada on Friday" in state_view
    assert 'ai: → book_meeting({"who":"Ada","when":"Friday 10:00"})' in state_view

    # fork from the first checkpoint with another message: a second branch, followed live
    browser.click(f'.checkpoint-row[data-checkpoint-id="{first}"]')
    browser.type("#fork-input", "Make it 10:00, please.")
    browser.click("#fork-button")
    live = run_ended(browser, 1)
    assert browser.texts("#live-log li")[1:] == [
        "values · messages: +1 human",
        "updates · agent wrote messages",
        "values · messages: +1 ai",
        "paused: Run these tool calls?",
        "run ended: success (the thread waits for an answer)",
    ], live
    assert browser.evaluate(MESSAGES) == [
        "human: Book a meeting with Ada on Friday", "human: Make it 10:00, please.", "ai: "
    ]  # fmt: skip
    tree = history_tree(client, thread_id)
    assert len(tree[first]) == 2  # the API agrees: two branches start at the first checkpoint
    branches = browser.evaluate(BRANCHES)
    assert [b["current"] for b in branches] == [False, True]
    assert branches[0]["ids"] == [asked]
    fork = branches[1]["ids"]
    assert fork[0] in tree[first] and fork[1] in tree[fork[0]]
    assert client.threads.get_state(thread_id)["checkpoint_id"] == fork[-1]

    # approve through the form: the run finishes live, tokens and all; the path reaches END
    browser.wait_for("!document.getElementById('interrupt').hidden", what="the question again")
    browser.type("#interrupt textarea.answer", "yes")
    browser.click("#resume-form button[type=submit]")
    live = run_ended(browser, 2)
    final = client.threads.get_state(thread_id)["values"]["messages"]
    assert browser.texts("#live-log li")[1:] == [
        "updates · approve",
        "updates · tools wrote messages",
        "values · messages: +1 tool",
        f"tokens · streaming {final[-1]['id'][:12]}…",  # the model's reply, token by token
        "updates · agent wrote messages",
        "values · messages: +1 ai",
        "run ended: success",
    ], live
    done = "Done. Booked: Ada, Friday 10:00 (confirmation M-42)."
    assert browser.evaluate(MESSAGES)[2:] == [
        "ai: ", "tool: Booked: Ada, Friday 10:00 (confirmation M-42)", f"ai: {done}"
    ]  # fmt: skip
    assert [m["content"] for m in final][-1] == done
    assert browser.text("#thread-status") == "idle"
    assert browser.evaluate("document.getElementById('interrupt').hidden")
    browser.wait_for(f"{TAKEN_EDGES}.includes('agent -> __end__')", what="the path to END")
    assert browser.evaluate(TAKEN_EDGES) == [
        "__start__ -> agent", "agent -> __end__", "agent -> approve", "approve -> tools",
        "tools -> agent",
    ]  # fmt: skip

    # the tool call and its result are linked both ways
    tool_call_id = final[2]["tool_calls"][0]["id"]
    assert browser.text(".message-tool header").split()[:4] == [
        "TOOL", "book_meeting", "↑", "answers"
    ]  # fmt: skip
    browser.click("#conversation .tool-call a.jump")
    browser.wait_for(
        "document.querySelector('#conversation .message-tool').classList.contains('flash')",
        what="the result to be pointed at",
    )
    browser.click("#conversation .message-tool a.jump")
    browser.wait_for(
        f"document.querySelector('.tool-call[data-tool-call-id=\"{tool_call_id}\"]')"
        ".classList.contains('flash')",
        what="the call to be pointed at",
    )
    # a node of the graph marks the checkpoints of the steps where it ran
    history = client.threads.get_history(thread_id, limit=100)
    ran = {s["checkpoint_id"]: s["metadata"].get("nodes") for s in history}
    tools_step = next(c for c, nodes in ran.items() if nodes == ["tools"])
    agent_steps = {c for c, nodes in ran.items() if nodes == ["agent"]}
    browser.click('#graph g.fg-node[data-node="agent"]')
    marked = browser.evaluate(
        "[...document.querySelectorAll('.ran-node')].map(r => r.dataset.checkpointId)"
    )
    assert set(marked) == agent_steps and len(agent_steps) == 3
    shot = browser_screenshot(browser, f'.checkpoint-row[data-checkpoint-id="{tools_step}"]')

    # run on from the first checkpoint, no input: a third branch, back at the question
    browser.click(f'.checkpoint-row[data-checkpoint-id="{first}"]')
    browser.click("#replay-button")
    live = run_ended(browser, 3)
    assert browser.texts("#live-log li")[1:] == [
        "updates · agent wrote messages",
        "values · messages: +1 ai",
        "paused: Run these tool calls?",
        "run ended: success (the thread waits for an answer)",
    ], live
    assert browser.evaluate(MESSAGES) == ["human: Book a meeting with Ada on Friday", "ai: "]
    assert browser.text("#thread-status") == "interrupted"
    assert browser.text("#interrupt .question-text") == "Run these tool calls?"
    head = client.threads.get_state(thread_id)
    assert (
        head["parent_checkpoint_id"] == first and len(history_tree(client, thread_id)[first]) == 3
    )
    assert len(browser.evaluate(BRANCHES)) == 3
    assert browser.texts(".branch.current .checkpoint-row")[0].split()[:4] == [
        "step", "1", "agent", "(fork)"
    ]  # fmt: skip

    # the list refreshes itself: a thread another client starts shows up unasked
    newcomer = client.threads.create()["thread_id"]
    browser.wait_for(
        f"!!document.querySelector('.thread-item[data-thread-id=\"{newcomer}\"]')",
        timeout=15,
        what="the list to show a new thread",
    )

    check_requests(browser, booking, TOKEN)
    (tmp_path / "inspector.png").write_bytes(shot)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 50_000
    if os.environ.get("FLOWGRAPH_UPDATE_SCREENSHOT"):
        SCREENSHOT.parent.mkdir(exist_ok=True)
        SCREENSHOT.write_bytes(shot)


def browser_screenshot(browser: Chromium, selected: str) -> bytes:
    """The page scrolled to the top, with a checkpoint's diff open: the README's picture."""
    browser.click(selected)
    browser.click('.tabs [data-tab="changes"]')
    browser.evaluate(
        "document.querySelectorAll('.flash').forEach(e => e.classList.remove('flash'))"
    )
    browser.evaluate("window.scrollTo(0, 0)")
    browser.wait_for("window.scrollY === 0")
    return browser.screenshot()


def test_a_running_run_is_followed_live(serve: Serve, connect: Connect, browser: Chromium) -> None:
    server = serve(None, "slow", "fail")  # no token: the page never asks for one
    client = connect(server)
    browser.goto(f"{server.url}/ui/")
    browser.wait_for("document.body.dataset.ready === 'true'", what="the page to load")
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(
        thread_id, "slow", input={"delay": 3, "messages": [{"role": "user", "content": "go"}]},
        stream_mode=["values", "updates"],
    )  # fmt: skip

    browser.click("#refresh")
    row = f'.thread-item[data-thread-id="{thread_id}"]'
    browser.wait_for(f"!!document.querySelector('{row}')", what="the new thread")
    browser.click(row)
    browser.wait_for(
        "document.getElementById('live-log').innerText.includes('steps: + \"one\"')",
        what="the first step's state on the page",
    )
    # seen while the run is still going: its second step takes three more seconds
    during = {
        "page": browser.text("#live-status"),
        "api": client.runs.get(thread_id, run["run_id"])["status"],
        "messages": browser.evaluate(MESSAGES),
        "thread": browser.text("#thread-status"),
    }
    live = run_ended(browser, 1)

    assert during == {
        "page": "running", "api": "running", "messages": ["human: go"], "thread": "busy"
    }  # fmt: skip
    lines = browser.texts("#live-log li")
    assert lines == [
        f"started run {run['run_id'][-8:]}",
        "values · starting state: 1 message",
        "updates · one wrote steps",
        'values · steps: + "one"',
        "updates · two wrote steps, messages",
        "values · messages: +1 ai",
        'values · steps: + "two"',
        "run ended: success",
    ], live
    assert browser.evaluate(MESSAGES) == ["human: go", "ai: done after one"]
    assert browser.text("#thread-status") == "idle"
    assert not browser.evaluate("document.getElementById('token-dialog').open")

    # a failed run: the thread says why
    failed = client.threads.create()["thread_id"]
    client.runs.wait(
        failed, "fail", input={"messages": [{"role": "user", "content": "boom"}]}, raise_error=False
    )
    browser.click("#refresh")
    browser.click(f'.thread-item[data-thread-id="{failed}"]')
    browser.wait_for(
        "!document.getElementById('thread-error').hidden", what="the failure to be shown"
    )
    assert browser.text("#thread-error") == "The last run failed: ValueError: the node blew up"
    assert browser.text("#thread-status") == "error"
    assert browser.evaluate("document.getElementById('live').hidden")
    check_requests(browser, server, None)
    joined = [r.url for r in browser.requests.values() if r.url.endswith("/stream")]
    assert joined == [f"{server.url}/threads/{thread_id}/runs/{run['run_id']}/stream"]


def test_a_run_from_a_checkpoint_streams_the_state_it_starts_from(
    serve: Serve, connect: Connect
) -> None:
    """The live view diffs each state against the one before: the first is the fork point's."""
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "agent", input={"messages": [{"role": "user", "content": "hi"}]})
    client.runs.wait(thread_id, "agent", command={"resume": "yes"})
    first = client.threads.get_history(thread_id, limit=100)[-2]  # the input's step

    states = [
        part.data
        for part in client.runs.stream(
            thread_id, "agent", input=None, checkpoint_id=first["checkpoint_id"]
        )
        if part.event == "values"
    ]

    assert states[0] == first["values"]
    assert [m["content"] for m in states[-1]["messages"]] == ["hi", "echo: hi"]
