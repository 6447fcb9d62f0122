"""once()/aonce(): a side effect runs at most once per (thread, step, task, key).

Checked on every backend: a RetryPolicy attempt, a resume after an exception
(in a fresh app over the same store), a resume after an interrupt, parallel
tasks, subgraphs; ToolNode and ModelNode use it for tool calls and replies.
"""

from __future__ import annotations

import asyncio
import operator
from collections import Counter
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    HumanMessage,
    InjectedToolCallId,
    MessagesState,
    ModelNode,
    RetryPolicy,
    ScriptedChatModel,
    Send,
    SerializationError,
    StateGraph,
    ToolError,
    ToolMessage,
    ToolNode,
    aonce,
    interrupt,
    once,
    tool,
)
from flowgraph.checkpoint import serde
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.messages import ToolCall

from .conftest import ThreadIds

NO_WAIT = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=RuntimeError)


class Notes(MessagesState):
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


class Booking(BaseModel):
    ref: str
    seats: list[int]


serde.register(Booking)


def test_outside_a_run_once_just_calls() -> None:
    calls: list[int] = []
    assert once("k", lambda: calls.append(1) or len(calls)) == 1
    assert once("k", lambda: calls.append(1) or len(calls)) == 2


def test_a_retry_gets_the_stored_result_without_calling_again_even_without_a_checkpointer() -> None:
    charged: list[str] = []
    attempts: list[int] = []

    def charge(amount: int) -> dict[str, Any]:
        charged.append(f"charged {amount}")
        return {"receipt": f"r-{len(charged)}", "amount": amount}

    def pay(state: Notes) -> dict[str, Any]:
        receipt = once("charge", charge, 30)
        attempts.append(1)
        if len(attempts) < 3:
            raise RuntimeError("the mail server is down")
        return {"notes": [receipt["receipt"]]}

    g = StateGraph(Notes)
    g.add_node("pay", pay, retry=NO_WAIT)
    g.add_edge(START, "pay")
    g.add_edge("pay", END)
    out = g.compile().invoke({"messages": [HumanMessage("pay")]})
    assert charged == ["charged 30"]
    assert len(attempts) == 3
    assert out.notes == ["r-1"]


