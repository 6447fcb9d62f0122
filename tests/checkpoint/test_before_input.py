"""A checkpoint before each input, as LangGraph's history has (issue #31 item 1).

flowgraph stores a run's input with its first step; the checkpoint before
the input (`next == ("__start__",)`) is derived on read. Chat UIs edit a
message by running new input at that checkpoint, time-travel code reruns a
turn from it: both must branch, for the first message and a later one.
Every backend.
"""

from __future__ import annotations

import pytest

from flowgraph import START, AIMessage, Command, HumanMessage, MessagesState, StateGraph, interrupt
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.errors import InvalidUpdateError
from flowgraph.graph import CompiledGraph, StateSnapshot

from .conftest import ThreadIds


def echo_app(checkpointer: BaseCheckpointer) -> CompiledGraph:
    def bot(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage("echo " + state.messages[-1].text)]}

    g = StateGraph(MessagesState)
    g.add_node("bot", bot)
    g.add_edge(START, "bot")
    return g.compile(checkpointer=checkpointer)


def texts(snapshot_or_values: object) -> list[str]:
    values = getattr(snapshot_or_values, "values", snapshot_or_values)
    return [m.text for m in values["messages"]]


def two_turns(app: CompiledGraph, thread: str) -> list[StateSnapshot]:
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=thread)
    app.invoke({"messages": [HumanMessage("two")]}, thread_id=thread)
    return list(app.get_state_history(thread))


def test_history_has_a_checkpoint_before_each_input(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    history = two_turns(echo_app(checkpointer), tid())
    assert [(h.next, texts(h)) for h in history] == [
        ((), ["one", "echo one", "two", "echo two"]),
        (("bot",), ["one", "echo one", "two"]),
        ((START,), ["one", "echo one"]),
        ((), ["one", "echo one"]),
        (("bot",), ["one"]),
        ((START,), []),
    ]
    # each checkpoint's parent is the next one down: the input steps' parents are the
    # derived checkpoints, whose parents are the stored checkpoints before them
    assert [h.parent_id for h in history[:-1]] == [h.checkpoint_id for h in history[1:]]
    assert history[-1].parent_config is None
    assert [h.metadata["source"] for h in history if h.next == (START,)] == ["input", "input"]
    assert [h.step for h in history] == [3, 2, 1, 1, 0, -1]


def test_a_derived_checkpoint_reads_back_by_its_id(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    before_two = history[2]
    again = app.get_state(before_two.config)
    assert again == before_two
    assert app.get_state(thread, history[1].checkpoint_id).parent_id == before_two.checkpoint_id


def test_new_input_at_the_first_message_starts_a_branch_from_nothing(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    before_one = two_turns(app, thread)[-1]
    out = app.invoke({"messages": [HumanMessage("ONE")]}, before_one.config)
    assert texts(out) == ["ONE", "echo ONE"]
    head = app.get_state(thread)
    assert texts(head) == ["ONE", "echo ONE"]
    # the branch's input step stands after a derived checkpoint with nothing before it
    branch = list(app.get_state_history(thread, limit=3))
    assert [(h.next, texts(h)) for h in branch] == [
        ((), ["ONE", "echo ONE"]),
        (("bot",), ["ONE"]),
        ((START,), []),
    ]
    assert branch[2].parent_id is None
    # the old line is still there, untouched
    assert len(list(app.get_state_history(thread))) == 9


def test_new_input_at_a_later_message_branches_after_the_turn_before_it(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    out = app.invoke({"messages": [HumanMessage("TWO")]}, history[2].config)
    assert texts(out) == ["one", "echo one", "TWO", "echo TWO"]
    new_input_step = list(app.get_state_history(thread, limit=2))[1]
    assert new_input_step.next == ("bot",)
    # a branch from the stored checkpoint the derived one stands on
    branch_point = app.get_state(new_input_step.parent_config)
    assert branch_point.next == (START,)
    assert branch_point.parent_id == history[3].checkpoint_id


def test_no_input_at_a_derived_checkpoint_reruns_that_turn(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    calls_before = len(list(app.get_state_history(thread)))
    out = app.invoke(None, history[2].config)
    assert texts(out) == ["one", "echo one", "two", "echo two"]
    out = app.invoke(None, history[-1].config)
    assert texts(out) == ["one", "echo one"]
    assert len(list(app.get_state_history(thread))) == calls_before + 6


def test_limit_and_before_count_derived_checkpoints(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    ids = [h.checkpoint_id for h in history]
    for limit in range(len(ids) + 2):
        assert [h.checkpoint_id for h in app.get_state_history(thread, limit=limit)] == (
            ids[:limit]
        )
    for i, snapshot in enumerate(history):
        older = app.get_state_history(thread, before=snapshot.config)
        assert [h.checkpoint_id for h in older] == ids[i + 1 :]
        assert [h.checkpoint_id for h in app.get_state_history(thread, before=ids[i], limit=1)] == (
            ids[i + 1 : i + 2]
        )


def test_update_state_at_a_derived_checkpoint_says_what_to_do(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    with pytest.raises(InvalidUpdateError, match="invoke the new input at it"):
        app.update_state(history[2].config, {"messages": [HumanMessage("x")]})
    assert app.get_state(thread) == history[0]


def test_an_unknown_derived_id_is_an_unknown_checkpoint(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    app = echo_app(checkpointer)
    thread = tid()
    history = two_turns(app, thread)
    not_an_input = history[0].checkpoint_id
    for bad in (f"{not_an_input}~input", "nope~input"):
        with pytest.raises(InvalidUpdateError, match="has no checkpoint"):
            app.get_state(thread, bad)
        with pytest.raises(InvalidUpdateError, match="has no checkpoint"):
            app.invoke({"messages": [HumanMessage("x")]}, thread_id=thread, checkpoint_id=bad)
    assert app.get_state(thread) == history[0]


def test_a_command_step_has_no_checkpoint_before_it(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    """A resume (or a Command's update and goto) goes on from where the thread stands: as
    in LangGraph, no input checkpoint is shown before it, so none can replay it halfway."""

    def ask(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(f"answer: {interrupt('ok?')}")]}

    g = StateGraph(MessagesState)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    app = g.compile(checkpointer=checkpointer)
    thread = tid()
    app.invoke({"messages": [HumanMessage("go")]}, thread_id=thread)
    done = app.invoke(
        Command(resume="yes", update={"messages": [HumanMessage("note")]}), thread_id=thread
    )
    assert texts(done) == ["go", "note", "answer: yes"]
    history = list(app.get_state_history(thread))
    assert [h.next for h in history] == [(), ("ask",), ("ask",), (START,)]
    assert [h.metadata.get("command", False) for h in history] == [False, True, False, False]
