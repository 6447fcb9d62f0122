"""ToolNode: one ToolMessage per call, in call order; errors the model can read; no re-runs."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from flowgraph import (
    END,
    START,
    AIMessage,
    Budget,
    BudgetExceededError,
    Command,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    MessagesState,
    StateGraph,
    TextPart,
    ToolCall,
    ToolError,
    ToolMessage,
    add_messages,
    interrupt,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.messages import AnyMessage
from flowgraph.nodes import InjectedState, InjectedToolCallId, ToolNode, tool, tools_condition


def calls_message(*calls: tuple[str, str, dict[str, Any]], **extra: Any) -> AIMessage:
    return AIMessage(
        "", id="ai-1", tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in calls], **extra
    )


def run(node: ToolNode, messages: list[Any]) -> list[ToolMessage]:
    return node.invoke({"messages": messages})["messages"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    await asyncio.sleep(0)
    return text.upper()


@tool
def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


# ------------------------------------------------------------------ the happy path


def test_one_message_per_call_in_call_order() -> None:
    node = ToolNode([add, shout])
    out = run(
        node,
        [
            HumanMessage("go"),
            calls_message(("c1", "add", {"a": 1, "b": 2}), ("c2", "shout", {"text": "hi"})),
        ],
    )
    assert [(m.tool_call_id, m.name, m.status, m.content) for m in out] == [
        ("c1", "add", "success", "3"),
        ("c2", "shout", "success", "HI"),
    ]
    assert all(m.id is None for m in out)  # the graph gives them deterministic ids


def test_calls_run_concurrently_and_keep_call_order() -> None:
    barrier = threading.Barrier(2, timeout=5)
    finished: list[str] = []

    @tool
    def slow(name: str) -> str:
        """Wait for the other call, then finish late."""
        barrier.wait()  # both sync calls must be running at once to pass
        time.sleep(0.05)
        finished.append(name)
        return name

    @tool
    def quick(name: str) -> str:
        """Wait for the other call, then finish at once."""
        barrier.wait()
        finished.append(name)
        return name

    out = run(
        ToolNode([slow, quick]),
        [calls_message(("c1", "slow", {"name": "first"}), ("c2", "quick", {"name": "second"}))],
    )
    assert finished == ["second", "first"]
    assert [m.content for m in out] == ["first", "second"]


def test_async_tools_run_concurrently() -> None:
    events: dict[str, asyncio.Event] = {}

    @tool
    async def ping(me: str, other: str) -> str:
        """Set my event, wait for the other's."""
        events.setdefault(me, asyncio.Event()).set()
        await asyncio.wait_for(events.setdefault(other, asyncio.Event()).wait(), 5)
        return me

    node = ToolNode([ping])
    out = asyncio.run(
        node.ainvoke(
            {
                "messages": [
                    calls_message(
                        ("c1", "ping", {"me": "a", "other": "b"}),
                        ("c2", "ping", {"me": "b", "other": "a"}),
                    )
                ]
            }
        )
    )
    assert [m.content for m in out["messages"]] == ["a", "b"]


def test_plain_functions_are_wrapped() -> None:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    node = ToolNode([double])
    assert list(node.tools) == ["double"]
    assert run(node, [calls_message(("c1", "double", {"x": 4}))])[0].content == "8"
    assert repr(node) == "ToolNode([double])"


# ------------------------------------------------------------------ what the model reads


class Forecast(BaseModel):
    city: str
    temp_c: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("plain text", "plain text"),
        ("", ""),
        (42, "42"),
        (None, "null"),
        (True, "true"),
        ({"b": 1, "a": [1, 2]}, '{"b": 1, "a": [1, 2]}'),
        (["x", 2.5], '["x", 2.5]'),
        (Forecast(city="Zürich", temp_c=21.5), '{"city": "Zürich", "temp_c": 21.5}'),
        (Point(1, 2), '{"x": 1, "y": 2}'),
        (datetime.date(2025, 1, 2), '"2025-01-02"'),
        ({"when": datetime.datetime(2025, 1, 2, 3, 4)}, '{"when": "2025-01-02T03:04:00"}'),
        (object, f'"{object}"'),
    ],
)
def test_non_string_results_are_json(value: Any, content: str) -> None:
    @tool
    def give() -> Any:
        """Give a value."""
        return value

    assert run(ToolNode([give]), [calls_message(("c1", "give", {}))])[0].content == content