def test_a_resume_after_a_failure_gets_the_stored_result_in_a_fresh_app(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    charged: list[int] = []
    broken = {"on": True}

    def pay(state: Notes) -> dict[str, Any]:
        receipt = once("charge", lambda: charged.append(1) or {"id": "rcpt-7", "ok": True})
        if broken["on"]:
            raise RuntimeError("crashed after charging")
        return {"notes": [receipt["id"]]}

    def build() -> Any:
        g = StateGraph(Notes)
        g.add_node("pay", pay)
        g.add_edge(START, "pay")
        g.add_edge("pay", END)
        return g.compile(checkpointer=checkpointer)

    with pytest.raises(RuntimeError, match="crashed after charging"):
        build().invoke({"messages": [HumanMessage("pay")]}, thread_id=t)
    snapshot = build().get_state(t)
    assert snapshot.next == ("pay",) and snapshot.interrupts == ()
    broken["on"] = False
    out = build().invoke(None, thread_id=t)
    assert charged == [1]
    assert out.notes == ["rcpt-7"]


def test_the_same_key_in_a_later_step_runs_again(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    runs = Counter[str]()

    def step(state: Notes) -> dict[str, Any]:
        value = once("tick", lambda: runs.update(["tick"]) or runs["tick"])
        return {"notes": [str(value)]}

    g = StateGraph(Notes)
    g.add_node("a", step)
    g.add_node("b", step)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    app = g.compile(checkpointer=checkpointer)
    assert app.invoke({"messages": []}, thread_id=t).notes == ["1", "2"]
    assert app.invoke({"messages": []}, thread_id=t).notes == ["1", "2", "3", "4"]


def test_a_value_the_codec_cannot_store_is_an_error_naming_the_key(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    class Opaque:
        pass

    def node(state: Notes) -> dict[str, Any]:
        once("the-handle", Opaque)
        return {}

    g = StateGraph(Notes)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_edge("node", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(SerializationError, match=r"once\('the-handle'\) in node 'node'"):
        app.invoke({"messages": []}, thread_id=tid())


def test_pydantic_values_and_messages_come_back_equal(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    seen: list[Any] = []
    broken = {"on": True}

    def book(state: Notes) -> dict[str, Any]:
        booking = once("book", lambda: Booking(ref="B-1", seats=[3, 4]))
        reply = once("reply", lambda: AIMessage("booked", id="ai-1"))
        seen.append((booking, reply))
        if broken["on"]:
            raise RuntimeError("down")
        return {"messages": [reply]}

    g = StateGraph(Notes)
    g.add_node("book", book)
    g.add_edge(START, "book")
    g.add_edge("book", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError):
        app.invoke({"messages": []}, thread_id=t)
    broken["on"] = False
    fresh = g.compile(checkpointer=checkpointer)
    fresh.invoke(None, thread_id=t)
    first, second = seen
    assert second == first
    assert isinstance(second[0], Booking) and second[1].id == "ai-1"


def test_an_interrupted_node_does_not_repeat_its_side_effect_on_resume(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    sent: list[str] = []

    def draft_and_ask(state: Notes) -> dict[str, Any]:
        draft = once("draft", lambda: sent.append("draft") or "Dear customer, ...")
        verdict = interrupt({"review": draft})
        return {"notes": [f"{verdict}: {draft}"]}

    g = StateGraph(Notes)
    g.add_node("draft", draft_and_ask)
    g.add_edge(START, "draft")
    g.add_edge("draft", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"messages": []}, thread_id=t)
    assert app.get_state(t).interrupts[0].value == {"review": "Dear customer, ..."}
    out = g.compile(checkpointer=checkpointer).invoke(Command(resume="approved"), thread_id=t)
    assert sent == ["draft"]
    assert out.notes == ["approved: Dear customer, ..."]


def test_a_failure_after_an_answered_interrupt_keeps_both_answer_and_result(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    sent: list[str] = []
    broken = {"on": True}

    def ask_then_send(state: Notes) -> dict[str, Any]:
        to = interrupt("to whom?")
        once("send", lambda: sent.append(to) or "sent")
        if broken["on"]:
            raise RuntimeError("crashed after sending")
        return {"notes": [f"sent to {to}"]}

    g = StateGraph(Notes)
    g.add_node("send", ask_then_send)
    g.add_edge(START, "send")
    g.add_edge("send", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"messages": []}, thread_id=t)
    with pytest.raises(RuntimeError, match="crashed after sending"):
        app.invoke(Command(resume="ada"), thread_id=t)
    broken["on"] = False
    out = g.compile(checkpointer=checkpointer).invoke(None, thread_id=t)
    assert sent == ["ada"]
    assert out.notes == ["sent to ada"]


def test_parallel_tasks_with_the_same_key_each_run_once(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    done: list[str] = []
    failures = {"c": 1}

    def fan(state: Notes) -> list[Send]:
        return [Send("work", {"notes": [name]}) for name in ("a", "b", "c")]

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        name = arg["notes"][0]
        once("job", lambda: done.append(name))
        if failures.get(name):
            failures[name] -= 1
            raise RuntimeError(f"{name} failed")
        return {"notes": [f"{name} done"]}

    g = StateGraph(Notes)
    g.add_node("work", work)
    g.add_conditional_edges(START, fan)
    g.add_edge("work", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match="c failed"):
        app.invoke({"messages": []}, thread_id=t)
    out = app.invoke(None, thread_id=t)
    assert sorted(done) == ["a", "b", "c"]
    assert sorted(out.notes) == ["a done", "b done", "c done"]


def test_once_inside_a_subgraph_holds_across_a_resume(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    done: list[str] = []
    broken = {"on": True}

    def inner_work(state: Notes) -> dict[str, Any]:
        once("inner", lambda: done.append("inner"))
        return {"notes": ["inner"]}

    def inner_fail(state: Notes) -> dict[str, Any]:
        once("later", lambda: done.append("later"))
        if broken["on"]:
            raise RuntimeError("inner failure")
        return {"notes": ["later"]}

    sub = StateGraph(Notes)
    sub.add_node("work", inner_work)
    sub.add_node("fail", inner_fail)
    sub.add_edge(START, "work")
    sub.add_edge("work", "fail")
    sub.add_edge("fail", END)
    g = StateGraph(Notes)
    g.add_node("sub", sub.compile())
    g.add_edge(START, "sub")
    g.add_edge("sub", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match="inner failure"):
        app.invoke({"messages": []}, thread_id=t)
    broken["on"] = False
    out = app.invoke(None, thread_id=t)
    assert done == ["inner", "later"]
    assert out.notes == ["inner", "later"]


def test_aonce_in_an_async_node_under_ainvoke(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    calls: list[int] = []
    broken = {"on": True}

    async def fetch() -> str:
        calls.append(1)
        await asyncio.sleep(0)
        return "payload"

    async def node(state: Notes) -> dict[str, Any]:
        value = await aonce("fetch", fetch)
        if broken["on"]:
            raise RuntimeError("after fetch")
        return {"notes": [value]}

    g = StateGraph(Notes)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_edge("node", END)
    app = g.compile(checkpointer=checkpointer)

    async def scenario() -> Any:
        with pytest.raises(RuntimeError):
            await app.ainvoke({"messages": []}, thread_id=t)
        broken["on"] = False
        return await g.compile(checkpointer=checkpointer).ainvoke(None, thread_id=t)

    assert asyncio.run(scenario()).notes == ["payload"]
    assert calls == [1]


# -- ToolNode and ModelNode ---------------------------------------------------------


def two_call_graph(
    checkpointer: BaseCheckpointer | None, ran: Counter[str], fail_times: int, **kw: Any
) -> Any:
    """An agent asks for two tools at once: an email (succeeds) and a card charge (fails
    its first `fail_times` tries)."""

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        ran[f"email:{to}"] += 1
        return f"sent to {to}"

    @tool
    def charge_card(amount: int) -> str:
        """Charge the card."""
        ran[f"charge:{amount}"] += 1
        if ran[f"charge:{amount}"] <= fail_times:
            raise RuntimeError("the payment gateway timed out")
        return f"charged {amount}"

    def agent(state: MessagesState) -> dict[str, Any]:
        call_a = ToolCall(id="call_a", name="send_email", args={"to": "ada"})
        call_b = ToolCall(id="call_b", name="charge_card", args={"amount": 5})
        return {"messages": [AIMessage("", tool_calls=[call_a, call_b])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([send_email, charge_card], handle_errors=False), **kw)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tools")
    g.add_edge("tools", END)
    return g.compile(checkpointer=checkpointer)


def tool_results(state: MessagesState) -> list[tuple[str, str]]:
    return [(m.tool_call_id, m.text) for m in state.messages if isinstance(m, ToolMessage)]


def test_tool_node_retry_does_not_run_a_finished_call_again() -> None:
    ran = Counter[str]()
    policy = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=ToolError)
    app = two_call_graph(None, ran, fail_times=2, retry=policy)
    out = app.invoke({"messages": [HumanMessage("go")]})
    assert ran == Counter({"email:ada": 1, "charge:5": 3})
    assert tool_results(out) == [("call_a", "sent to ada"), ("call_b", "charged 5")]


def test_tool_node_resume_in_a_fresh_app_does_not_run_a_finished_call_again(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    ran = Counter[str]()
    with pytest.raises(ToolError, match="payment gateway"):
        two_call_graph(checkpointer, ran, fail_times=1).invoke(
            {"messages": [HumanMessage("go")]}, thread_id=t
        )
    assert ran == Counter({"email:ada": 1, "charge:5": 1})
    out = two_call_graph(checkpointer, ran, fail_times=1).invoke(None, thread_id=t)
    assert ran == Counter({"email:ada": 1, "charge:5": 2})
    assert tool_results(out) == [("call_a", "sent to ada"), ("call_b", "charged 5")]


def test_model_node_reply_is_not_paid_twice_when_the_step_is_retried(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    model = ScriptedChatModel(["first reply", "second reply"])
    node = ModelNode(model)
    attempts: list[int] = []

    async def agent(state: MessagesState) -> dict[str, Any]:
        out = await node(state)
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("a later failure in the same node")
        return out

    g = StateGraph(MessagesState)
    g.add_node("agent", agent, retry=NO_WAIT)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    out = g.compile(checkpointer=checkpointer).invoke(
        {"messages": [HumanMessage("hi")]}, thread_id=t
    )
    assert [m.text for m in out.messages] == ["hi", "first reply"]
    assert model.calls == 1


def test_a_failed_model_call_is_not_recorded_and_is_retried(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    from flowgraph import MalformedResponseError

    class Flaky(ScriptedChatModel):
        failures = 1

        async def ainvoke(self, *args: Any, **kwargs: Any) -> AIMessage:
            if self.failures:
                self.failures -= 1
                raise MalformedResponseError("the reply did not parse")
            return await super().ainvoke(*args, **kwargs)

    model = Flaky(["fine"])
    policy = RetryPolicy(
        max_attempts=2, initial_interval=0.0, jitter=False, retry_on=MalformedResponseError
    )
    g = StateGraph(MessagesState)
    g.add_node("agent", ModelNode(model), retry=policy)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    out = g.compile(checkpointer=checkpointer).invoke(
        {"messages": [HumanMessage("hi")]}, thread_id=tid()
    )
    assert [m.text for m in out.messages] == ["hi", "fine"]


# -- a tool that returns a Command goes through `aonce` like any other result -------


class Booked(MessagesState):
    booking: str = ""


def booking_graph(checkpointer: BaseCheckpointer, ran: Counter[str], fail_times: int) -> Any:
    """Two calls at once: `book` returns a Command (its update sets `booking`, then the run
    goes to `confirm`), `charge_card` fails its first `fail_times` tries."""

    @tool
    def book(seat: str, call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Book a seat."""
        ran[f"book:{seat}"] += 1
        reply = ToolMessage(f"booked {seat}", tool_call_id=call_id)
        return Command(update={"booking": seat, "messages": [reply]}, goto="confirm")

    @tool
    def charge_card(amount: int) -> str:
        """Charge the card."""
        ran[f"charge:{amount}"] += 1
        if ran[f"charge:{amount}"] <= fail_times:
            raise RuntimeError("the payment gateway timed out")
        return f"charged {amount}"

    def agent(state: Booked) -> dict[str, Any]:
        calls = [
            ToolCall(id="call_a", name="book", args={"seat": "12A"}),
            ToolCall(id="call_b", name="charge_card", args={"amount": 5}),
        ]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    def confirm(state: Booked) -> dict[str, Any]:
        return {"messages": [AIMessage(f"Seat {state.booking} is yours.")]}

    g = StateGraph(Booked)
    g.add_node("agent", agent)
    g.add_node(
        "tools", ToolNode([book, charge_card], handle_errors=False), destinations=["confirm"]
    )
    g.add_node("confirm", confirm)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tools")
    return g.compile(checkpointer=checkpointer)


def test_a_tool_command_is_not_run_again_on_resume_after_a_sibling_failed(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    ran = Counter[str]()
    with pytest.raises(ToolError, match="payment gateway"):
        booking_graph(checkpointer, ran, fail_times=1).invoke(
            {"messages": [HumanMessage("book 12A")]}, thread_id=t
        )
    assert ran == Counter({"book:12A": 1, "charge:5": 1})
    # a fresh app over the same store: the stored Command comes back, book does not run
    out = booking_graph(checkpointer, ran, fail_times=1).invoke(None, thread_id=t)
    assert ran == Counter({"book:12A": 1, "charge:5": 2})
    assert out.booking == "12A"
    assert [(m.type, m.text) for m in out.messages[2:]] == [
        ("tool", "booked 12A"),
        ("tool", "charged 5"),
        ("ai", "Seat 12A is yours."),
    ]
    assert [m.name for m in out.messages[2:4]] == ["book", "charge_card"]


def test_an_error_result_is_not_kept_and_its_call_runs_again_on_retry() -> None:
    """handle_errors=True turns a failure into a result the model reads; it is not stored
    by once, so a retry of the node (for another reason) tries the call again."""
    tries: list[str] = []

    @tool
    def flaky(q: str) -> str:
        """Sometimes fails."""
        tries.append(q)
        if len(tries) == 1:
            raise RuntimeError("first try fails")
        return f"ok {q}"

    tool_node = ToolNode([flaky])
    attempts: list[int] = []

    async def tools(state: MessagesState) -> dict[str, Any]:
        out = await tool_node(state)
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("something after the tools failed")
        return out

    def agent(state: MessagesState) -> dict[str, Any]:
        call = ToolCall(id="call_1", name="flaky", args={"q": "x"})
        return {"messages": [AIMessage("", tool_calls=[call])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", tools, retry=NO_WAIT)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tools")
    g.add_edge("tools", END)
    out = g.compile().invoke({"messages": [HumanMessage("go")]})
    assert tries == ["x", "x"]
    assert tool_results(out) == [("call_1", "ok x")]
