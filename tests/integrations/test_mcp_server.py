"""`flowgraph mcp APP`: flowgraph agents as MCP tools, called with the SDK's own client.

The command runs as a user runs it (a subprocess on a real SQLite store);
the client is the SDK's `mcp.Client`, over stdio (it starts the command) and
over streamable HTTP (`--port`).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.cli._mcp import tool_name_of

from .conftest import free_port, stop, wait_for_port

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]

CHAT = '''
"""A chat agent that repeats everything it heard on this thread."""
from flowgraph import ScriptedChatModel, create_react_agent


def reply(messages):
    heard = [m.text for m in messages if m.type == "human"]
    if heard[-1] == "boom":
        raise RuntimeError("the model is down")
    return "Heard: " + " | ".join(heard)


print("importing chat.py")  # must not reach a stdio server's stdout
app = create_react_agent(ScriptedChatModel(reply), [])
'''

BOOK = """
from flowgraph import END, START, MessagesState, StateGraph, interrupt


def ask_city(state: MessagesState) -> dict:
    city = interrupt("Which city?")
    return {"messages": [("ai", f"Booked a table in {city}.")]}


graph = StateGraph(MessagesState)
graph.add_node("ask_city", ask_city)
graph.add_edge(START, "ask_city")
graph.add_edge("ask_city", END)
app = graph.compile()
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "chat.py").write_text(textwrap.dedent(CHAT))
    (tmp_path / "book.py").write_text(textwrap.dedent(BOOK))
    return tmp_path


def command(workdir: Path, *args: str) -> list[str]:
    db = str(workdir / "threads.db")
    return [sys.executable, "-m", "flowgraph.cli", "--db", db, "mcp", *args]


@asynccontextmanager
async def stdio_session(workdir: Path, *apps: str) -> AsyncIterator[Any]:
    """The SDK's client on `flowgraph mcp APPS` over stdio (the server's stderr: stderr.txt)."""
    import mcp
    from mcp.client.stdio import stdio_client

    full = command(workdir, *apps)
    params = mcp.StdioServerParameters(
        command=full[0], args=full[1:], env={"PYTHONPATH": str(ROOT)}, cwd=str(workdir)
    )
    with open(workdir / "stderr.txt", "w") as errlog:
        async with mcp.Client(stdio_client(params, errlog=errlog)) as client:
            yield client