def test_content_parts_pass_through() -> None:
    parts = [TextPart("a chart:"), ImagePart(url="https://example.com/chart.png")]

    @tool
    def chart() -> list[Any]:
        """Draw a chart."""
        return parts

    assert run(ToolNode([chart]), [calls_message(("c1", "chart", {}))])[0].content == parts


def test_artifact_stays_on_the_message() -> None:
    rows = [{"id": i} for i in range(1000)]

    @tool(response_format="content_and_artifact")
    def query(sql: str) -> tuple[str, list[dict[str, int]]]:
        """Run a query."""
        return f"{len(rows)} rows", rows

    (message,) = run(ToolNode([query]), [calls_message(("c1", "query", {"sql": "select"}))])
    assert (message.content, message.artifact, message.status) == ("1000 rows", rows, "success")


def test_a_tool_may_return_its_own_tool_message() -> None:
    @tool
    def custom() -> ToolMessage:
        """Answer with a full message."""
        return ToolMessage("partial", tool_call_id="ignored", status="error", metadata={"k": 1})

    (message,) = run(ToolNode([custom]), [calls_message(("c1", "custom", {}))])
    assert (message.tool_call_id, message.name, message.status, message.metadata) == (
        "c1",
        "custom",
        "error",
        {"k": 1},
    )


# ------------------------------------------------------------------ errors as messages


def error_of(node: ToolNode, *calls: tuple[str, str, dict[str, Any]]) -> ToolMessage:
    (message,) = run(node, [calls_message(*calls)])
    assert message.status == "error"
    return message


def test_unknown_tool() -> None:
    message = error_of(ToolNode([shout, add]), ("c1", "x", {}))
    assert (message.content, message.name, message.tool_call_id) == (
        "`x` is not a tool; available: add, shout",
        "x",
        "c1",
    )


def test_invalid_arguments_give_the_validation_text() -> None:
    message = error_of(ToolNode([add]), ("c1", "add", {"a": "one"}))
    assert message.content == (
        "Invalid arguments for tool `add`:\n"
        "- a: Input should be a valid integer, unable to parse string as an integer "
        "(got 'one')\n"
        "- b: Field required\n"
        "Call `add` again with arguments that match its schema."
    )


def test_an_exception_becomes_an_error_message() -> None:
    message = error_of(ToolNode([fail]), ("c1", "fail", {"reason": "disk full"}))
    assert message.content == "Error: tool `fail` raised RuntimeError: disk full"
    assert message.name == "fail"


def test_a_timeout() -> None:
    @tool
    async def hang() -> str:
        """Never answers."""
        await asyncio.sleep(30)
        return "late"

    message = error_of(ToolNode([hang], timeout=0.05), ("c1", "hang", {}))
    assert message.content == (
        "Error: tool `hang` did not finish within 0.05 s. "
        "Try again, perhaps with a smaller request."
    )


def test_a_timeout_of_a_sync_tool() -> None:
    release = threading.Event()

    @tool
    def block() -> str:
        """Blocks until released."""
        release.wait(5)
        return "late"

    try:
        message = error_of(ToolNode([block], timeout=0.05), ("c1", "block", {}))
    finally:
        release.set()
    assert "did not finish within 0.05 s" in message.text


def test_a_tools_own_timeout_error_is_an_exception_not_our_deadline() -> None:
    @tool
    def remote() -> str:
        """Calls a slow service."""
        raise TimeoutError("service did not answer in 5s")

    message = error_of(ToolNode([remote], timeout=10), ("c1", "remote", {}))
    assert (
        message.content == "Error: tool `remote` raised TimeoutError: service did not answer in 5s"
    )


