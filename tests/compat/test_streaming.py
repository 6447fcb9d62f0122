"""Streaming as LangGraph's docs use it (issue 18, item 7).

Each program runs under flowgraph and LangGraph and must yield the same
items: `stream_mode=` with one mode or a list, "values" exactly when
LangGraph emits them (not after a step that wrote nothing; the state again
first on resume; the interrupt with the state), "custom" from
`get_stream_writer()`, subgraph steps with their namespace, a model's
tokens and the messages nodes return in "messages", the default stream read
as `{node: update}` dicts, and a stream that runs a step only when the
reader asks for it.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any

from typing_extensions import TypedDict

from tests.compat._libs import Lib


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]
    x: int


def plain(item: Any) -> Any:
    """An item with LangGraph's and flowgraph's Interrupt objects reduced to their values."""
    if isinstance(item, tuple):
        return tuple(plain(i) for i in item)
    if isinstance(item, dict):
        return {
            k: [i.value for i in v] if k == "__interrupt__" else plain(v) for k, v in item.items()
        }
    return item


def pausing_chain(lib: Lib, **compile_args: Any) -> Any:
    """a -> quiet (writes nothing) -> ask (interrupts) -> b."""

    def a(state: Trail) -> dict[str, Any]:
        return {"trail": ["a"]}

    def quiet(state: Trail) -> None:
        return None

    def ask(state: Trail) -> dict[str, Any]:
        answer = lib.interrupt("proceed?")
        return {"trail": [f"ask:{answer}"]}

    def b(state: Trail) -> dict[str, Any]:
        return {"x": 5}

    graph = lib.StateGraph(Trail)
    for name, fn in (("a", a), ("quiet", quiet), ("ask", ask), ("b", b)):
        graph.add_node(name, fn)
    graph.add_edge(lib.START, "a")
    graph.add_edge("a", "quiet")
    graph.add_edge("quiet", "ask")
    graph.add_edge("ask", "b")
    graph.add_edge("b", lib.END)
    return graph.compile(checkpointer=lib.checkpointer(), **compile_args)


def test_values_are_the_items_langgraph_emits(lib: Lib) -> None:
    app = pausing_chain(lib)
    first = [plain(c) for c in lib.stream(app, {"trail": [], "x": 0}, "t", stream_mode="values")]
    assert first == [
        {"trail": [], "x": 0},  # the input
        {"trail": ["a"], "x": 0},  # after a; nothing after quiet, which wrote nothing
        {"trail": ["a"], "x": 0, "__interrupt__": ["proceed?"]},
    ]
    resumed = lib.stream(app, lib.Command(resume="yes"), "t", stream_mode="values")
    assert [plain(c) for c in resumed] == [
        {"trail": ["a"], "x": 0},  # a resumed run first shows the state it goes on from
        {"trail": ["a", "ask:yes"], "x": 0},
        {"trail": ["a", "ask:yes"], "x": 5},
    ]
    again = lib.stream(app, None, "t", stream_mode="values")  # a finished thread
    assert [plain(c) for c in again] == [{"trail": ["a", "ask:yes"], "x": 5}]


def test_updates_report_a_pause_and_a_breakpoint(lib: Lib) -> None:
    app = pausing_chain(lib, interrupt_before=["b"])
    first = [plain(c) for c in lib.stream(app, {"trail": [], "x": 0}, "t", stream_mode="updates")]
    assert first == [
        {"a": {"trail": ["a"]}},
        {"quiet": None} if lib.name == "langgraph" else {"quiet": {}},  # see the README
        {"__interrupt__": ["proceed?"]},
    ]
    resumed = lib.stream(app, lib.Command(resume="ok"), "t", stream_mode="updates")
    assert [plain(c) for c in resumed] == [{"ask": {"trail": ["ask:ok"]}}, {"__interrupt__": []}]
    assert [plain(c) for c in lib.stream(app, None, "t", stream_mode="updates")] == [
        {"b": {"x": 5}}
    ]


def test_several_modes_come_as_pairs(lib: Lib) -> None:
    app = pausing_chain(lib)
    items = lib.stream(app, {"trail": [], "x": 0}, "t", stream_mode=["updates", "values"])
    assert [plain(c) for c in items] == [
        ("values", {"trail": [], "x": 0}),
        ("updates", {"a": {"trail": ["a"]}}),
        ("values", {"trail": ["a"], "x": 0}),
        ("updates", {"quiet": None} if lib.name == "langgraph" else {"quiet": {}}),
        ("updates", {"__interrupt__": ["proceed?"]}),
        ("values", {"trail": ["a"], "x": 0, "__interrupt__": ["proceed?"]}),
    ]
    one = lib.stream(app, lib.Command(resume="y"), "t", stream_mode=["custom"])
    assert list(one) == []  # a list of one mode still pairs; nothing was written


def test_custom_data_from_get_stream_writer(lib: Lib) -> None:
    def fetch(state: Trail) -> dict[str, Any]:
        writer = lib.get_stream_writer()
        for done in (1, 2):
            writer({"fetched": done, "of": 2})
        return {"trail": ["fetched"]}

    def report(state: Trail) -> dict[str, Any]:
        lib.get_stream_writer()("report ready")
        return {"x": len(state["trail"])}

    graph = lib.StateGraph(Trail)
    graph.add_node("fetch", fetch)
    graph.add_node("report", report)
    graph.add_edge(lib.START, "fetch")
    graph.add_edge("fetch", "report")
    app = graph.compile()
    assert list(app.stream({"trail": []}, stream_mode="custom")) == [
        {"fetched": 1, "of": 2},
        {"fetched": 2, "of": 2},
        "report ready",
    ]
    mixed = list(app.stream({"trail": []}, stream_mode=["custom", "updates"]))
    assert mixed == [
        ("custom", {"fetched": 1, "of": 2}),
        ("custom", {"fetched": 2, "of": 2}),
        ("updates", {"fetch": {"trail": ["fetched"]}}),
        ("custom", "report ready"),
        ("updates", {"report": {"x": 1}}),
    ]
    assert app.invoke({"trail": []}) == {"trail": ["fetched"], "x": 1}  # nobody listens: no-op


def nested(lib: Lib) -> Any:
    """outer -> child, a subgraph of inner1 -> inner2 that writes custom data."""

    def inner1(state: Trail) -> dict[str, Any]:
        lib.get_stream_writer()("from inside")
        return {"x": 1}

    def inner2(state: Trail) -> dict[str, Any]:
        return {"x": state["x"] + 1}

    child = lib.StateGraph(Trail)
    child.add_node("inner1", inner1)
    child.add_node("inner2", inner2)
    child.add_edge(lib.START, "inner1")
    child.add_edge("inner1", "inner2")

    def outer(state: Trail) -> dict[str, Any]:
        return {"trail": ["outer"]}

    graph = lib.StateGraph(Trail)
    graph.add_node("outer", outer)
    graph.add_node("child", child.compile())
    graph.add_edge(lib.START, "outer")
    graph.add_edge("outer", "child")
    return graph.compile()


def short(namespace: tuple[str, ...]) -> tuple[str, ...]:
    """A namespace without its task ids ("child:<id>" -> "child"): the ids differ by design."""
    return tuple(segment.split(":")[0] for segment in namespace)


def test_subgraph_steps_stream_with_their_namespace(lib: Lib) -> None:
    app = nested(lib)
    items = app.stream({"trail": [], "x": 0}, stream_mode=["updates", "custom"], subgraphs=True)
    seen = [(short(ns), mode, chunk) for ns, mode, chunk in items]
    assert seen == [
        ((), "updates", {"outer": {"trail": ["outer"]}}),
        (("child",), "custom", "from inside"),
        (("child",), "updates", {"inner1": {"x": 1}}),
        (("child",), "updates", {"inner2": {"x": 2}}),
        ((), "updates", seen[-1][2]),  # the child's update (LangGraph's repeats "outer")
    ]
    assert seen[-1][2]["child"]["x"] == 2
    single = [
        (short(ns), chunk)
        for ns, chunk in app.stream({"trail": []}, stream_mode="custom", subgraphs=True)
    ]
    assert single == [(("child",), "from inside")]
    # without subgraphs=True, LangGraph shows nothing of the subgraph's steps
    assert list(app.stream({"trail": []}, stream_mode="custom")) == []


def test_model_tokens_and_node_messages_in_messages_mode(lib: Lib) -> None:
    model = lib.scripted_model([lib.AIMessage("Sunny in Oslo today.", id="reply-1")])

    def chatbot(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}  # no streaming=True anywhere

    def note(state: Any) -> dict[str, Any]:
        return {"messages": [lib.ToolMessage("logged", tool_call_id="c1", id="note-1")]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("chatbot", chatbot)
    graph.add_node("note", note)
    graph.add_edge(lib.START, "chatbot")
    graph.add_edge("chatbot", "note")
    app = graph.compile()
    joined: list[list[Any]] = []
    for message, metadata in app.stream(
        {"messages": [("user", "Weather?")]}, stream_mode="messages"
    ):
        kind = type(message).__name__.removesuffix("Chunk")
        node = metadata["langgraph_node"]
        if joined and joined[-1][:2] == [kind, node] and joined[-1][3] == message.id:
            joined[-1][2] += message.text
        else:
            joined.append([kind, node, message.text, message.id])
    assert joined == [
        ["AIMessage", "chatbot", "Sunny in Oslo today.", "reply-1"],  # tokens, as they came
        ["ToolMessage", "note", "logged", "note-1"],  # returned by a node: sent whole, once
    ]


def test_the_default_stream_reads_as_node_update_dicts(lib: Lib) -> None:
    model = lib.scripted_model([lib.AIMessage("Hello!"), lib.AIMessage("Hello again!")])

    def chatbot(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("chatbot", chatbot)
    graph.add_edge(lib.START, "chatbot")
    app = graph.compile()
    printed = []
    for event in app.stream({"messages": [{"role": "user", "content": "hi"}]}):
        for value in event.values():  # the chatbot tutorial's loop, as written
            printed.append(value["messages"][-1].text)
    for node, update in next(iter(app.stream({"messages": [("user", "hi")]}))).items():
        printed.append(f"{node}: {update['messages'][-1].text}")
    assert printed == ["Hello!", "chatbot: Hello again!"]


def test_a_step_runs_only_when_the_reader_asks_for_it(lib: Lib) -> None:
    ran: list[str] = []

    def step(name: str) -> Any:
        def node(state: Trail) -> dict[str, Any]:
            ran.append(name)
            return {"trail": [name]}

        return node

    graph = lib.StateGraph(Trail)
    graph.add_sequence([(name, step(name)) for name in ("a", "b", "c")])
    graph.add_edge(lib.START, "a")
    app = graph.compile()
    seen = []
    for chunk in app.stream({"trail": []}, stream_mode="updates"):
        time.sleep(0.05)  # a slow reader: the next node must not have started meanwhile
        seen.append((next(iter(chunk)), list(ran)))
    assert seen == [("a", ["a"]), ("b", ["a", "b"]), ("c", ["a", "b", "c"])]
    ran.clear()
    for _ in app.stream({"trail": []}, stream_mode="updates"):
        break  # breaking out stops the run
    time.sleep(0.05)
    assert ran == ["a"]
