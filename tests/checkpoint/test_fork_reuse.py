"""A fork does not repeat what already happened in the world (issue #28, item 5).

An approved refund ran; forking the thread at a checkpoint before its tool
step must not issue it again: the branch takes the result the origin
stored for the same call (same AI message, call id, tool and arguments).
Running it again is `rerun_tool_calls=True`. A new answer to an interrupt
answered before forks with that answer. Every backend.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    Budget,
    Command,
    HumanMessage,
    InjectedToolCallId,
    MessagesState,
    ModelNode,
    StateGraph,
    ToolMessage,
    ToolNode,
    interrupt,
    tool,
    tools_condition,
)
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.models import ScriptedChatModel

from .conftest import ThreadIds


class Refunds:
    """The world outside the graph: every refund a tool really issued."""

    def __init__(self) -> None:
        self.issued: list[tuple[str, int]] = []
        self.fail_next = False

    def tools(self) -> list[Any]:
        @tool
        def refund(order_id: str, amount: int) -> str:
            """Refund an order."""
            if self.fail_next:
                self.fail_next = False
                raise RuntimeError("payment service down")
            self.issued.append((order_id, amount))
            return f"refunded {amount} on {order_id} (#{len(self.issued)})"

        @tool
        def notify(text: str) -> str:
            """Tell the customer."""
            self.issued.append(("notify", len(text)))
            return f"sent: {text}"

        return [refund, notify]


def reply(messages: list[Any]) -> Any:
    last = messages[-1]
    if last.type == "tool":
        return f"done: {last.text}"
    if "both" in last.text:
        return {
            "tool_calls": [
                {"name": "refund", "args": {"order_id": "B2", "amount": 5}, "id": "call_b"},
                {"name": "notify", "args": {"text": "refund on its way"}, "id": "call_n"},
            ]
        }
    return {
        "tool_calls": [{"name": "refund", "args": {"order_id": "A1", "amount": 30}, "id": "c1"}]
    }


def approve(state: MessagesState) -> Command[Any]:
    decision = interrupt({"question": "refund?"})
    if decision == "yes":
        return Command(goto="tools")
    asked = state.messages[-1]
    assert isinstance(asked, AIMessage)
    declined = [
        ToolMessage("declined", tool_call_id=c.id, name=c.name, status="error")
        for c in asked.tool_calls
    ]
    return Command(goto="agent", update={"messages": declined})


def refund_app(store: BaseCheckpointer, refunds: Refunds, *, gated: bool = True) -> Any:
    tools = refunds.tools()
    g = StateGraph(MessagesState)
    g.add_node("agent", ModelNode(ScriptedChatModel(reply), tools=tools))
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    if gated:
        g.add_node("approve", approve, destinations=["tools", "agent"])
        g.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
    else:
        g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=store)


def approved_refund(app: Any, thread: str, text: str = "refund A1") -> None:
    app.invoke({"messages": [HumanMessage(text, id=f"{thread}-u")]}, thread_id=thread)
    app.invoke(Command(resume="yes"), thread_id=thread)


Refunded = tuple[Any, Refunds, str]


@pytest.fixture
def refunded(checkpointer: BaseCheckpointer, tid: ThreadIds) -> Refunded:
    """A thread whose refund was asked for, approved and issued: (app, refunds, thread)."""
    refunds = Refunds()
    app = refund_app(checkpointer, refunds)
    thread = tid()
    approved_refund(app, thread)
    return app, refunds, thread


def checkpoint_before(app: Any, thread: str, node: str) -> Any:
    """The (newest) checkpoint whose next step runs `node`."""
    return next(s for s in app.get_state_history(thread) if s.next == (node,))


def texts(state: Any) -> list[str]:
    return [m.text for m in state.messages]


def test_a_fork_before_the_tool_step_reuses_the_refund_it_shares(
    refunded: Refunded, caplog: pytest.LogCaptureFixture
) -> None:
    app, refunds, thread = refunded
    assert refunds.issued == [("A1", 30)]
    origin = app.get_state(thread).values.messages
    between = checkpoint_before(app, thread, "tools")

    with caplog.at_level(logging.INFO, logger="flowgraph"):
        parts = list(
            app.stream(None, thread_id=thread, checkpoint_id=between.checkpoint_id, mode=["events"])
        )

    assert refunds.issued == [("A1", 30)]  # not issued a second time
    branch = app.get_state(thread)
    assert branch.metadata["branch"] is True
    assert branch.values.messages[-2] == origin[-2]  # the very result the origin stored
    assert texts(branch.values)[-1] == "done: refunded 30 on A1 (#1)"
    children = {
        s.metadata["source"]: s
        for s in app.get_state_history(thread)
        if s.parent_id == between.checkpoint_id
    }
    assert set(children) == {"loop", "fork"}  # the origin's tool step, and the branch's
    origin_tool_step = children["loop"]
    reused = [p.data for p in parts if p.data.get("event") == "reused"]
    assert reused == [
        {
            "event": "reused",
            "task": 0,
            "tool_call_id": "c1",
            "name": "refund",
            "checkpoint_id": origin_tool_step.checkpoint_id,
        }
    ]
    assert (
        "Reused the stored result of tool call c1 (refund) from checkpoint "
        f"{origin_tool_step.checkpoint_id} instead of running it again" in caplog.text
    )


def test_rerun_tool_calls_runs_the_call_again(refunded: Refunded) -> None:
    app, refunds, thread = refunded
    between = checkpoint_before(app, thread, "tools")

    out = app.invoke(
        None, thread_id=thread, checkpoint_id=between.checkpoint_id, rerun_tool_calls=True
    )

    assert refunds.issued == [("A1", 30), ("A1", 30)]
    assert texts(out)[-1] == "done: refunded 30 on A1 (#2)"


def test_a_new_answer_at_an_answered_interrupt_forks_with_it(refunded: Refunded) -> None:
    app, refunds, thread = refunded
    asked = checkpoint_before(app, thread, "approve")
    assert asked.interrupts == ()  # answered since: nothing waits there any more

    no = app.invoke(Command(resume="no"), thread_id=thread, checkpoint_id=asked.checkpoint_id)

    assert texts(no)[-2:] == ["declined", "done: declined"]
    assert refunds.issued == [("A1", 30)]
    assert app.get_state(thread).parent_id is not None
    assert app.get_state(thread).values.messages == no.messages  # the branch is the head

    yes = app.invoke(Command(resume="yes"), thread_id=thread, checkpoint_id=asked.checkpoint_id)

    assert texts(yes)[-1] == "done: refunded 30 on A1 (#1)"  # yes again: the stored refund
    assert refunds.issued == [("A1", 30)]


def test_resuming_an_answered_interrupt_asks_again_and_takes_an_answer_by_its_id(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    refunds = Refunds()
    app = refund_app(checkpointer, refunds)
    thread = tid()
    app.invoke({"messages": [HumanMessage("refund A1", id="u")]}, thread_id=thread)
    (first,) = app.get_state(thread).interrupts
    app.invoke(Command(resume="yes"), thread_id=thread)
    asked = checkpoint_before(app, thread, "approve")

    again = app.invoke(None, thread_id=thread, checkpoint_id=asked.checkpoint_id)

    # the node runs again and pauses again, with the id the origin's interrupt had
    assert [i.id for i in again["__interrupt__"]] == [first.id]
    assert app.get_state(thread, asked.checkpoint_id).interrupts == (first,)
    out = app.invoke(
        Command(resume={first.id: "no"}), thread_id=thread, checkpoint_id=asked.checkpoint_id
    )
    assert texts(out)[-2:] == ["declined", "done: declined"]
    assert refunds.issued == [("A1", 30)]


def test_a_fork_that_edits_the_arguments_runs_the_new_call(refunded: Refunded) -> None:
    app, refunds, thread = refunded
    between = checkpoint_before(app, thread, "tools")
    ai = between.values.messages[-1]
    edited = AIMessage(
        "",
        id=ai.id,
        tool_calls=[{"name": "refund", "args": {"order_id": "A1", "amount": 50}, "id": "c1"}],
    )

    app.update_state(thread, {"messages": [edited]}, checkpoint_id=between.checkpoint_id)
    out = app.invoke(None, thread_id=thread)

    assert refunds.issued == [("A1", 30), ("A1", 50)]
    assert texts(out)[-1] == "done: refunded 50 on A1 (#2)"


def test_a_branch_made_by_update_state_reuses_an_unchanged_call(refunded: Refunded) -> None:
    app, refunds, thread = refunded
    between = checkpoint_before(app, thread, "tools")

    app.update_state(thread, {"messages": []}, checkpoint_id=between.checkpoint_id)
    out = app.invoke(None, thread_id=thread)

    assert refunds.issued == [("A1", 30)]
    assert texts(out)[-1] == "done: refunded 30 on A1 (#1)"


def test_a_branch_that_pauses_still_reuses_when_it_is_resumed(refunded: Refunded) -> None:
    app, refunds, thread = refunded
    before_agent = next(s for s in app.get_state_history(thread) if s.step == 0)
    assert before_agent.next == ("agent",)

    app.invoke(None, thread_id=thread, checkpoint_id=before_agent.checkpoint_id)  # pauses
    paused = app.get_state(thread)
    assert paused.next == ("approve",) and paused.metadata["source"] == "fork"
    out = app.invoke(Command(resume="yes"), thread_id=thread)  # at the branch's head

    # the model asked again for the same call (same message id, call id and arguments)
    assert refunds.issued == [("A1", 30)]
    assert texts(out)[-1] == "done: refunded 30 on A1 (#1)"
    assert app.get_state(thread).metadata["branch"] is True


def test_only_what_a_tool_node_ran_successfully_is_reused(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    refunds = Refunds()
    app = refund_app(checkpointer, refunds)
    thread = tid()
    app.invoke({"messages": [HumanMessage("refund A1", id="u")]}, thread_id=thread)
    refunds.fail_next = True
    app.invoke(Command(resume="yes"), thread_id=thread)  # the tool failed: an error result
    assert texts(app.get_state(thread).values)[-2].startswith("Error")
    between = checkpoint_before(app, thread, "tools")

    app.invoke(None, thread_id=thread, checkpoint_id=between.checkpoint_id)
    assert refunds.issued == [("A1", 30)]  # an error is worth another try

    # a person's answer (update_state as the tool node) is not the tool's result either
    other = tid("person")
    app.invoke({"messages": [HumanMessage("refund A1", id="v")]}, thread_id=other)
    call = app.get_state(other).values.messages[-1].tool_calls[0]
    app.update_state(
        other,
        {"messages": [ToolMessage("refunded by hand", tool_call_id=call.id, name="refund")]},
        as_node="tools",
    )
    asked = checkpoint_before(app, other, "approve")
    app.invoke(Command(resume="yes"), thread_id=other, checkpoint_id=asked.checkpoint_id)
    assert refunds.issued == [("A1", 30), ("A1", 30)]


def test_parallel_calls_are_reused_without_charging_the_budget(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    refunds = Refunds()
    app = refund_app(checkpointer, refunds, gated=False)
    thread = tid()
    app.invoke({"messages": [HumanMessage("refund both", id="u")]}, thread_id=thread)
    assert refunds.issued == [("B2", 5), ("notify", 17)]
    before_tools = checkpoint_before(app, thread, "tools")

    out = app.invoke(
        None,
        thread_id=thread,
        checkpoint_id=before_tools.checkpoint_id,
        budget=Budget(max_tool_calls=0),
    )

    assert refunds.issued == [("B2", 5), ("notify", 17)]
    assert [m.text for m in out.messages if m.type == "tool"] == [
        "refunded 5 on B2 (#1)",
        "sent: refund on its way",
    ]


def test_a_plain_answer_for_a_step_of_several_tasks_names_their_interrupts(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    from flowgraph.errors import InvalidUpdateError

    def ask(name: str) -> Any:
        def node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [("ai", f"{name}: {interrupt(name)}")]}

        return node

    g = StateGraph(MessagesState)
    g.add_node("a", ask("a"))
    g.add_node("b", ask("b"))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile(checkpointer=checkpointer)
    thread = tid()
    app.invoke({"messages": [HumanMessage("go", id="u")]}, thread_id=thread)
    ids = {i.value: i.id for i in app.get_state(thread).interrupts}
    app.invoke(Command(resume={ids["a"]: 1, ids["b"]: 2}), thread_id=thread)
    asked = next(s for s in app.get_state_history(thread) if s.next == ("a", "b"))

    with pytest.raises(InvalidUpdateError) as raised:
        app.invoke(Command(resume=3), thread_id=thread, checkpoint_id=asked.checkpoint_id)
    assert ids["a"] in str(raised.value) and ids["b"] in str(raised.value)

    out = app.invoke(
        Command(resume={ids["a"]: "x", ids["b"]: "y"}),
        thread_id=thread,
        checkpoint_id=asked.checkpoint_id,
    )
    assert sorted(texts(out)[1:]) == ["a: x", "b: y"]


def test_a_tool_gets_the_same_call_id_in_every_branch_for_an_idempotency_key(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    keys: list[str] = []

    @tool
    def refund(order_id: str, amount: int, call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Refund an order."""
        keys.append(call_id)
        return f"refunded {amount} on {order_id}"

    g = StateGraph(MessagesState)
    g.add_node("agent", ModelNode(ScriptedChatModel(reply), tools=[refund]))
    g.add_node("tools", ToolNode([refund]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    app = g.compile(checkpointer=checkpointer)
    thread = tid()
    app.invoke({"messages": [HumanMessage("refund A1", id="u")]}, thread_id=thread)
    before_tools = checkpoint_before(app, thread, "tools")

    app.invoke(
        None, thread_id=thread, checkpoint_id=before_tools.checkpoint_id, rerun_tool_calls=True
    )

    assert keys == ["c1", "c1"]  # what a payment service dedupes the second request by