def test_invalid_tool_call_from_the_model() -> None:
    ai = AIMessage(
        "",
        invalid_tool_calls=[
            InvalidToolCall(id="c9", name="add", args='{"a": 1,', error="unexpected end"),
            InvalidToolCall(id=None, name="add", args="?", error="no id: cannot be answered"),
        ],
    )
    (message,) = run(ToolNode([add]), [ai])
    assert (message.tool_call_id, message.name, message.status) == ("c9", "add", "error")
    assert message.content == (
        "Error: the arguments of your call to `add` are not valid JSON (unexpected end). "
        "Call `add` again with a JSON object of arguments."
    )


def test_valid_calls_then_invalid_ones() -> None:
    ai = AIMessage(
        "",
        tool_calls=[ToolCall(id="c1", name="add", args={"a": 1, "b": 1})],
        invalid_tool_calls=[InvalidToolCall(id="c2", name="add", args="{", error="bad")],
    )
    assert [(m.tool_call_id, m.status) for m in run(ToolNode([add]), [ai])] == [
        ("c1", "success"),
        ("c2", "error"),
    ]


def test_errors_do_not_stop_the_other_calls() -> None:
    out = run(
        ToolNode([add, fail]),
        [
            calls_message(
                ("c1", "fail", {"reason": "x"}),
                ("c2", "add", {"a": 2, "b": 2}),
                ("c3", "nope", {}),
            )
        ],
    )
    assert [(m.tool_call_id, m.status) for m in out] == [
        ("c1", "error"),
        ("c2", "success"),
        ("c3", "error"),
    ]


def test_handle_errors_text_and_function() -> None:
    fixed = error_of(ToolNode([fail], handle_errors="Tool failed."), ("c", "fail", {"reason": "r"}))
    assert fixed.content == "Tool failed."
    made = error_of(
        ToolNode([fail], handle_errors=lambda exc: f"sorry: {exc}"), ("c", "fail", {"reason": "r"})
    )
    assert made.content == "sorry: r"
    # the handler shapes exceptions only; an unknown tool keeps its own text
    unknown = error_of(ToolNode([fail], handle_errors="Tool failed."), ("c", "x", {}))
    assert unknown.content == "`x` is not a tool; available: fail"


@pytest.mark.parametrize(
    ("call", "message", "cause"),
    [
        (("c1", "x", {}), "`x` is not a tool; available: add, fail", type(None)),
        (("c1", "add", {"a": 1}), "- b: Field required", ToolError),
        (("c1", "fail", {"reason": "boom"}), "raised RuntimeError: boom", RuntimeError),
    ],
)
def test_handle_errors_false_raises_tool_error(
    call: tuple[str, str, dict[str, Any]], message: str, cause: type
) -> None:
    with pytest.raises(ToolError) as caught:
        run(ToolNode([add, fail], handle_errors=False), [calls_message(call)])
    assert message in str(caught.value)
    assert (caught.value.tool_call_id, caught.value.tool_name) == ("c1", call[1])
    assert isinstance(caught.value.__cause__, cause)


def test_handle_errors_false_raises_for_timeouts_and_invalid_calls() -> None:
    @tool
    async def hang() -> None:
        """Hang."""
        await asyncio.sleep(30)

    with pytest.raises(ToolError, match="did not finish within"):
        run(ToolNode([hang], timeout=0.01, handle_errors=False), [calls_message(("c", "hang", {}))])
    invalid = AIMessage("", invalid_tool_calls=[InvalidToolCall(id="c", name="hang", args="{")])
    with pytest.raises(ToolError, match="not valid JSON"):
        run(ToolNode([hang], handle_errors=False), [invalid])


