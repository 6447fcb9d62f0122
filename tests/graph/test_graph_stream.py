"""stream/astream: the contents and order of each mode (DESIGN §3, §9; issue 3 item 8)."""

from __future__ import annotations

import asyncio
import itertools
import operator
import threading
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    ScriptedChatModel,
    StateGraph,
    StreamPart,
    get_stream_writer,
)
from flowgraph._context import emit
from flowgraph.checkpoint import MemoryCheckpointer

TIMEOUT = 5.0


class State(MessagesState):
    trail: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0


def mark(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"trail": [name], "count": state.count + 1}

    return node


def diamond() -> Any:
    """START -> a -> (b, c) -> END: two steps, the second with two tasks."""
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    g.add_edge("b", END).add_edge("c", END)
    return g.compile()


def chain(nodes: dict[str, Any]) -> Any:
    g = StateGraph(State)
    names = list(nodes)
    for name, fn in nodes.items():
        g.add_node(name, fn)
    g.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], END)
    return g.compile()


async def collect(stream: Any) -> list[StreamPart]:
    return [part async for part in stream]


# ------------------------------------------------------------------ updates / values


def test_updates_mode_yields_each_nodes_update_in_step_order() -> None:
    parts = list(diamond().stream({}, mode="updates"))
    assert all(isinstance(p, StreamPart) and p.mode == "updates" for p in parts)
    assert [(p.step, p.node, p.data) for p in parts] == [
        (1, "a", {"trail": ["a"], "count": 1}),
        (2, "b", {"trail": ["b"], "count": 2}),
        (2, "c", {"trail": ["c"], "count": 2}),
    ]


def test_the_default_stream_is_langgraphs_updates() -> None:
    items = list(diamond().stream({}))
    assert items == [{p.node: p.data} for p in diamond().stream({}, mode="updates")]
    assert all(isinstance(item, dict) and len(item) == 1 for item in items)


def test_node_returning_none_streams_an_empty_update() -> None:
    parts = list(chain({"quiet": lambda s: None}).stream({}, mode="updates"))
    assert [(p.node, p.data) for p in parts] == [("quiet", {})]


def test_values_mode_yields_input_then_state_after_each_step() -> None:
    parts = list(diamond().stream({"count": 10}, mode="values"))
    assert [p.step for p in parts] == [0, 1, 2]
    assert all(type(p.data) is State and p.node is None for p in parts)
    assert [(p.data.trail, p.data.count) for p in parts] == [
        ([], 10),
        (["a"], 11),
        (["a", "b", "c"], 12),
    ]


def test_astream_matches_stream() -> None:
    sync = [(p.mode, p.step, p.node) for p in diamond().stream({}, mode=["updates", "values"])]
    parts = asyncio.run(collect(diamond().astream({}, mode=["updates", "values"])))
    assert [(p.mode, p.step, p.node) for p in parts] == sync


def test_several_modes_at_once_interleave_by_step() -> None:
    parts = list(diamond().stream({"count": 1}, mode=["updates", "values"]))
    assert [(p.mode, p.step, p.node) for p in parts] == [
        ("values", 0, None),
        ("updates", 1, "a"),
        ("values", 1, None),
        ("updates", 2, "b"),
        ("updates", 2, "c"),
        ("values", 2, None),
    ]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        list(diamond().stream({}, mode="tokens"))  # type: ignore[arg-type]


# ------------------------------------------------------------------ events


def test_events_mode_reports_start_and_end_with_duration() -> None:
    parts = list(diamond().stream({}, mode="events"))
    events = [(p.step, p.node, p.data["event"]) for p in parts]
    assert events[:2] == [(1, "a", "start"), (1, "a", "end")]
    assert sorted(events[2:]) == [
        (2, "b", "end"),
        (2, "b", "start"),
        (2, "c", "end"),
        (2, "c", "start"),
    ]
    for node in ("b", "c"):
        assert events.index((2, node, "start")) < events.index((2, node, "end"))
    ends = [p.data for p in parts if p.data["event"] == "end"]
    assert all(isinstance(e["duration"], float) and e["duration"] >= 0 for e in ends)


