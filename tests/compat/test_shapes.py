"""Graph shapes LangGraph's docs use (issue 18, items 4 and 5).

A node with no edge out ends the run; `set_entry_point`,
`set_conditional_entry_point`, `set_finish_point`; a path map given as a
list or one name; `defer=True`; `-> Command[Literal[...]]` hints declaring
where a node goes. Diagrams are compared edge for edge with LangGraph's.

No `from __future__ import annotations` here: a node's return hint names the
`Command` of the library the program runs with, so it is evaluated at once.
"""

import operator
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import pytest
from typing_extensions import TypedDict

from flowgraph import END, START, Command, StateGraph
from flowgraph.checkpoint import SQLiteCheckpointer
from flowgraph.errors import GraphValidationError
from flowgraph.viz import build_diagram
from tests.compat._libs import Lib


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def step(name: str) -> Any:
    def node(state: Trail) -> dict[str, Any]:
        return {"trail": [name]}

    return node


def edges_of(lib: Lib, app: Any) -> set[tuple[str, str]]:
    """The diagram's arrows, as each library draws them."""
    if lib.name == "flowgraph":
        return {(e.source, e.target) for e in build_diagram(app).edges}
    return {(e.source, e.target) for e in app.get_graph().edges}


def test_a_node_with_no_edge_out_ends_the_run(lib: Lib) -> None:
    graph = lib.StateGraph(Trail)
    graph.add_node("greet", step("greet"))
    graph.add_node("wave", step("wave"))
    graph.add_edge(lib.START, "greet")
    graph.add_edge("greet", "wave")  # and nothing after wave
    app = graph.compile()
    assert app.invoke({"trail": []}) == {"trail": ["greet", "wave"]}
    assert edges_of(lib, app) == {(START, "greet"), ("greet", "wave"), ("wave", END)}


def test_every_diagram_format_draws_the_implicit_end() -> None:
    graph = StateGraph(Trail)
    graph.add_node("only", step("only"))
    graph.set_entry_point("only")
    app = graph.compile()
    assert "only --> __end__" in app.to_mermaid()
    assert "only -> __end__;" in app.to_dot()
    assert "END" in app.to_ascii().split("only", 1)[1]


def test_an_unreachable_node_is_still_an_error() -> None:
    graph = StateGraph(Trail)
    graph.add_node("a", step("a"))
    graph.add_node("island", step("island"))
    graph.set_entry_point("a")
    with pytest.raises(GraphValidationError, match="'island' is unreachable") as info:
        graph.compile()
    assert "Command[Literal" in str(info.value)


def test_entry_and_finish_points(lib: Lib) -> None:
    graph = lib.StateGraph(Trail)
    graph.add_node("first", step("first"))
    graph.add_node("second", step("second"))
    graph.set_entry_point("first")
    graph.add_edge("first", "second")
    graph.set_finish_point("second")
    app = graph.compile()
    assert app.invoke({"trail": []}) == {"trail": ["first", "second"]}
    assert edges_of(lib, app) == {(START, "first"), ("first", "second"), ("second", END)}


def pick_by_first_letter(state: Trail) -> str:
    return "apple" if state["trail"][0].startswith("a") else "berry"


def test_conditional_entry_point_with_a_list_path_map(lib: Lib) -> None:
    graph = lib.StateGraph(Trail)
    graph.add_node("apple", step("apple"))
    graph.add_node("berry", step("berry"))
    graph.set_conditional_entry_point(pick_by_first_letter, ["apple", "berry"])
    app = graph.compile()
    assert app.invoke({"trail": ["ant"]}) == {"trail": ["ant", "apple"]}
    assert app.invoke({"trail": ["bee"]}) == {"trail": ["bee", "berry"]}
    assert edges_of(lib, app) == {
        (START, "apple"),
        (START, "berry"),
        ("apple", END),
        ("berry", END),
    }


def test_a_path_map_of_one_name(lib: Lib) -> None:
    graph = lib.StateGraph(Trail)
    graph.add_node("start_here", step("start_here"))
    graph.add_node("retry", step("retry"))
    graph.add_edge(lib.START, "start_here")
    graph.add_conditional_edges("start_here", lambda state: "retry", "retry")
    app = graph.compile()
    assert app.invoke({"trail": []}) == {"trail": ["start_here", "retry"]}
    if lib.name == "flowgraph":  # LangGraph's drawing ignores a path map of one name
        assert ("start_here", "retry") in edges_of(lib, app)


