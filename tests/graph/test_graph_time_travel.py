"""Paused runs say why (`"__interrupt__"`), and `update_state` edits a past checkpoint.

`invoke()` of a run that paused at `interrupt()` returns the waiting
interrupts under `"__interrupt__"`, as LangGraph does; a pydantic state
carries them readable the same way, outside its fields. Time travel:
`update_state(thread, values, checkpoint_id=past)` (or with a snapshot's
`config`) writes a child of that checkpoint, a new branch the thread then
continues from.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from flowgraph import (
    END,
    START,
    Command,
    HumanMessage,
    Interrupt,
    MessagesState,
    StateGraph,
    interrupt,
)
from flowgraph.checkpoint import MemoryCheckpointer, SQLiteCheckpointer


class Draft(TypedDict):
    topic: str
    joke: str
    log: Annotated[list[str], operator.add]


def ask(state: Draft) -> dict[str, Any]:
    answer = interrupt({"question": f"Publish the {state['topic']} joke?"})
    return {"log": [f"answer: {answer}"]}


def approval_graph(checkpointer: Any) -> Any:
    g = StateGraph(Draft)
    g.add_node("write", lambda state: {"joke": f"a joke about {state['topic']}", "log": ["w"]})
    g.add_node("ask", ask)
    g.add_edge(START, "write")
    g.add_edge("write", "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=checkpointer)


def test_a_paused_invoke_returns_the_interrupts_under_the_langgraph_key() -> None:
    app = approval_graph(MemoryCheckpointer())
    out = app.invoke({"topic": "cats", "log": []}, thread_id="t")
    [waiting] = out["__interrupt__"]
    assert isinstance(waiting, Interrupt)
    assert waiting.value == {"question": "Publish the cats joke?"}
    assert waiting == app.get_state("t").interrupts[0]
    assert out["joke"] == "a joke about cats"
    done = app.invoke(Command(resume="yes"), thread_id="t")
    assert "__interrupt__" not in done  # only a paused run has it
    assert done["log"] == ["w", "answer: yes"]


def test_a_breakpoint_pause_has_no_interrupt_key_as_in_langgraph() -> None:
    app = approval_graph(MemoryCheckpointer())
    out = app.invoke({"topic": "cats", "log": []}, thread_id="t", interrupt_before=["ask"])
    assert "__interrupt__" not in out


def test_a_pydantic_state_carries_the_interrupts_outside_its_fields() -> None:
    def confirm(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", f"ok: {interrupt('sure?')}")]}

    g = StateGraph(MessagesState)
    g.add_node("confirm", confirm)
    g.add_edge(START, "confirm")
    app = g.compile(checkpointer=MemoryCheckpointer())
    out = app.invoke({"messages": [HumanMessage("delete it", id="h")]}, thread_id="p")
    assert [i.value for i in out["__interrupt__"]] == ["sure?"]
    assert out.__interrupt__ == out.get("__interrupt__") == out["__interrupt__"]
    assert "__interrupt__" in out
    assert out.model_dump() == {"messages": [HumanMessage("delete it", id="h").model_dump()]}
    assert out == MessagesState(messages=[HumanMessage("delete it", id="h")])
    done = app.invoke(Command(resume="yes"), thread_id="p")
    assert "__interrupt__" not in done and done.messages[-1].text == "ok: yes"


# -- time travel ------------------------------------------------------------------------


class Joke(TypedDict):
    topic: str
    joke: str


def joke_graph(checkpointer: Any) -> Any:
    g = StateGraph(Joke)
    g.add_node("pick_topic", lambda state: {"topic": "dogs"})
    g.add_node("tell", lambda state: {"joke": f"a joke about {state['topic']}"})
    g.add_edge(START, "pick_topic")
    g.add_edge("pick_topic", "tell")
    g.add_edge("tell", END)
    return g.compile(checkpointer=checkpointer)


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "memory":
        return MemoryCheckpointer()
    return SQLiteCheckpointer(tmp_path / "t.db")


def test_update_state_at_a_past_checkpoint_forks_from_it(checkpointer: Any) -> None:
    app = joke_graph(checkpointer)
    assert app.invoke({"topic": "", "joke": ""}, thread_id="j")["joke"] == "a joke about dogs"
    # the checkpoint after pick_topic, before tell ran
    [before_tell] = [s for s in app.get_state_history("j") if s.next == ("tell",)]
    new_id = app.update_state("j", {"topic": "chickens"}, checkpoint_id=before_tell.checkpoint_id)
    edited = app.get_state("j")
    assert edited.checkpoint_id == new_id
    assert edited.parent_id == before_tell.checkpoint_id  # a branch off the past
    assert edited.values == {"topic": "chickens", "joke": ""}
    assert edited.next == ("tell",)
    assert app.invoke(None, thread_id="j")["joke"] == "a joke about chickens"
    # the first branch is still there
    # (the checkpoint before the input has no values: `joke` is not set there)
    first = [s for s in app.get_state_history("j") if s.values.get("joke") == "a joke about dogs"]
    assert len(first) == 1


def test_the_langgraph_config_form_returns_a_config_to_continue_from() -> None:
    app = joke_graph(MemoryCheckpointer())
    config = {"configurable": {"thread_id": "j"}}
    app.invoke({"topic": "", "joke": ""}, config)
    states = list(app.get_state_history(config))
    selected = next(s for s in states if s.next == ("tell",))
    assert selected.config == {
        "configurable": {
            "thread_id": "j",
            "checkpoint_ns": "",
            "checkpoint_id": selected.checkpoint_id,
        }
    }
    new_config = app.update_state(selected.config, values={"topic": "chickens"})
    assert isinstance(new_config, dict)
    assert new_config["configurable"]["thread_id"] == "j"
    assert app.invoke(None, new_config)["joke"] == "a joke about chickens"
    assert app.get_state(new_config).parent_id == selected.checkpoint_id


def test_update_state_as_node_at_a_past_checkpoint_routes_from_that_node() -> None:
    app = joke_graph(MemoryCheckpointer())
    app.invoke({"topic": "", "joke": ""}, thread_id="j")
    # the input step, before any node ran (not the derived checkpoint before the input)
    [first] = [s for s in app.get_state_history("j") if s.next == ("pick_topic",)]
    assert first.step == 0
    app.update_state(
        "j", {"topic": "owls"}, as_node="pick_topic", checkpoint_id=first.checkpoint_id
    )
    assert app.get_state("j").next == ("tell",)
    assert app.invoke(None, thread_id="j")["joke"] == "a joke about owls"


def test_an_unknown_past_checkpoint_is_an_error() -> None:
    app = joke_graph(MemoryCheckpointer())
    app.invoke({"topic": "", "joke": ""}, thread_id="j")
    with pytest.raises(ValueError, match="has no checkpoint 'nope'"):
        app.update_state("j", {"topic": "x"}, checkpoint_id="nope")