@asynccontextmanager
async def http_session(workdir: Path, *apps: str) -> AsyncIterator[Any]:
    import mcp

    port = free_port()
    process = subprocess.Popen(
        [*command(workdir, *apps), "--port", str(port)],
        cwd=workdir,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        async with mcp.Client(f"http://127.0.0.1:{port}/mcp") as client:
            yield client
    finally:
        stop(process)


async def converse(client: Any, tool: str, *messages: str) -> list[Any]:
    """The results of `messages` sent in turn on one thread (the first call starts it)."""
    results = [await client.call_tool(tool, {"message": messages[0]})]
    thread = results[0].structured_content["thread_id"]
    for message in messages[1:]:
        results.append(await client.call_tool(tool, {"message": message, "thread_id": thread}))
    return results


SESSIONS: dict[str, Callable[..., Any]] = {"stdio": stdio_session, "http": http_session}


@pytest.fixture(params=sorted(SESSIONS))
def session(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return SESSIONS[request.param]


def stored_messages(workdir: Path, thread_id: str) -> list[str]:
    from flowgraph import create_react_agent
    from flowgraph.models import ScriptedChatModel

    reader = create_react_agent(
        ScriptedChatModel([]), checkpointer=SQLiteCheckpointer(workdir / "threads.db")
    )
    return [m.text for m in reader.get_state(thread_id).values.messages]


async def test_lists_each_app_as_a_tool(workdir: Path, session: Callable[..., Any]) -> None:
    async with session(workdir, "chat.py", "table=book.py:app") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == ["chat", "table"]
    if session is stdio_session:  # what the app printed went to stderr, not into the protocol
        assert "importing chat.py" in (workdir / "stderr.txt").read_text()
    schema = tools["chat"].input_schema
    assert schema["required"] == ["message"]
    assert set(schema["properties"]) == {"message", "thread_id"}
    assert "thread_id of an earlier answer" in schema["properties"]["thread_id"]["description"]
    assert "Talk to the flowgraph agent" in (tools["chat"].description or "")
    output = tools["chat"].output_schema or {}
    assert set(output["properties"]) == {"thread_id", "status", "messages", "interrupts"}


async def test_a_thread_id_continues_the_conversation(
    workdir: Path, session: Callable[..., Any]
) -> None:
    async with session(workdir, "chat.py") as client:
        first, second = await converse(client, "chat", "hello", "again")
        other = await client.call_tool("chat", {"message": "elsewhere"})
    thread = first.structured_content["thread_id"]
    assert not first.is_error and first.content[0].text == "Heard: hello"
    assert first.structured_content == {
        "thread_id": thread,
        "status": "done",
        "messages": 2,
        "interrupts": [],
    }
    assert second.content[0].text == "Heard: hello | again"
    assert second.structured_content["messages"] == 4
    assert other.content[0].text == "Heard: elsewhere"
    assert other.structured_content["thread_id"] != thread
    # the conversation is a thread in the CLI's store, recorded with its app
    assert stored_messages(workdir, thread) == [
        "hello",
        "Heard: hello",
        "again",
        "Heard: hello | again",
    ]
    with sqlite3.connect(workdir / "threads.db") as db:
        (spec,) = db.execute(
            "SELECT spec FROM flowgraph_cli_apps WHERE thread_id = ?", (thread,)
        ).fetchone()
    assert spec == f"{workdir / 'chat.py'}:app"


async def test_an_interrupted_run_says_what_it_asks_and_how_to_resume(
    workdir: Path, session: Callable[..., Any]
) -> None:
    async with session(workdir, "book.py") as client:
        asked, done = await converse(client, "book", "A table for two, please", "Lyon")
    thread = asked.structured_content["thread_id"]
    assert not asked.is_error
    assert asked.structured_content["status"] == "interrupted"
    (question,) = asked.structured_content["interrupts"]
    assert (question["node"], question["value"]) == ("ask_city", "Which city?")
    assert asked.content[0].text == (
        "The agent paused and is waiting for an answer:\n"
        "- Which city?\n"
        f'To answer, call `book` again with thread_id "{thread}" and the answer as the '
        "message."
    )
    assert done.content[0].text == "Booked a table in Lyon."
    assert done.structured_content["status"] == "done"
    assert done.structured_content["thread_id"] == thread


async def test_steps_are_reported_as_progress(workdir: Path) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with stdio_session(workdir, "chat.py") as client:
        await client.call_tool("chat", {"message": "hi"}, progress_callback=on_progress)
    assert seen == [(1.0, "step 1: agent")]


async def test_a_failing_agent_is_an_error_result(workdir: Path) -> None:
    async with stdio_session(workdir, "chat.py") as client:
        first, failed, again = await converse(client, "chat", "hello", "boom", "back?")
    thread = first.structured_content["thread_id"]
    assert failed.is_error
    assert failed.content[0].text.startswith(
        f"The agent failed on thread {thread}: RuntimeError: the model is down"
    )
    assert again.content[0].text == "Heard: hello | boom | back?"


async def test_flowgraph_tools_drive_an_mcp_client_agent(workdir: Path) -> None:
    """The two halves together: our MCPClient calls `flowgraph mcp` over stdio."""
    from flowgraph.integrations.mcp import MCPClient

    full = command(workdir, "chat.py")
    connection = {
        "transport": "stdio",
        "command": full[0],
        "args": full[1:],
        "env": {"PYTHONPATH": str(ROOT)},
        "cwd": str(workdir),
    }
    async with MCPClient({"agents": connection}) as client:
        (chat,) = await client.get_tools()
        first = await chat.ainvoke({"message": "ping"})
        thread = first.artifact["thread_id"]
        second = await chat.ainvoke({"message": "pong", "thread_id": thread})
    assert (first.text, second.text) == ("Heard: ping", "Heard: ping | pong")


def test_usage_errors(workdir: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command(workdir, *args),
            cwd=workdir,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
        )

    twice = run("chat.py", "chat=book.py")
    assert twice.returncode == 2
    assert "Two apps are served as tool 'chat'; name them: NAME=APP" in twice.stderr
    missing = run("nowhere.py")
    assert missing.returncode == 1
    assert "No such file" in missing.stderr and "nowhere.py" in missing.stderr


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("agent.py", ("agent", "agent.py")),
        ("examples/react_agent.py:app", ("app", "examples/react_agent.py:app")),
        ("bot=agent.py:graph", ("bot", "agent.py:graph")),
        ("pkg.agents.support", ("support", "pkg.agents.support")),
    ],
)
def test_tool_names_from_app_specs(spec: str, expected: tuple[str, str]) -> None:
    assert tool_name_of(spec) == expected
