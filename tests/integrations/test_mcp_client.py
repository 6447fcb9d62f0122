"""MCPClient against real MCP server processes, over stdio and streamable HTTP.

The server is `mcp_server_app.py` (the SDK's MCPServer). Each test talks to
a fresh server process; results are checked as the model would read them
(the ToolMessage) and as the application keeps them (the artifact).
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    FilePart,
    ImagePart,
    MCPConnectionError,
    MCPError,
    MCPTimeoutError,
    MessagesState,
    ScriptedChatModel,
    StateGraph,
    TextPart,
    ToolError,
    ToolMessage,
    ToolNode,
    create_react_agent,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.integrations.mcp import MCPClient, MCPTool

from .conftest import (
    SERVER,
    HttpServer,
    alive,
    free_port,
    stdio_connection,
    stop,
    wait_for_port,
    wait_gone,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n% a tiny test document\n"

Connect = Callable[..., dict[str, Any]]

pytestmark = pytest.mark.anyio


def by_name(tools: list[MCPTool]) -> dict[str, MCPTool]:
    return {t.name: t for t in tools}


def tool_graph(tools: list[MCPTool]) -> Any:
    """START -> ToolNode -> END: runs the tool calls of the input's AIMessage."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def calls(*items: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{i}", "name": name, "args": args} for i, (name, args) in enumerate(items)
    ]
    return {"messages": [AIMessage("", tool_calls=tool_calls)]}


def answers(state: MessagesState) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state.messages if isinstance(m, ToolMessage)}


# -- what the server says -------------------------------------------------------------


async def test_tools_are_described_by_the_server(connection: Connect) -> None:
    import mcp

    config = connection()
    async with MCPClient({"test": config}) as client:
        tools = by_name(await client.get_tools())
    target: Any = (
        config["url"]
        if config["transport"] != "stdio"
        else mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    )
    async with mcp.Client(target) as raw:
        listed = {t.name: t for t in (await raw.list_tools()).tools}
    assert list(tools) == list(listed)
    add = tools["add"]
    assert add.description == "Add two integers." == listed["add"].description
    assert add.json_schema == listed["add"].input_schema  # as given, title and all
    assert add.json_schema["required"] == ["a", "b"]
    assert add.to_openai()["function"]["parameters"] == listed["add"].input_schema
    assert add.server == "test" and add.remote_name == "add"
    assert add.output_schema == listed["add"].output_schema
    assert tools["echo"].args_schema.model_json_schema() == listed["echo"].input_schema


async def test_results_map_to_messages(connection: Connect) -> None:
    async with MCPClient({"test": connection()}) as client:
        tools = by_name(await client.get_tools())
        add = await tools["add"].ainvoke({"a": 2, "b": 3})
        echo = await tools["echo"].ainvoke({"text": "hi", "times": 2})
        chart = await tools["chart"].ainvoke({"title": "sales"})
        text_report = await tools["report"].ainvoke({})
        pdf_report = await tools["report"].ainvoke({"kind": "pdf"})
        forecast = await tools["forecast"].ainvoke({"city": "Paris"})
        failed = await tools["fail"].ainvoke({"reason": "no coffee"})
        refused = await tools["add"].ainvoke({"a": "two"})

    assert (add.content, add.artifact, add.status) == ("5", {"result": 5}, "success")
    assert (echo.content, echo.artifact) == ("hi hi", None)
    assert add.metadata == {"mcp_server": "test", "mcp_tool": "add"}

    caption, image = chart.content
    assert caption == TextPart(text="Chart: sales")
    assert isinstance(image, ImagePart) and image.mime_type == "image/png"
    assert image.as_bytes() == PNG

    assert text_report.content == "# Q3\nRevenue up 12%."
    (document,) = pdf_report.content
    assert isinstance(document, FilePart)
    assert (document.mime_type, document.filename) == ("application/pdf", "q3.pdf")
    assert document.as_bytes() == PDF

    assert forecast.artifact == {"city": "Paris", "temperature_c": 21.5, "conditions": "sunny"}
    assert '"conditions": "sunny"' in forecast.text

    assert failed.status == "error"
    assert "cannot do that: no coffee" in failed.text
    # arguments go to the server as given; its refusal is an error the model reads
    assert refused.status == "error"
    assert "validation error" in refused.text and "b" in refused.text


