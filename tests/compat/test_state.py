"""State as LangGraph's docs write it (issue 18, items 1, 4 and 9).

`typing_extensions.TypedDict` with `Required` / `NotRequired` / `Annotated`,
a `MessagesState` subclass read as a mapping with fields left out of the
input, input and output schemas, and private keys passed between nodes.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import (  # noqa: UP035 - where LangGraph's docs import them from
    NotRequired,
    Required,
    TypedDict,
)

from flowgraph import END, START, InvalidUpdateError, MessagesState, StateGraph
from flowgraph.checkpoint import SQLiteCheckpointer
from tests.compat._libs import Lib


class Basket(TypedDict, total=False):
    items: Required[Annotated[list[str], operator.add]]
    picks: NotRequired[Annotated[int, operator.add]]
    note: NotRequired[str]


def basket_app(lib: Lib) -> Any:
    def pick(state: Basket) -> dict[str, Any]:
        return {"items": ["tea"], "picks": 1}

    def check(state: Basket) -> dict[str, Any]:
        return {"note": f"{len(state['items'])} items", "picks": 1}

    graph = lib.StateGraph(Basket)
    graph.add_node("pick", pick)
    graph.add_node("check", check)
    graph.add_edge(lib.START, "pick")
    graph.add_edge("pick", "check")
    graph.add_edge("check", lib.END)
    return graph.compile()


def test_typing_extensions_typeddict_with_required_and_not_required(lib: Lib) -> None:
    out = basket_app(lib).invoke({"items": ["milk"]})
    assert out == {"items": ["milk", "tea"], "picks": 2, "note": "2 items"}


def test_not_required_field_keeps_its_type_check() -> None:
    # the same schema still validates what a node writes (typed state, on purpose)
    graph = StateGraph(Basket)
    graph.add_node("bad", lambda state: {"note": 42})
    graph.add_edge(START, "bad")
    with pytest.raises(InvalidUpdateError, match="'note'"):
        graph.compile().invoke({"items": []})


def summary_app(lib: Lib) -> Any:
    class State(lib.MessagesState):  # type: ignore[name-defined,misc]
        summary: str

    def chat(state: Any) -> dict[str, Any]:
        seen = "summary" in state
        last = state["messages"][-1].content
        note = state.get("summary", "") + f"[{last}, summary given: {seen}]"
        return {"messages": [lib.AIMessage(f"echo {last}")], "summary": note}

    graph = lib.StateGraph(State)
    graph.add_node("chat", chat)
    graph.add_edge(lib.START, "chat")
    graph.add_edge("chat", lib.END)
    return graph.compile()


def test_messages_state_subclass_read_as_a_mapping_with_fields_left_out(lib: Lib) -> None:
    app = summary_app(lib)
    first = app.invoke({"messages": [lib.HumanMessage("hi")]})
    assert first["summary"] == "[hi, summary given: False]"
    assert [m.content for m in first["messages"]] == ["hi", "echo hi"]
    again = app.invoke({"messages": [lib.HumanMessage("yo")], "summary": "old"})
    assert again["summary"] == "old[yo, summary given: True]"


def test_an_unset_field_is_absent_from_the_view() -> None:
    class State(MessagesState):
        summary: str

    seen: list[Any] = []

    def look(state: State) -> None:
        seen.append(("summary" in state, state.get("summary"), hasattr(state, "summary")))

    graph = StateGraph(State)
    graph.add_node(look)
    graph.add_edge(START, "look")
    out = graph.compile().invoke({"messages": []})
    assert seen == [(False, None, False)]
    with pytest.raises(KeyError, match="summary"):
        out["summary"]
    assert "messages" in out and out.get("nope", 1) == 1


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


class Overall(TypedDict):
    question: str
    answer: str
    hops: Annotated[int, operator.add]


class Scratch(TypedDict):
    draft: str


def private_app(lib: Lib, **schemas: Any) -> Any:
    seen: dict[str, Any] = {}

    def think(state: Question) -> Scratch:  # writes a key only Scratch has
        seen["think"] = dict(state)
        return {"draft": state["question"].upper()}

    def write(state: Scratch) -> dict[str, Any]:  # reads it: its input type declares it
        seen["write"] = dict(state)
        return {"answer": state["draft"] + "!", "hops": 1}

    def polish(state: Overall) -> dict[str, Any]:
        seen["polish"] = dict(state)
        return {"answer": state["answer"] + "?", "hops": 1}

    graph = lib.StateGraph(Overall, **schemas)
    graph.add_node("think", think)
    graph.add_node("write", write)
    graph.add_node("polish", polish)
    graph.add_edge(lib.START, "think")
    graph.add_edge("think", "write")
    graph.add_edge("write", "polish")
    graph.add_edge("polish", lib.END)
    app = graph.compile()
    app.seen = seen
    return app


def test_input_and_output_schemas_and_a_private_key(lib: Lib) -> None:
    app = private_app(lib, input_schema=Question, output_schema=Answer)
    assert app.invoke({"question": "why"}) == {"answer": "WHY!?"}
    # each node sees its own input type's fields; the private key never reaches Overall
    assert app.seen == {
        "think": {"question": "why"},
        "write": {"draft": "WHY"},
        "polish": {"question": "why", "answer": "WHY!", "hops": 1},
    }


def test_a_private_key_never_reaches_the_output(lib: Lib) -> None:
    app = private_app(lib)
    assert app.invoke({"question": "how", "hops": 0}) == {
        "question": "how",
        "answer": "HOW!?",
        "hops": 2,
    }


def test_langgraphs_older_input_and_output_keywords() -> None:
    app = private_app(_flowgraph(), input=Question, output=Answer)
    assert app.invoke({"question": "a"}) == {"answer": "A!?"}


def test_an_input_key_outside_the_input_schema_is_an_error() -> None:
    # LangGraph drops it silently; typed state names it (the README's table says so)
    app = private_app(_flowgraph(), input_schema=Question, output_schema=Answer)
    with pytest.raises(InvalidUpdateError, match=r"'answer'.*input schema"):
        app.invoke({"question": "a", "answer": "cheat"})


def test_a_private_key_survives_a_checkpoint_and_a_new_process(tmp_path: Path) -> None:
    def build() -> Any:
        graph = StateGraph(Overall, input_schema=Question, output_schema=Answer)

        def think(state: Question) -> Scratch:
            return {"draft": state["question"] * 2}

        def write(state: Scratch) -> dict[str, Any]:
            return {"answer": state["draft"], "hops": 1}

        graph.add_node("think", think)
        graph.add_node("write", write)
        graph.add_edge(START, "think").add_edge("think", "write").add_edge("write", END)
        return graph.compile(checkpointer=SQLiteCheckpointer(tmp_path / "t.db"))

    build().invoke({"question": "ab"}, thread_id="t", interrupt_before=["write"])
    resumed = build().invoke(None, thread_id="t")  # a fresh app: the key comes from the file
    assert resumed == {"answer": "abab"}


class Doc(BaseModel):
    title: str
    words: int = 0


class Library(MessagesState):
    shelf: list[str] = Field(default_factory=list)


def test_a_pydantic_node_input_type_gets_its_own_model() -> None:
    seen: list[Any] = []

    def count(state: Library) -> dict[str, Any]:
        return {"title": state.shelf[0], "words": 3}  # `title`, `words`: Doc's, private here

    def read(doc: Doc) -> dict[str, Any]:
        seen.append(doc)
        return {"shelf": [*doc.title.split(), str(doc.words)]}

    graph = StateGraph(Library)
    graph.add_sequence([count, read])
    graph.add_edge(START, "count")
    out = graph.compile().invoke({"shelf": ["war and peace"]})
    assert seen == [Doc(title="war and peace", words=3)]
    assert out.shelf == ["war", "and", "peace", "3"]
    assert "title" not in out.model_dump()


def _flowgraph() -> Lib:
    from tests.compat._libs import load

    return load("flowgraph")