def test_events_mode_reports_an_error_with_its_text() -> None:
    def broken(state: State) -> None:
        raise RuntimeError("the disk is on fire")

    parts: list[StreamPart] = []
    with pytest.raises(RuntimeError, match="on fire"):
        for part in chain({"a": mark("a"), "broken": broken}).stream({}, mode="events"):
            parts.append(part)
    assert [(p.node, p.data["event"]) for p in parts] == [
        ("a", "start"),
        ("a", "end"),
        ("broken", "start"),
        ("broken", "error"),
    ]
    error = parts[-1].data
    assert "RuntimeError" in error["error"] and "the disk is on fire" in error["error"]
    assert error["duration"] >= 0


# ------------------------------------------------------------------ messages


async def async_model(state: State) -> dict[str, Any]:
    for token in ("Hel", "lo"):
        emit("messages", token)
        await asyncio.sleep(0)
    return {"messages": [AIMessage("Hello")]}


def sync_model(name: str) -> Any:
    def model(state: State) -> dict[str, Any]:
        for token in (f"{name}-1", f"{name}-2", f"{name}-3"):
            emit("messages", token)
        return {"messages": [AIMessage(name)]}

    return model


def test_messages_from_an_async_node_arrive_tagged_in_order() -> None:
    parts = list(chain({"model": async_model}).stream({}, mode="messages"))
    assert [(p.mode, p.step, p.node, p.data) for p in parts] == [
        ("messages", 1, "model", "Hel"),
        ("messages", 1, "model", "lo"),
    ]


def test_messages_from_sync_nodes_in_worker_threads_arrive_before_the_steps_updates() -> None:
    g = StateGraph(State)
    g.add_node("first", mark("first"))
    g.add_node("x", sync_model("x"))
    g.add_node("y", sync_model("y"))
    g.add_edge(START, "first").add_edge("first", "x").add_edge("first", "y")
    g.add_edge("x", END).add_edge("y", END)
    app = g.compile()
    for parts in (
        list(app.stream({}, mode=["messages", "updates"])),
        asyncio.run(collect(app.astream({}, mode=["messages", "updates"]))),
    ):
        step2 = [p for p in parts if p.step == 2]
        tokens = [(p.node, p.data) for p in step2 if p.mode == "messages"]
        for name in ("x", "y"):  # each node's tokens in order
            assert [t for n, t in tokens if n == name] == [f"{name}-1", f"{name}-2", f"{name}-3"]
        first_update = next(i for i, p in enumerate(step2) if p.mode == "updates")
        assert all(p.mode == "messages" for p in step2[:first_update])
        assert len(tokens) == 6
        assert [p.node for p in step2[first_update:]] == ["x", "y"]
        assert [p.mode for p in parts if p.step == 1] == ["updates"]


def test_messages_only_reach_the_stream_when_asked_for() -> None:
    parts = list(chain({"model": async_model}).stream({}, mode="updates"))
    assert [p.mode for p in parts] == ["updates"]
    assert chain({"model": async_model}).invoke({}).messages[0].text == "Hello"


def test_tokens_from_a_sync_node_arrive_while_it_runs_under_astream() -> None:
    seen = threading.Event()

    def model(state: State) -> dict[str, Any]:
        emit("messages", "first token")
        arrived = seen.wait(TIMEOUT)  # the caller has the token before the node returns
        return {"messages": [AIMessage("in time" if arrived else "too late")]}

    async def main() -> str:
        text = ""
        async for part in chain({"model": model}).astream({}, mode=["messages", "updates"]):
            if part.mode == "messages":
                seen.set()
            else:
                text = part.data["messages"][0].text
        return text

    assert asyncio.run(main()) == "in time"


def test_tokens_from_a_sync_node_arrive_while_it_runs_under_stream() -> None:
    seen = threading.Event()

    def model(state: State) -> dict[str, Any]:
        emit("messages", "first token")
        arrived = seen.wait(TIMEOUT)
        return {"messages": [AIMessage("in time" if arrived else "too late")]}

    text = ""
    for part in chain({"model": model}).stream({}, mode=["messages", "updates"]):
        if part.mode == "messages":
            seen.set()
        else:
            text = part.data["messages"][0].text
    assert text == "in time"


# ------------------------------------------------------------------ stopping and errors


def recorder(ran: list[str], name: str, *, is_async: bool) -> Any:
    if is_async:

        async def anode(state: State) -> dict[str, Any]:
            ran.append(name)
            await asyncio.sleep(0.001)
            return {"trail": [name]}

        return anode

    def node(state: State) -> dict[str, Any]:
        ran.append(name)
        return {"trail": [name]}

    return node