async def test_arguments_must_be_an_object(connection: Connect) -> None:
    async with MCPClient({"test": connection()}) as client:
        add = by_name(await client.get_tools())["add"]
        with pytest.raises(ToolError, match="expected a JSON object"):
            add.parse_args(["not", "an", "object"])  # type: ignore[arg-type]


# -- in graphs, sync and async ----------------------------------------------------------


async def test_tool_node_runs_mcp_tools_async(connection: Connect) -> None:
    async with MCPClient({"test": connection()}) as client:
        app = tool_graph(await client.get_tools())
        state = await app.ainvoke(
            calls(("add", {"a": 1, "b": 2}), ("fail", {"reason": "why"}), ("chart", {"title": "x"}))
        )
    got = answers(state)
    assert [m.tool_call_id for m in state.messages[1:]] == ["call_0", "call_1", "call_2"]
    assert (got["call_0"].text, got["call_0"].status, got["call_0"].name) == ("3", "success", "add")
    assert got["call_0"].artifact == {"result": 3}
    assert got["call_1"].status == "error" and "cannot do that: why" in got["call_1"].text
    assert isinstance(got["call_2"].content[1], ImagePart)


def test_tool_node_runs_mcp_tools_in_a_sync_graph(connection: Connect) -> None:
    with MCPClient({"test": connection()}) as client:
        app = tool_graph(client.get_tools_sync())
        first = app.invoke(calls(("pid", {}), ("add", {"a": 20, "b": 22})))
        second = app.invoke(calls(("pid", {})))
        # from another thread (its own private loop) and from inside a running loop
        third: list[Any] = []
        worker = threading.Thread(target=lambda: third.append(app.invoke(calls(("pid", {})))))
        worker.start()
        worker.join()

        async def nested() -> Any:
            return app.invoke(calls(("pid", {})))

        fourth = asyncio.run(nested())
    assert answers(first)["call_1"].text == "42"
    pids = {answers(s)["call_0"].artifact["result"] for s in (first, second, third[0], fourth)}
    assert len(pids) == 1  # one session, one server process, reused by every call


