"""`stream_events(..., version="v3")`: LangGraph 1.2's run stream and projections (issue 30).

The same program runs on LangGraph and on flowgraph; the projections read
the same: `.values`, `.messages` (per reply: node, text tokens, output),
`.subgraphs` (handles with their own projections and status), and
`.output`, `.interrupted`, `.interrupts`, sync and async.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from tests.compat._libs import LIBRARIES, Lib, load


@pytest.fixture(params=LIBRARIES)
def lib(request: pytest.FixtureRequest) -> Lib:
    warnings.filterwarnings("ignore", message=".*experimental.*")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return load(request.param)


def program(lib: Lib) -> Any:
    """agent (a model reply), then child (a subgraph whose node calls the model), then ask
    (an interrupt)."""
    model = lib.scripted_model([lib.AIMessage("hello there"), lib.AIMessage("bye now")])

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    sub = lib.StateGraph(lib.MessagesState)
    sub.add_node("inner", agent)
    sub.add_edge(lib.START, "inner")

    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(lib.interrupt("ok?"), id="said")]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("child", sub.compile())
    graph.add_node("ask", ask)
    graph.add_edge(lib.START, "agent")
    graph.add_edge("agent", "child")
    graph.add_edge("child", "ask")
    return graph.compile(checkpointer=lib.checkpointer())


def text(message: Any) -> str:
    """A message's text (LangChain 1.x: `.text` a property; flowgraph: too)."""
    return str(message.text)


def start(lib: Lib, app: Any, input: Any = None) -> Any:
    input = {"messages": [lib.HumanMessage("hi")]} if input is None else input
    return app.stream_events(input, {"configurable": {"thread_id": "t"}}, version="v3")


def test_messages_give_each_reply_with_its_tokens(lib: Lib) -> None:
    run = start(lib, program(lib))
    seen = []
    for reply in run.messages:
        tokens = list(reply.text)
        seen.append((reply.node, reply.namespace, "".join(tokens), str(reply.text)))
        assert text(reply.output) == "hello there"
    assert seen == [("agent", [], "hello there", "hello there")]  # the subgraph's: in its handle


def test_values_output_and_interrupts(lib: Lib) -> None:
    run = start(lib, program(lib))
    values = [[text(m) for m in v["messages"]] for v in run.values]
    assert values == [
        ["hi"],
        ["hi", "hello there"],
        ["hi", "hello there", "bye now"],
        ["hi", "hello there", "bye now"],  # the last, with the interrupt
    ]
    assert run.interrupted is True
    assert [i.value for i in run.interrupts] == ["ok?"]
    assert [text(m) for m in run.output["messages"]] == ["hi", "hello there", "bye now"]


def test_output_alone_runs_to_the_end(lib: Lib) -> None:
    run = start(lib, program(lib))
    assert len(run.output["messages"]) == 3
    assert run.interrupted


def test_resuming_finishes_with_no_interrupts(lib: Lib) -> None:
    app = program(lib)
    assert start(lib, app).interrupted
    run = start(lib, app, lib.Command(resume="fine"))
    assert [text(m) for m in run.output["messages"]][-1] == "fine"
    assert (run.interrupted, run.interrupts) == (False, [])


def test_subgraph_handles_have_their_own_projections(lib: Lib) -> None:
    run = start(lib, program(lib))
    found = []
    for sub in run.subgraphs:
        assert sub.status == "started"
        replies = [(m.node, str(m.text)) for m in sub.messages]
        found.append((sub.graph_name, len(sub.path), sub.path[0].split(":")[0], replies))
        assert sub.status == "completed"
        assert [text(m) for m in sub.output["messages"]][-1] == "bye now"
        assert sub.trigger_call_id == sub.path[0].split(":", 1)[1]
    assert found == [("child", 1, "child", [("inner", "bye now")])]
    assert run.interrupted


def test_a_message_returned_whole_is_a_finished_reply(lib: Lib) -> None:
    def node(state: Any) -> dict[str, Any]:
        return {
            "messages": [
                lib.AIMessage("by hand", id="h1"),
                lib.ToolMessage("result", tool_call_id="c1", id="t1"),  # left out, as LangGraph
            ]
        }

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("node", node)
    graph.add_edge(lib.START, "node")
    run = start(lib, graph.compile(checkpointer=lib.checkpointer()))
    assert [(m.node, m.message_id, list(m.text), text(m.output)) for m in run.messages] == [
        ("node", "h1", ["by hand"], "by hand")
    ]


def test_a_projection_has_one_reader(lib: Lib) -> None:
    with start(lib, program(lib)) as run:  # leaving the block stops the run
        iter(run.values).__next__()
        with pytest.raises(RuntimeError):
            next(iter(run.values))


def test_the_async_run_stream(lib: Lib) -> None:
    async def read() -> tuple[list[Any], bool, list[Any], int]:
        app = program(lib)
        run = await app.astream_events(
            {"messages": [lib.HumanMessage("hi")]},
            {"configurable": {"thread_id": "t"}},
            version="v3",
        )
        replies = []
        async for reply in run.messages:
            tokens = [token async for token in reply.text]
            replies.append((reply.node, "".join(tokens), await reply.text))
            assert text(await reply.output) == "hello there"
        interrupts = [i.value for i in await run.interrupts()]
        return replies, await run.interrupted(), interrupts, len((await run.output())["messages"])

    assert asyncio.run(read()) == ([("agent", "hello there", "hello there")], True, ["ok?"], 3)