def test_breaking_out_of_stream_stops_the_run_async_nodes() -> None:
    ran: list[str] = []
    app = chain({n: recorder(ran, n, is_async=True) for n in ("a", "b", "c", "d")})
    for part in app.stream({}, mode="updates"):
        assert part.node == "a"
        break
    assert "c" not in ran and "d" not in ran


def test_closing_astream_stops_the_run() -> None:
    ran: list[str] = []
    app = chain(
        {
            n: recorder(ran, n, is_async=is_async)
            for n, is_async in (("a", True), ("b", True), ("c", False), ("d", False))
        }
    )

    async def main() -> None:
        stream = app.astream({}, mode="updates")
        async for part in stream:
            assert part.node == "a"
            break
        await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert "c" not in ran and "d" not in ran


def test_breaking_out_of_stream_stops_the_run_sync_nodes() -> None:
    ran: list[str] = []
    names = ("a", "b", "c", "d", "e", "f", "g", "h")
    app = chain({n: recorder(ran, n, is_async=False) for n in names})
    for part in app.stream({}, mode="updates"):
        assert part.node == "a"
        break
    assert "h" not in ran  # the run stopped (it may have run a step or two ahead)


def test_no_step_starts_after_the_reader_stopped() -> None:
    ran: list[str] = []
    release = threading.Event()
    b_finished = threading.Event()

    def b(state: State) -> dict[str, Any]:
        ran.append("b")
        release.wait(TIMEOUT)  # still running when the reader stops
        b_finished.set()
        return {"trail": ["b"]}

    app = chain(
        {"a": recorder(ran, "a", is_async=False), "b": b, "c": recorder(ran, "c", is_async=False)}
    )
    for part in app.stream({}, mode="updates"):
        assert part.node == "a"
        break
    release.set()
    if "b" in ran:
        assert b_finished.wait(TIMEOUT)
    assert "c" not in ran


def test_exceptions_propagate_out_of_stream_and_astream() -> None:
    def broken(state: State) -> None:
        raise KeyError("missing")

    app = chain({"a": mark("a"), "broken": broken})
    received: list[str | None] = []
    with pytest.raises(KeyError) as info:
        for part in app.stream({}, mode="updates"):
            received.append(part.node)
    assert received == ["a"]
    assert any("'broken'" in note for note in info.value.__notes__)

    async def main() -> None:
        async for _ in app.astream({}, mode="updates"):
            pass

    with pytest.raises(KeyError):
        asyncio.run(main())


def test_invalid_input_raises_from_stream() -> None:
    with pytest.raises(ValueError):
        list(diamond().stream({"count": "many"}, mode="updates"))


# ------------------------------------------------------------------ custom