def test_create_react_agent_with_mcp_tools_sync_and_async(connection: Connect) -> None:
    def reply(messages: list[Any]) -> Any:
        last = messages[-1]
        if last.type == "human":
            return {"tool_calls": [{"name": "forecast", "args": {"city": "Oslo"}}]}
        return f"Forecast: {last.text.splitlines()[2].strip()}"

    with MCPClient({"test": connection()}) as client:
        tools = asyncio.run(client.get_tools())
        model = ScriptedChatModel(reply)
        agent = create_react_agent(model, tools, checkpointer=MemoryCheckpointer())
        sync_state = agent.invoke({"messages": [("user", "Weather in Oslo?")]}, thread_id="s")
        async_state = asyncio.run(
            agent.ainvoke({"messages": [("user", "Weather in Oslo?")]}, thread_id="a")
        )
    for state in (sync_state, async_state):
        assert state.messages[-1].text == 'Forecast: "temperature_c": 21.5,'
        result = state.messages[2]
        assert isinstance(result, ToolMessage) and result.name == "forecast"
        assert result.artifact == {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny"}
    # the model saw the server's schema for each tool
    spec = {s.name: s for s in model.requests[0].tools}["forecast"]
    assert spec.parameters == by_name(tools)["forecast"].json_schema
    assert spec.description == "The weather forecast for a city, as structured data."


# -- progress ---------------------------------------------------------------------------


async def test_progress_reaches_the_events_stream(connection: Connect) -> None:
    async with MCPClient({"test": connection()}) as client:
        app = tool_graph(await client.get_tools())
        parts = [p async for p in app.astream(calls(("long_job", {"steps": 3})), mode="events")]
    progress = [p for p in parts if p.data.get("event") == "progress"]
    assert [p.data for p in progress] == [
        {
            "event": "progress",
            "server": "test",
            "tool": "long_job",
            "tool_call_id": "call_0",
            "progress": float(i),
            "total": 3.0,
            "message": f"step {i} of 3",
        }
        for i in (1, 2, 3)
    ]
    assert {(p.node, p.step) for p in progress} == {("tools", 1)}
    events = [p.data["event"] for p in parts]
    assert events.index("progress") > events.index("start")
    assert len(events) - 1 - events[::-1].index("progress") < events.index("end")


def test_progress_reaches_a_sync_stream(connection: Connect) -> None:
    with MCPClient({"test": connection()}) as client:
        app = tool_graph(asyncio.run(client.get_tools()))
        parts = list(app.stream(calls(("long_job", {"steps": 2})), mode=["events", "updates"]))
    events = [p.data for p in parts if p.mode == "events"]
    assert [e["progress"] for e in events if e["event"] == "progress"] == [1.0, 2.0]
    update = next(p for p in parts if p.mode == "updates")
    assert (update.node, update.data["messages"][0].text) == ("tools", "done 2 steps")


# -- failures ---------------------------------------------------------------------------


async def test_a_slow_tool_times_out_and_the_session_lives_on(connection: Connect) -> None:
    async with MCPClient({"test": connection(timeout=0.5)}) as client:
        tools = by_name(await client.get_tools())
        before = (await tools["pid"].ainvoke({})).artifact
        with pytest.raises(MCPTimeoutError) as caught:
            await tools["slow"].ainvoke({"seconds": 30}, tool_call_id="call_9")
        app = tool_graph(list(tools.values()))
        state = await app.ainvoke(calls(("slow", {"seconds": 30})))
        after = (await tools["pid"].ainvoke({})).artifact
    error = caught.value
    assert isinstance(error, TimeoutError) and isinstance(error, ToolError)
    assert (error.server, error.tool_name, error.tool_call_id) == ("test", "slow", "call_9")
    assert "MCP server 'test' did not answer tool 'slow' within 0.5 s" in str(error)
    message = answers(state)["call_0"]
    assert message.status == "error" and "MCPTimeoutError" in message.text
    assert "did not answer tool 'slow' within 0.5 s" in message.text
    assert before == after  # same process: a timeout does not cost the session


async def test_a_tool_node_timeout_cancels_the_call(connection: Connect) -> None:
    async with MCPClient({"test": connection()}) as client:
        tools = await client.get_tools()
        graph = StateGraph(MessagesState)
        graph.add_node("tools", ToolNode(tools, timeout=0.3))
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        app = graph.compile()
        state = await app.ainvoke(calls(("slow", {"seconds": 30}), ("add", {"a": 1, "b": 2})))
        again = await app.ainvoke(calls(("add", {"a": 3, "b": 4})))
    slow, add = answers(state)["call_0"], answers(state)["call_1"]
    assert slow.status == "error" and "did not finish within 0.3 s" in slow.text
    assert (add.status, add.text) == ("success", "3")
    assert answers(again)["call_0"].text == "7"  # the session survived the cancellation


async def test_a_killed_stdio_server_is_restarted_once() -> None:
    async with MCPClient({"test": stdio_connection()}) as client:
        tools = by_name(await client.get_tools())
        first = (await tools["pid"].ainvoke({})).artifact["result"]
        os.kill(first, signal.SIGKILL)
        wait_gone(first)
        added = await tools["add"].ainvoke({"a": 1, "b": 1})
        second = (await tools["pid"].ainvoke({})).artifact["result"]
        third = (await tools["pid"].ainvoke({})).artifact["result"]
    assert added.text == "2"
    assert second != first and third == second  # one restart, then that session is reused
    wait_gone(second)  # and closing the client stopped it


async def test_an_http_server_that_restarted_is_reconnected(
    start_http_server: Callable[..., HttpServer],
) -> None:
    server = start_http_server()
    async with MCPClient({"test": {"transport": "http", "url": server.url}}) as client:
        tools = by_name(await client.get_tools())
        first = (await tools["pid"].ainvoke({})).artifact["result"]
        server.restart()
        second = (await tools["pid"].ainvoke({})).artifact["result"]
        server.kill()
        with pytest.raises(MCPConnectionError) as caught:
            await tools["add"].ainvoke({"a": 1, "b": 1})
    assert first != second == server.process.pid
    error = caught.value
    assert (error.server, error.tool_name) == ("test", "add")
    assert "MCP server 'test'" in str(error) and "tool 'add'" in str(error)
    assert isinstance(error, ConnectionError)


async def test_a_call_that_kills_its_server_twice_fails_clearly() -> None:
    async with MCPClient({"crashy": stdio_connection()}) as client:
        tools = by_name(await client.get_tools())
        with pytest.raises(MCPConnectionError) as caught:
            await tools["crash"].ainvoke({})
        # the client is still usable: the next call starts the server again
        assert (await tools["add"].ainvoke({"a": 2, "b": 2})).text == "4"
    message = str(caught.value)
    assert "MCP server 'crashy' dropped the connection during tool 'crash'" in message
    assert "again after reconnecting once" in message
    assert caught.value.tool_name == "crash"


async def test_a_server_that_cannot_be_restarted_fails_naming_it(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    once = tmp_path / "once.py"
    once.write_text(
        textwrap.dedent(
            f"""
            import os, sys
            if os.path.exists({str(marker)!r}):
                sys.exit("refusing to start a second time")
            open({str(marker)!r}, "w").close()
            os.execv(sys.executable, [sys.executable, {str(SERVER)!r}])
            """
        )
    )
    connection = {"transport": "stdio", "command": sys.executable, "args": [str(once)]}
    async with MCPClient({"once": connection}) as client:
        tools = by_name(await client.get_tools())
        pid = (await tools["pid"].ainvoke({})).artifact["result"]
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid)
        with pytest.raises(MCPConnectionError) as caught:
            await tools["add"].ainvoke({"a": 1, "b": 1})
    message = str(caught.value)
    assert "MCP server 'once' dropped the connection during tool 'add'" in message
    assert "could not be reconnected" in message
    assert "refusing to start a second time" in message  # the server's own stderr


async def test_a_command_that_does_not_exist_names_the_server() -> None:
    client = MCPClient({"ghost": {"transport": "stdio", "command": "/nonexistent/mcp-server"}})
    with pytest.raises(MCPConnectionError) as caught:
        await client.get_tools()
    await client.aclose()
    assert caught.value.server == "ghost"
    assert str(caught.value) == (
        "MCP server 'ghost' could not be started: command '/nonexistent/mcp-server' was not "
        "found; check 'command' in its connection (a full path, or a program on PATH)"
    )


async def test_a_server_that_exits_at_start_shows_its_stderr() -> None:
    script = "import sys; sys.exit('ModuleNotFoundError: No module named weather_api')"
    client = MCPClient({"weather": {"command": sys.executable, "args": ["-c", script]}})
    with pytest.raises(MCPConnectionError) as caught:
        await client.get_tools()
    await client.aclose()
    message = str(caught.value)
    assert message.startswith("MCP server 'weather' (")
    assert "stopped before the MCP handshake completed" in message
    assert message.endswith(
        "its last output on stderr:\nModuleNotFoundError: No module named weather_api"
    )


async def test_a_server_that_never_answers_times_out_at_the_handshake() -> None:
    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}
    client = MCPClient({"silent": silent}, connect_timeout=1)
    with pytest.raises(MCPConnectionError, match="did not complete the MCP handshake within 1 s"):
        await client.get_tools()
    await client.aclose()