def test_async_values_and_subgraphs(lib: Lib) -> None:
    async def read() -> tuple[list[int], list[Any]]:
        run = await program(lib).astream_events(
            {"messages": [lib.HumanMessage("hi")]},
            {"configurable": {"thread_id": "t"}},
            version="v3",
        )
        subs = []
        async for sub in run.subgraphs:
            subs.append((sub.graph_name, [await m.text async for m in sub.messages]))
            subs.append(sub.status)
        sizes = [len(v["messages"]) async for v in run.values]
        return sizes, subs

    sizes, subs = asyncio.run(read())
    assert subs == [("child", ["bye now"]), "completed"]
    assert sizes == []  # read once the run has ended: a projection keeps only what it is read for


# -- flowgraph's spelling checks -------------------------------------------------------


def test_v3_takes_no_stream_mode_and_other_versions_are_refused() -> None:
    app = program(load("flowgraph"))
    with pytest.raises(TypeError, match="stream_mode"):
        app.stream_events({"messages": []}, version="v3", stream_mode="values")
    with pytest.raises(ValueError, match=r"version=.v3."):
        app.stream_events({"messages": []}, version="v2")


def test_a_subgraph_that_pauses_is_interrupted(lib: Lib) -> None:
    def inner(state: Any) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(lib.interrupt("sub?"), id="a1")]}

    sub = lib.StateGraph(lib.MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(lib.START, "inner")
    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("child", sub.compile())
    graph.add_edge(lib.START, "child")
    run = start(lib, graph.compile(checkpointer=lib.checkpointer()))
    statuses = []
    for handle in run.subgraphs:
        values = [len(v["messages"]) for v in handle.values]
        statuses.append((handle.graph_name, handle.status, values))
    assert statuses == [("child", "interrupted", [1])]
    assert [i.value for i in run.interrupts] == ["sub?"]


def test_a_subgraph_handles_values_start_after_its_input(lib: Lib) -> None:
    # the subgraph's input is the part that announces it: LangGraph's handle does not see it,
    # and a subgraph that pauses ends on its state again (LangGraph's last values part)
    def add(mark: str) -> Any:
        return lambda state: {"messages": [lib.AIMessage(mark, id=mark)]}

    def ask(state: Any) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(lib.interrupt("go on?"), id="asked")]}

    sub = lib.StateGraph(lib.MessagesState)
    sub.add_node("one", add("one"))
    sub.add_node("two", add("two"))
    sub.add_node("ask", ask)
    sub.add_edge(lib.START, "one")
    sub.add_edge("one", "two")
    sub.add_edge("two", "ask")
    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("first", add("first"))
    graph.add_node("child", sub.compile())
    graph.add_edge(lib.START, "first")
    graph.add_edge("first", "child")
    run = start(lib, graph.compile(checkpointer=lib.checkpointer()))
    seen = [[[text(m) for m in v["messages"]] for v in handle.values] for handle in run.subgraphs]
    assert seen == [
        [["hi", "first", "one"], ["hi", "first", "one", "two"], ["hi", "first", "one", "two"]]
    ]
    assert [i.value for i in run.interrupts] == ["go on?"]


def test_tool_call_fragments_each_name_their_call() -> None:
    import json

    from flowgraph import AIMessage, MessagesState, ScriptedChatModel, StateGraph, ToolCall

    call = ToolCall(id="c1", name="get_weather", args={"city": "Oslo", "unit": "C"})
    model = ScriptedChatModel([AIMessage("Checking.", tool_calls=[call])])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state.messages)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge("__start__", "agent")
    run = graph.compile().stream_events({"messages": [("user", "hi")]}, version="v3")
    (reply,) = list(run.messages)
    fragments = list(reply.tool_calls)
    assert len(fragments) > 1  # the arguments arrive in pieces
    assert {(f.id, f.name) for f in fragments} == {("c1", "get_weather")}
    assert json.loads("".join(f.args for f in fragments)) == call.args
    assert (str(reply.text), reply.output.tool_calls) == ("Checking.", [call])


def test_lifecycle_tells_each_subgraph_run_starting_and_ending(lib: Lib) -> None:
    run = start(lib, program(lib))
    told = [(p["event"], [s.split(":")[0] for s in p["namespace"]]) for p in run.lifecycle]
    assert told == [("started", ["child"]), ("completed", ["child"])]

    def inner(state: Any) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(lib.interrupt("sub?"), id="a1")]}

    sub = lib.StateGraph(lib.MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(lib.START, "inner")
    mid = lib.StateGraph(lib.MessagesState)
    mid.add_node("sub", sub.compile())
    mid.add_edge(lib.START, "sub")
    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("mid", mid.compile())
    graph.add_edge(lib.START, "mid")
    run = start(lib, graph.compile(checkpointer=lib.checkpointer()))
    payloads = list(run.lifecycle)
    assert [(p["event"], [s.split(":")[0] for s in p["namespace"]]) for p in payloads] == [
        ("started", ["mid"]),
        ("started", ["mid", "sub"]),
        ("interrupted", ["mid", "sub"]),
        ("interrupted", ["mid"]),
    ]
    assert payloads[0]["graph_name"] == "mid"
    assert payloads[0]["trigger_call_id"] == payloads[0]["namespace"][0].split(":", 1)[1]