def writing(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        writer = get_stream_writer()
        writer(f"{name} started")
        writer({"node": name, "done": True})
        return {"trail": [name]}

    return node


def test_custom_mode_yields_what_nodes_write_tagged_with_node_and_step() -> None:
    app = chain({"a": writing("a"), "b": writing("b")})
    parts = list(app.stream({}, mode="custom"))
    assert [(p.mode, p.step, p.node, p.data) for p in parts] == [
        ("custom", 1, "a", "a started"),
        ("custom", 1, "a", {"node": "a", "done": True}),
        ("custom", 2, "b", "b started"),
        ("custom", 2, "b", {"node": "b", "done": True}),
    ]
    updates = [p for p in app.stream({}, mode=["custom", "updates"]) if p.mode == "updates"]
    assert [p.node for p in updates] == ["a", "b"]


def test_a_stream_writer_nobody_listens_to_does_nothing() -> None:
    app = chain({"a": writing("a")})
    assert app.invoke({}).trail == ["a"]
    assert [p.mode for p in app.stream({}, mode="updates")] == ["updates"]
    get_stream_writer()("outside a run")  # no error, nowhere to go


# ------------------------------------------------------------------ values as LangGraph emits


def test_values_skip_an_input_and_steps_that_write_nothing() -> None:
    app = chain({"a": mark("a"), "quiet": lambda s: None, "b": mark("b")})
    parts = list(app.stream({}, mode="values"))
    assert [(p.step, p.data.trail) for p in parts] == [(1, ["a"]), (3, ["a", "b"])]


def test_a_resumed_run_first_streams_the_state_it_goes_on_from() -> None:
    g = StateGraph(State)
    g.add_sequence([("a", mark("a")), ("b", mark("b"))])
    g.add_edge(START, "a")
    app = g.compile(checkpointer=MemoryCheckpointer(), interrupt_before=["b"])
    first = list(app.stream({"count": 1}, thread_id="t", mode=["values", "updates"]))
    assert [(p.mode, p.step, p.node) for p in first] == [
        ("values", 0, None),
        ("updates", 1, "a"),
        ("values", 1, None),
        ("updates", 2, "__interrupt__"),  # a breakpoint: the pause, with no interrupts
    ]
    assert first[-1].data == []
    resumed = list(app.stream(None, thread_id="t", mode="values"))
    assert [(p.step, p.data.trail) for p in resumed] == [(1, ["a"]), (2, ["a", "b"])]


# ------------------------------------------------------------------ laziness


def test_no_node_runs_while_the_reader_handles_an_item_sync_and_async() -> None:
    ran: list[str] = []
    names = ("a", "b", "c")

    def seen_by_reader(parts: list[tuple[str | None, list[str]]]) -> None:
        assert parts == [("a", ["a"]), ("b", ["a", "b"]), ("c", ["a", "b", "c"])]

    for is_async in (False, True):
        app = chain({n: recorder(ran, n, is_async=is_async) for n in names})
        ran.clear()
        got = []
        for part in app.stream({}, mode="updates"):
            threading.Event().wait(0.02)  # a slow reader
            got.append((part.node, list(ran)))
        seen_by_reader(got)

        async def main(app: Any = app) -> list[tuple[str | None, list[str]]]:
            got = []
            async for part in app.astream({}, mode="updates"):
                await asyncio.sleep(0.02)
                got.append((part.node, list(ran)))
            return got

        ran.clear()
        seen_by_reader(asyncio.run(main()))


def test_breaking_out_runs_nothing_more() -> None:
    ran: list[str] = []
    app = chain({n: recorder(ran, n, is_async=False) for n in ("a", "b", "c")})
    for _ in app.stream({}, mode="updates"):
        break
    threading.Event().wait(0.05)
    assert ran == ["a"]

    async def main() -> None:
        stream = app.astream({}, mode="updates")
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)

    ran.clear()
    asyncio.run(main())
    assert ran == ["a"]


# ------------------------------------------------------------------ subgraphs


def nested_app() -> Any:
    """outer -> middle (a subgraph) -> inner (a subgraph of it) -> leaf."""
    leaf = StateGraph(State)
    leaf.add_node("leaf", writing("leaf"))
    leaf.add_edge(START, "leaf")
    middle = StateGraph(State)
    middle.add_node("inner", leaf.compile())
    middle.add_edge(START, "inner")
    top = StateGraph(State)
    top.add_node("outer", mark("outer"))
    top.add_node("middle", middle.compile())
    top.add_edge(START, "outer").add_edge("outer", "middle")
    return top.compile()


def test_subgraph_steps_stream_with_their_namespace() -> None:
    parts = list(nested_app().stream({}, mode=["updates", "custom"], subgraphs=True))
    seen = [(tuple(s.split(":")[0] for s in p.namespace), p.mode, p.node) for p in parts]
    assert seen == [
        ((), "updates", "outer"),
        (("middle", "inner"), "custom", "leaf"),
        (("middle", "inner"), "custom", "leaf"),
        (("middle", "inner"), "updates", "leaf"),
        (("middle",), "updates", "inner"),
        ((), "updates", "middle"),
    ]
    ids = {p.namespace for p in parts if p.namespace}
    assert len({ns[0] for ns in ids}) == 1  # one task id for the middle node's run
    assert all(len(s.split(":")[1]) == 16 for ns in ids for s in ns)


def test_without_subgraphs_custom_data_comes_as_the_subgraph_nodes_own() -> None:
    parts = list(nested_app().stream({}, mode="custom"))
    assert [(p.node, p.step, p.namespace, p.data) for p in parts] == [
        ("middle", 2, (), "leaf started"),
        ("middle", 2, (), {"node": "leaf", "done": True}),
    ]


# ------------------------------------------------------------------ models inside nodes