async def test_an_unreachable_http_server_names_server_and_url(
    start_http_server: Callable[..., HttpServer],
) -> None:
    server = start_http_server()
    server.kill()
    async with MCPClient({"remote": {"transport": "http", "url": server.url}}) as client:
        with pytest.raises(MCPConnectionError) as caught:
            await client.get_tools()
    assert str(caught.value).startswith(
        f"MCP server 'remote' at {server.url} could not be reached (ConnectError"
    )


async def test_an_http_server_that_is_not_mcp_fails_the_handshake(tmp_path: Path) -> None:
    port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, web)
        url = f"http://127.0.0.1:{port}/mcp"
        async with MCPClient({"web": {"transport": "http", "url": url}}) as client:
            with pytest.raises(MCPConnectionError) as caught:
                await client.get_tools()
    finally:
        stop(web)
    assert str(caught.value).startswith(f"MCP server 'web' at {url} failed the MCP handshake (")
    assert str(caught.value).endswith(
        "check the url (the MCP endpoint, often ending in /mcp) and the headers it needs"
    )


# -- closing ------------------------------------------------------------------------------


async def test_closing_stops_the_server_and_the_tools() -> None:
    client = MCPClient({"test": stdio_connection()})
    tools = by_name(await client.get_tools())
    pid = (await tools["pid"].ainvoke({})).artifact["result"]
    await client.aclose()
    wait_gone(pid)
    with pytest.raises(MCPError, match="MCPClient was closed"):
        await tools["add"].ainvoke({"a": 1, "b": 2})
    await client.aclose()  # closing twice is fine