def test_first_failure_in_call_order_is_raised() -> None:
    @tool
    async def late_fail() -> None:
        """Fails late."""
        await asyncio.sleep(0.02)
        raise ValueError("late")

    @tool
    def early_fail() -> None:
        """Fails at once."""
        raise ValueError("early")

    with pytest.raises(ToolError, match="late"):
        run(
            ToolNode([late_fail, early_fail], handle_errors=False),
            [calls_message(("c1", "late_fail", {}), ("c2", "early_fail", {}))],
        )


# ------------------------------------------------------------------ not executed again


def test_answered_calls_are_not_executed_again() -> None:
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record a number."""
        ran.append(n)
        return n

    history = [
        HumanMessage("go", id="h"),
        calls_message(("c1", "record", {"n": 1}), ("c2", "record", {"n": 2})),
        ToolMessage("1", tool_call_id="c1", name="record", id="t1"),
    ]
    out = run(ToolNode([record]), history)
    assert ran == [2]
    assert [m.tool_call_id for m in out] == ["c2"]
    # all answered: nothing runs, nothing is written
    assert run(ToolNode([record]), [*history, *out]) == []
    assert ran == [2]


def test_answers_from_an_earlier_turn_do_not_count() -> None:
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record a number."""
        ran.append(n)
        return n

    history = [
        AIMessage("", id="a1", tool_calls=[ToolCall(id="call_0", name="record", args={"n": 1})]),
        ToolMessage("1", tool_call_id="call_0", id="t1"),
        # some providers number calls per turn: the same id comes back
        AIMessage("", id="a2", tool_calls=[ToolCall(id="call_0", name="record", args={"n": 2})]),
    ]
    assert [m.content for m in run(ToolNode([record]), history)] == ["2"]
    assert ran == [2]


def test_no_tool_calls_means_no_messages() -> None:
    assert run(ToolNode([add]), [HumanMessage("hi"), AIMessage("hello")]) == []


def test_no_ai_message_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="ToolNode found no AIMessage in state field 'messages'"):
        run(ToolNode([add]), [HumanMessage("hi")])


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Two tools are named 'add'"):
        ToolNode([add, add])
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        ToolNode([add], timeout=0)


# ------------------------------------------------------------------ inside a graph


class State(MessagesState):
    user: str = "Ada"


def scripted_agent(turns: list[AIMessage]) -> Any:
    """A stand-in for a model node: the n-th AI turn of the script, by AI messages so far."""

    def agent(state: State) -> dict[str, list[AIMessage]]:
        done = sum(isinstance(m, AIMessage) for m in state.messages)
        return {"messages": [turns[done]]}

    return agent


def react_graph(node: ToolNode, turns: list[AIMessage], schema: Any = State, **compile: Any) -> Any:
    g = StateGraph(schema)
    g.add_node("agent", scripted_agent(turns))
    g.add_node("tools", node)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(**compile)