def test_a_model_invoked_in_a_node_streams_when_the_caller_listens() -> None:
    model = ScriptedChatModel(["Rain is coming to Bergen tonight."] * 4)
    alone = ScriptedChatModel(["Rain is coming to Bergen tonight."]).invoke("hi")
    returned: list[AIMessage] = []

    def sync_node(state: State) -> dict[str, Any]:
        returned.append(model.invoke(state.messages))
        return {"messages": [returned[-1]]}

    async def async_node(state: State) -> dict[str, Any]:
        returned.append(await model.ainvoke(state.messages))
        return {"messages": [returned[-1]]}

    for node in (sync_node, async_node):
        app = chain({"model": node})
        parts = list(app.stream({"messages": [HumanMessage("hi")]}, mode="messages"))
        assert len(parts) > 2 and {p.node for p in parts} == {"model"}
        assert sum(p.data for p in parts).to_message() == returned[-1]  # what invoke returned
        assert returned[-1].text == alone.text and returned[-1].usage == alone.usage
        assert model.requests[-1].stream
        app.invoke({"messages": [HumanMessage("hi")]})  # nobody listens: one whole reply
        assert not model.requests[-1].stream


# ------------------------------------------------------------------ LangGraph's shapes


def test_a_part_reads_as_langgraphs_dict_for_updates_and_values() -> None:
    app = chain({"a": mark("a")})
    update, values = list(app.stream({"count": 1}, mode=["updates", "values"]))[1:]
    assert dict(update) == {"a": {"trail": ["a"], "count": 2}}
    assert update["a"]["count"] == 2 and "a" in update and list(update) == ["a"]
    assert values["trail"] == ["a"] and values.get("count") == 2 and "nope" not in values
    assert [k for k, _ in values.items()] == list(values.keys())
    (message,) = list(chain({"model": async_model}).stream({}, mode="messages"))[:1]
    with pytest.raises(TypeError, match=r"part\.data"):
        message["x"]


def test_stream_mode_and_mode_are_not_given_together() -> None:
    with pytest.raises(TypeError, match="not both"):
        diamond().stream({}, mode="updates", stream_mode="updates")
    with pytest.raises(ValueError, match='mode="events"'):
        diamond().stream({}, stream_mode="debug")
    with pytest.raises(ValueError, match="Unknown stream mode"):
        diamond().stream({}, stream_mode=["values", "tokens"])  # type: ignore[list-item]


def test_node_metadata_rides_on_its_parts_a_subgraph_s_under_its_nodes() -> None:
    async def token(state: MessagesState) -> dict[str, Any]:
        emit("messages", "tok")
        return {}

    inner = StateGraph(MessagesState)
    inner.add_node("deep", token, metadata={"level": "inner", "team": "own"})
    inner.add_edge(START, "deep")
    g = StateGraph(MessagesState)
    g.add_node("sub", inner.compile(), metadata={"team": "blue", "tier": 1})
    g.add_node("plain", token)
    g.add_edge(START, "sub").add_edge("sub", "plain")
    parts = list(g.compile().stream({}, mode=["messages", "updates"], subgraphs=True))
    assert [(p.namespace != (), p.mode, p.node, p.metadata) for p in parts] == [
        (True, "messages", "deep", {"team": "own", "tier": 1, "level": "inner"}),
        (True, "updates", "deep", {"team": "own", "tier": 1, "level": "inner"}),
        (False, "updates", "sub", {"team": "blue", "tier": 1}),
        (False, "messages", "plain", None),
        (False, "updates", "plain", None),
    ]


def test_node_metadata_is_in_its_config_without_a_stream() -> None:
    from flowgraph import get_config

    seen: list[Any] = []

    def read(state: MessagesState) -> dict[str, Any]:
        metadata = get_config()["metadata"]
        seen.append({k: metadata.get(k) for k in ("langgraph_node", "team", "level")})
        return {}

    inner = StateGraph(MessagesState)
    inner.add_node("deep", read, metadata={"level": "inner"})
    inner.add_edge(START, "deep")
    g = StateGraph(MessagesState)
    g.add_node("sub", inner.compile(), metadata={"team": "blue"})
    g.add_node("top", read, metadata={"team": "red"})
    g.add_edge(START, "sub").add_edge("sub", "top")
    g.compile().invoke({})
    assert seen == [
        {"langgraph_node": "deep", "team": "blue", "level": "inner"},
        {"langgraph_node": "top", "team": "red", "level": None},
    ]