def test_sync_close_stops_the_server() -> None:
    client = MCPClient({"test": stdio_connection()})
    add = by_name(asyncio.run(client.get_tools()))["pid"]
    pid = add.invoke({}).artifact["result"]
    assert alive(pid)
    client.close()
    wait_gone(pid)
    assert not any(t.name == "flowgraph-mcp-client" for t in threading.enumerate())


# -- configuration ------------------------------------------------------------------------


async def test_tool_names_are_unique_across_servers() -> None:
    both = {"a": stdio_connection(), "b": stdio_connection()}
    async with MCPClient(both) as client:
        with pytest.raises(ValueError, match="'a' and 'b' both have a tool named 'add'"):
            await client.get_tools()
        assert [t.name for t in await client.get_tools("b")][:2] == ["add", "echo"]
    async with MCPClient(both, tool_name_prefix=True) as client:
        tools = by_name(await client.get_tools())
        assert {"a_add", "b_add"} <= set(tools)
        assert tools["b_add"].remote_name == "add"
        assert (await tools["b_add"].ainvoke({"a": 1, "b": 2})).text == "3"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"transport": "sse", "url": "http://x"}, "transport 'sse' is not supported"),
        ({"transport": "stdio"}, "a stdio connection needs 'command'"),
        ({"transport": "http", "url": "localhost:8000"}, "needs 'url', an http(s) URL"),
        ({"command": "python", "headers": {}}, "unknown key(s) 'headers' for transport 'stdio'"),
        ({"command": "python", "timeout": 0}, "'timeout' must be a positive number"),
    ],
)
def test_connection_mistakes_are_named(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        MCPClient({"bad": config})
    assert str(caught.value).startswith("MCP server 'bad': ")
    assert message in str(caught.value)


def test_an_unknown_server_is_named() -> None:
    client = MCPClient({"test": stdio_connection()})
    with pytest.raises(ValueError, match="no MCP server 'other' in this client; it has 'test'"):
        asyncio.run(client.get_tools("other"))
    client.close()