@tool
def whoami(
    prefix: str,
    state: Annotated[State, InjectedState],
    user: Annotated[str, InjectedState("user")],
    call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Say who the user is."""
    assert isinstance(state, State)
    return f"{prefix} {user} ({call_id}, {len(state.messages)} messages)"


TURNS = [
    AIMessage("", tool_calls=[ToolCall(id="c1", name="whoami", args={"prefix": "you are"})]),
    AIMessage("done"),
]


def test_injection_in_a_sync_graph() -> None:
    app = react_graph(ToolNode([whoami]), TURNS)
    assert app.graph.nodes["tools"]["kind"] == "tool"
    out = app.invoke({"messages": [HumanMessage("who am I?")]})
    assert out.messages[2].content == "you are Ada (c1, 2 messages)"
    assert out.messages[-1].content == "done"


def test_injection_in_an_async_graph() -> None:
    app = react_graph(ToolNode([whoami]), TURNS)
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("who am I?")], "user": "Bob"}))
    assert out.messages[2].content == "you are Bob (c1, 2 messages)"


class DictState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def test_a_typeddict_state() -> None:
    @tool
    def count(state: Annotated[dict[str, Any], InjectedState]) -> int:
        """Count messages."""
        return len(state["messages"])

    turns = [AIMessage("", tool_calls=[ToolCall(id="c1", name="count", args={})]), AIMessage("ok")]

    def agent(state: DictState) -> dict[str, Any]:
        return {"messages": [turns[sum(isinstance(m, AIMessage) for m in state["messages"])]]}

    g = StateGraph(DictState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([count]))
    g.add_edge(START, "agent").add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    out = g.compile().invoke({"messages": [HumanMessage("n?")]})
    assert [m.content for m in out["messages"][2:]] == ["2", "ok"]


def test_tool_calls_are_charged_before_anything_runs() -> None:
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record."""
        ran.append(n)
        return n

    turns = [
        AIMessage(
            "",
            tool_calls=[
                ToolCall(id="c1", name="record", args={"n": 1}),
                ToolCall(id="c2", name="record", args={"n": 2}),
            ],
        ),
        AIMessage("done"),
    ]
    app = react_graph(ToolNode([record]), turns, checkpointer=MemoryCheckpointer())
    with pytest.raises(BudgetExceededError) as caught:
        app.invoke(
            {"messages": [HumanMessage("go")]}, thread_id="t", budget=Budget(max_tool_calls=1)
        )
    assert caught.value.limit_name == "max_tool_calls"
    assert ran == []
    # a larger budget resumes the thread where it stopped
    out = app.invoke(None, thread_id="t", budget=Budget(max_tool_calls=2))
    assert ran == [1, 2]
    assert out.messages[-1].content == "done"


def test_a_call_answered_by_a_person_is_not_run() -> None:
    ran: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        ran.append(to)
        return f"sent to {to}"

    turns = [
        AIMessage(
            "",
            tool_calls=[
                ToolCall(id="c1", name="send_email", args={"to": "boss"}),
                ToolCall(id="c2", name="send_email", args={"to": "team"}),
            ],
        ),
        AIMessage("done"),
    ]
    app = react_graph(
        ToolNode([send_email]),
        turns,
        checkpointer=MemoryCheckpointer(),
        interrupt_after=["agent"],
    )
    app.invoke({"messages": [HumanMessage("mail them")]}, thread_id="t")
    assert app.get_state("t").next == ("tools",)
    # a reviewer answers the first call by hand instead of letting it run
    app.update_state(
        "t",
        {
            "messages": [
                ToolMessage(
                    "not sent: rejected", tool_call_id="c1", name="send_email", status="error"
                )
            ]
        },
    )
    out = app.invoke(None, thread_id="t")
    assert ran == ["team"]
    assert [(m.tool_call_id, m.content) for m in out.messages if isinstance(m, ToolMessage)] == [
        ("c1", "not sent: rejected"),
        ("c2", "sent to team"),
    ]


def test_interrupt_inside_a_tool_pauses_the_run() -> None:
    @tool
    def delete(path: str) -> str:
        """Delete a file, after approval."""
        answer = interrupt({"approve": path})
        return f"deleted {path}" if answer == "yes" else "kept"

    turns = [
        AIMessage("", tool_calls=[ToolCall(id="c1", name="delete", args={"path": "/tmp/x"})]),
        AIMessage("done"),
    ]
    app = react_graph(ToolNode([delete]), turns, checkpointer=MemoryCheckpointer())
    app.invoke({"messages": [HumanMessage("clean up")]}, thread_id="t")
    (pause,) = app.get_state("t").interrupts
    assert pause.value == {"approve": "/tmp/x"}
    out = app.invoke(Command(resume="yes"), thread_id="t")
    assert out.messages[2].content == "deleted /tmp/x"
    assert out.messages[-1].content == "done"


def test_tool_node_ends_when_the_model_is_done() -> None:
    app = react_graph(ToolNode([add]), [AIMessage("no tools needed")])
    out = app.invoke({"messages": [HumanMessage("hi")]})
    assert [m.type for m in out.messages] == ["human", "ai"]
    assert END == "__end__"