def fan_in_app(lib: Lib, defer: bool = True, **compile_options: Any) -> Any:
    """Two branches of different lengths meet at "collect" (deferred: it runs once)."""
    graph = lib.StateGraph(Trail)
    for name in ("split", "long1", "long2", "long3", "short"):
        graph.add_node(name, step(name))
    graph.add_node("collect", step("collect"), defer=defer)
    graph.add_node("after", step("after"))
    graph.add_edge(lib.START, "split")
    graph.add_edge("split", "long1")
    graph.add_edge("long1", "long2")
    graph.add_edge("long2", "long3")
    graph.add_edge("long3", "collect")
    graph.add_edge("split", "short")
    graph.add_edge("short", "collect")
    graph.add_edge("collect", "after")
    return graph.compile(**compile_options)


def test_defer_waits_until_no_other_task_is_left(lib: Lib) -> None:
    out = fan_in_app(lib).invoke({"trail": []})
    assert out == {"trail": ["split", "long1", "short", "long2", "long3", "collect", "after"]}


def test_without_defer_the_join_node_runs_once_per_branch(lib: Lib) -> None:
    out = fan_in_app(lib, defer=False).invoke({"trail": []})
    assert out["trail"].count("collect") == 2  # what defer=True is for


def test_a_waiting_deferred_node_is_checkpointed(tmp_path: Path) -> None:
    # paused while "collect" waits: a new app on the same file still runs it, once
    app = fan_in_app(
        _flowgraph(), checkpointer=SQLiteCheckpointer(tmp_path / "d.db"), interrupt_before=["long3"]
    )
    app.invoke({"trail": []}, thread_id="t")
    assert app.get_state("t").next == ("long3",)
    again = fan_in_app(_flowgraph(), checkpointer=SQLiteCheckpointer(tmp_path / "d.db"))
    out = again.invoke(None, thread_id="t")
    assert out["trail"] == ["split", "long1", "short", "long2", "long3", "collect", "after"]


def command_app(lib: Lib) -> Any:
    def triage(state: Trail) -> lib.Command[Literal["urgent", "later"]]:  # type: ignore[name-defined]
        where = "urgent" if "fire" in state["trail"] else "later"
        return lib.Command(goto=where, update={"trail": ["triage"]})

    graph = lib.StateGraph(Trail)
    graph.add_node("triage", triage)
    graph.add_node("urgent", step("urgent"))
    graph.add_node("later", step("later"))
    graph.add_edge(lib.START, "triage")
    return graph.compile()


def test_command_literal_hint_declares_the_destinations(lib: Lib) -> None:
    app = command_app(lib)
    assert app.invoke({"trail": ["fire"]}) == {"trail": ["fire", "triage", "urgent"]}
    assert app.invoke({"trail": ["mail"]}) == {"trail": ["mail", "triage", "later"]}
    assert edges_of(lib, app) == {
        (START, "triage"),
        ("triage", "urgent"),
        ("triage", "later"),
        ("urgent", END),
        ("later", END),
    }


def test_command_hint_in_a_union_and_on_a_callable_object() -> None:
    class Dispatcher:
        def __call__(self, state: Trail) -> Command[Literal["a"]] | dict[str, Any]:
            return Command(goto="a")

    graph = StateGraph(Trail)
    graph.add_node("dispatch", Dispatcher())
    graph.add_node("a", step("a"))
    graph.set_entry_point("dispatch")
    app = graph.compile()  # "a" is reachable through the hint
    assert app.graph.nodes["dispatch"]["spec"].destinations == ("a",)
    assert app.invoke({"trail": []}) == {"trail": ["a"]}


def test_command_is_subscriptable() -> None:
    hinted = Command[Literal["x", "y"]]
    assert get_origin(hinted) is Command and get_args(hinted) == (Literal["x", "y"],)


def _flowgraph() -> Lib:
    from tests.compat._libs import load

    return load("flowgraph")
