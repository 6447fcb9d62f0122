"""`stream()` called as LangGraph code calls it yields LangGraph's own items (issue 30).

Each test runs one small program on LangGraph and on flowgraph (the `lib`
fixture) and asserts the same items; `mode=` still yields flowgraph's
StreamParts. Interrupts are compared by value: their ids differ by design.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from tests.compat._libs import LIBRARIES, Lib, load


@pytest.fixture(params=LIBRARIES)
def lib(request: pytest.FixtureRequest) -> Lib:
    return load(request.param)


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def plain(item: Any) -> Any:
    """An item with each Interrupt replaced by its value (ids differ between libraries)."""
    if isinstance(item, dict):
        return {key: plain(value) for key, value in item.items()}
    if isinstance(item, (list, tuple)):
        return type(item)(plain(value) for value in item)
    if type(item).__name__ == "Interrupt":
        return ("Interrupt", item.value)
    return item


def pausing(lib: Lib) -> Any:
    """a writes "a" (and custom data), then b asks for a value and writes it."""

    def a(state: Log) -> dict[str, Any]:
        lib.get_stream_writer()({"progress": "a"})
        return {"log": ["a"]}

    def b(state: Log) -> dict[str, Any]:
        return {"log": [lib.interrupt("which?")]}

    graph = lib.StateGraph(Log)
    graph.add_node("a", a)
    graph.add_node("b", b)
    graph.add_edge(lib.START, "a")
    graph.add_edge("a", "b")
    return graph.compile(checkpointer=lib.checkpointer())


def nested(lib: Lib) -> Any:
    """A parent whose node `child` is a compiled subgraph of one node, `inner`."""
    sub = lib.StateGraph(Log)
    sub.add_node("inner", lambda state: {"log": ["inner"]})
    sub.add_edge(lib.START, "inner")
    graph = lib.StateGraph(Log)
    graph.add_node("child", sub.compile())
    graph.add_node("after", lambda state: {"log": ["after"]})
    graph.add_edge(lib.START, "child")
    graph.add_edge("child", "after")
    return graph.compile()


def test_the_default_stream_yields_update_dicts_and_the_interrupt(lib: Lib) -> None:
    items = list(lib.stream(pausing(lib), {"log": []}, thread_id="t"))
    assert plain(items) == [{"a": {"log": ["a"]}}, {"__interrupt__": (("Interrupt", "which?"),)}]


def test_resuming_streams_the_rest_as_dicts(lib: Lib) -> None:
    app = pausing(lib)
    list(lib.stream(app, {"log": []}, thread_id="t"))
    assert list(lib.stream(app, lib.Command(resume="b!"), thread_id="t")) == [
        {"b": {"log": ["b!"]}}
    ]


def test_a_list_of_modes_yields_mode_chunk_pairs(lib: Lib) -> None:
    items = list(
        lib.stream(pausing(lib), {"log": []}, thread_id="t", stream_mode=["values", "updates"])
    )
    assert plain(items) == [
        ("values", {"log": []}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a"]}),
        ("updates", {"__interrupt__": (("Interrupt", "which?"),)}),
        ("values", {"log": ["a"], "__interrupt__": (("Interrupt", "which?"),)}),
    ]


def test_custom_and_updates(lib: Lib) -> None:
    items = list(
        lib.stream(pausing(lib), {"log": []}, thread_id="t", stream_mode=["custom", "updates"])
    )
    assert plain(items)[:2] == [("custom", {"progress": "a"}), ("updates", {"a": {"log": ["a"]}})]


def namespaces(items: list[Any]) -> list[Any]:
    """Items with each namespace entry cut to its node name (task ids differ)."""
    return [(tuple(s.split(":")[0] for s in ns), *rest) for ns, *rest in items]


def test_subgraphs_true_yields_namespace_chunk_pairs(lib: Lib) -> None:
    items = list(nested(lib).stream({"log": []}, subgraphs=True))
    assert namespaces(items) == [
        (("child",), {"inner": {"log": ["inner"]}}),
        ((), {"child": {"log": ["inner"]}}),
        ((), {"after": {"log": ["after"]}}),
    ]
    without = list(nested(lib).stream({"log": []}))
    assert without == [{"child": {"log": ["inner"]}}, {"after": {"log": ["after"]}}]


def test_subgraphs_with_a_list_of_modes_yields_triples(lib: Lib) -> None:
    items = list(nested(lib).stream({"log": []}, subgraphs=True, stream_mode=["updates"]))
    assert namespaces(items) == [
        (("child",), "updates", {"inner": {"log": ["inner"]}}),
        ((), "updates", {"child": {"log": ["inner"]}}),
        ((), "updates", {"after": {"log": ["after"]}}),
    ]


def test_astream_yields_the_same_items(lib: Lib) -> None:
    async def read() -> list[Any]:
        app = nested(lib)
        return [item async for item in app.astream({"log": []}, stream_mode="values")]

    assert asyncio.run(read()) == [{"log": []}, {"log": ["inner"]}, {"log": ["inner", "after"]}]


class Counter(BaseModel):
    count: int = 0


def counting(lib: Lib) -> Any:
    graph = lib.StateGraph(Counter)
    graph.add_node("up", lambda state: {"count": state.count + 1})
    graph.add_edge(lib.START, "up")
    return graph.compile()


def test_values_of_a_pydantic_state_are_dicts_in_v1_and_the_model_in_v2(lib: Lib) -> None:
    app = counting(lib)
    assert list(app.stream({"count": 1}, stream_mode="values")) == [{"count": 1}, {"count": 2}]
    typed = list(app.stream({"count": 1}, stream_mode="values", version="v2"))
    assert typed == [
        {"type": "values", "ns": (), "data": Counter(count=1), "interrupts": ()},
        {"type": "values", "ns": (), "data": Counter(count=2), "interrupts": ()},
    ]
    assert list(app.stream({"count": 1})) == [{"up": {"count": 2}}]


def test_v2_yields_typed_parts(lib: Lib) -> None:
    items = list(
        lib.stream(
            pausing(lib),
            {"log": []},
            thread_id="t",
            stream_mode=["custom", "updates"],
            version="v2",
        )
    )
    assert plain(items) == [
        {"type": "custom", "ns": (), "data": {"progress": "a"}},
        {"type": "updates", "ns": (), "data": {"a": {"log": ["a"]}}},
        {"type": "updates", "ns": (), "data": {"__interrupt__": (("Interrupt", "which?"),)}},
    ]
    default = list(lib.stream(pausing(lib), {"log": []}, thread_id="u", version="v2"))
    assert plain(default)[0] == {"type": "updates", "ns": (), "data": {"a": {"log": ["a"]}}}


def test_v2_values_carry_the_interrupts_apart(lib: Lib) -> None:
    items = list(
        lib.stream(pausing(lib), {"log": []}, thread_id="t", stream_mode="values", version="v2")
    )
    assert plain(items) == [
        {"type": "values", "ns": (), "data": {"log": []}, "interrupts": ()},
        {"type": "values", "ns": (), "data": {"log": ["a"]}, "interrupts": ()},
        {
            "type": "values",
            "ns": (),
            "data": {"log": ["a"]},
            "interrupts": (("Interrupt", "which?"),),
        },
    ]


def test_v2_parts_of_a_subgraph_name_their_namespace(lib: Lib) -> None:
    items = list(nested(lib).stream({"log": []}, subgraphs=True, version="v2"))
    assert [(part["type"], len(part["ns"]), part["data"]) for part in items] == [
        ("updates", 1, {"inner": {"log": ["inner"]}}),
        ("updates", 0, {"child": {"log": ["inner"]}}),
        ("updates", 0, {"after": {"log": ["after"]}}),
    ]
    assert items[0]["ns"][0].startswith("child:")


def test_v2_messages_are_message_metadata_pairs(lib: Lib) -> None:
    model = lib.scripted_model([lib.AIMessage("Hi there.", id="r1")])

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("chat", chat)
    graph.add_edge(lib.START, "chat")
    parts = list(
        graph.compile().stream({"messages": [("user", "hi")]}, stream_mode="messages", version="v2")
    )
    assert {part["type"] for part in parts} == {"messages"}
    assert "".join(part["data"][0].text for part in parts) == "Hi there."
    assert {part["data"][1]["langgraph_node"] for part in parts} == {"chat"}


# -- flowgraph's own mode= --------------------------------------------------------------


def test_mode_keeps_yielding_stream_parts() -> None:
    from flowgraph import StreamPart

    lib = load("flowgraph")
    parts = list(nested(lib).stream({"log": []}, mode="updates"))
    assert all(isinstance(part, StreamPart) for part in parts)
    assert [(part.node, part.data) for part in parts] == [
        ("child", {"log": ["inner"]}),
        ("after", {"log": ["after"]}),
    ]


def test_mode_and_stream_mode_or_version_together_are_refused() -> None:
    app = nested(load("flowgraph"))
    with pytest.raises(TypeError, match=r"mode= .*not both"):
        app.stream({"log": []}, mode="updates", stream_mode="values")
    with pytest.raises(TypeError, match=r"mode= .*not both"):
        app.stream({"log": []}, mode="updates", version="v2")
    with pytest.raises(ValueError, match=r"version=.v3."):
        app.stream({"log": []}, version="v3")  # type: ignore[call-overload]
