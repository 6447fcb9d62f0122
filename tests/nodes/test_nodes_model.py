"""ModelNode: what it sends (system, persona, memory, mended calls), tools, options, ids."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowgraph import (
    END,
    START,
    AIMessage,
    BudgetExceededError,
    HumanMessage,
    InvalidToolCall,
    MessagesState,
    StateGraph,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.graph import Budget
from flowgraph.messages import AIMessageChunk
from flowgraph.models import ChatOptions, ScriptedChatModel
from flowgraph.nodes import ModelNode, create_react_agent, mend_tool_calls, tool, trim_messages
from flowgraph.nodes.model import MISSING_TOOL_RESULT
from flowgraph.prompts import SystemPromptTemplate


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class ProfileState(MessagesState):
    user_name: str = "Ada"
    language: str = "Python"


def one_node(node: ModelNode, schema: type[Any] = MessagesState, **compile: Any) -> Any:
    graph = StateGraph(schema)
    graph.add_node("agent", node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph.compile(**compile)


def sent(model: ScriptedChatModel, call: int = 0) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in model.requests[call].messages]


# ------------------------------------------------------------------ what is sent


def test_system_string_is_sent_first() -> None:
    model = ScriptedChatModel(["hi"])
    out = one_node(ModelNode(model, system="Be brief.")).invoke(
        {"messages": [HumanMessage("hello")]}
    )
    assert sent(model) == [("system", "Be brief."), ("human", "hello")]
    assert [(m.type, m.text) for m in out.messages] == [("human", "hello"), ("ai", "hi")]


def test_system_template_is_rendered_from_state_fields() -> None:
    model = ScriptedChatModel(["ok"])
    system = SystemPromptTemplate("You help {user_name} with ${language}.")
    app = one_node(ModelNode(model, system=system), ProfileState)
    app.invoke({"messages": [HumanMessage("hi")], "user_name": "Linus", "language": "C"})
    assert sent(model)[0] == ("system", "You help Linus with C.")


def test_system_replaces_the_states_system_message_only_in_what_is_sent() -> None:
    model = ScriptedChatModel(["ok"])
    state_system = SystemMessage("Old persona.", id="sys")
    out = one_node(ModelNode(model, system="New prompt.")).invoke(
        {"messages": [state_system, HumanMessage("hi")]}
    )
    assert sent(model) == [("system", "New prompt."), ("human", "hi")]
    assert out.messages[0] == state_system
    assert [(m.type, m.text) for m in out.messages] == [
        ("system", "Old persona."),
        ("human", "hi"),
        ("ai", "ok"),
    ]


def test_without_system_the_states_persona_is_sent() -> None:
    model = ScriptedChatModel(["ok"])
    one_node(ModelNode(model)).invoke(
        {"messages": [SystemMessage("You are a pirate."), HumanMessage("hi")]}
    )
    assert sent(model) == [("system", "You are a pirate."), ("human", "hi")]


def history(n: int) -> list[Any]:
    messages: list[Any] = [SystemMessage("sys", id="s")]
    for i in range(n):
        messages.append(HumanMessage(f"q{i}", id=f"h{i}"))
        messages.append(AIMessage(f"a{i}", id=f"a{i}"))
    return messages


def test_memory_window_trims_only_what_is_sent() -> None:
    model = ScriptedChatModel(["next"])
    app = one_node(ModelNode(model, memory=3), checkpointer=MemoryCheckpointer())
    out = app.invoke({"messages": [*history(4), HumanMessage("q4", id="h4")]}, thread_id="t")
    assert sent(model) == [("system", "sys"), ("ai", "a3"), ("human", "q4")]
    assert len(out.messages) == 1 + 8 + 1 + 1
    assert len(app.get_state("t").values.messages) == 11


def test_memory_callable_trims_only_what_is_sent() -> None:
    seen: list[int] = []

    def last_two(messages: list[Any]) -> list[Any]:
        seen.append(len(messages))
        return messages[-2:]

    model = ScriptedChatModel(["next"])
    out = one_node(ModelNode(model, memory=last_two)).invoke({"messages": history(3)})
    assert seen == [7]
    assert sent(model) == [("human", "q2"), ("ai", "a2")]
    assert len(out.messages) == 8


def test_memory_can_be_a_token_window_of_trim_messages() -> None:
    def words(messages: list[Any]) -> int:
        return sum(len(m.text.split()) for m in messages)

    model = ScriptedChatModel(["next"])
    node = ModelNode(model, memory=partial(trim_messages, max_tokens=3, token_counter=words))
    out = one_node(node).invoke({"messages": history(3)})
    assert sent(model) == [("system", "sys"), ("human", "q2"), ("ai", "a2")]
    assert len(out.messages) == 8


def test_model_node_runs_outside_a_graph() -> None:
    model = ScriptedChatModel(["pong"])
    update = ModelNode(model, system="sys").invoke([HumanMessage("ping")])
    assert [m.text for m in update["messages"]] == ["pong"]
    assert sent(model) == [("system", "sys"), ("human", "ping")]


# ------------------------------------------------------------------ mend_tool_calls


def test_mend_inserts_the_missing_result_after_the_existing_one() -> None:
    ai = AIMessage(
        "",
        id="ai",
        tool_calls=[
            ToolCall(id="c1", name="add", args={"a": 1, "b": 2}),
            ToolCall(id="c2", name="shout", args={"text": "x"}),
        ],
    )
    done = ToolMessage("3", tool_call_id="c1", name="add", id="t1")
    human = HumanMessage("never mind", id="h")
    mended = mend_tool_calls([HumanMessage("go", id="h0"), ai, done, human])
    assert [m.id for m in mended[:3]] == ["h0", "ai", "t1"]
    missing = mended[3]
    assert isinstance(missing, ToolMessage)
    assert (missing.tool_call_id, missing.name, missing.status, missing.content) == (
        "c2",
        "shout",
        "error",
        MISSING_TOOL_RESULT,
    )
    assert mended[4] == human
    assert len(mended) == 5


def test_mend_closes_calls_left_open_at_the_end() -> None:
    ai = AIMessage("", tool_calls=[ToolCall(id="c1", name="add", args={"a": 1, "b": 2})])
    mended = mend_tool_calls([HumanMessage("go"), ai])
    assert len(mended) == 3
    assert isinstance(mended[2], ToolMessage)
    assert (mended[2].tool_call_id, mended[2].status) == ("c1", "error")


def test_mend_leaves_complete_histories_unchanged() -> None:
    ai = AIMessage(
        "",
        tool_calls=[
            ToolCall(id="c1", name="add", args={"a": 1, "b": 2}),
            ToolCall(id="c2", name="shout", args={"text": "x"}),
        ],
    )
    complete = [
        SystemMessage("sys"),
        HumanMessage("go"),
        ai,
        ToolMessage("3", tool_call_id="c1", name="add"),
        ToolMessage("X", tool_call_id="c2", name="shout"),
        AIMessage("done"),
        HumanMessage("thanks"),
    ]
    assert mend_tool_calls(complete) == complete


def _reference_mend(history: list[Any]) -> list[tuple[str, str | None]]:
    """What a mended history reads as: (kind, call id) per message, the rule spelled out."""
    out: list[tuple[str, str | None]] = []
    index = 0
    while index < len(history):
        message = history[index]
        out.append((message.type, getattr(message, "tool_call_id", None)))
        index += 1
        if isinstance(message, AIMessage):
            calls = [c.id for c in message.tool_calls]
            calls += [c.id for c in message.invalid_tool_calls if c.id is not None]
            answered = set()
            while index < len(history) and isinstance(history[index], ToolMessage):
                answered.add(history[index].tool_call_id)
                out.append(("tool", history[index].tool_call_id))
                index += 1
            out.extend(("tool", call) for call in calls if call not in answered)
    return out


@given(
    st.lists(
        st.one_of(
            st.just("human"),
            st.lists(st.sampled_from(["c1", "c2", "c3"]), unique=True, max_size=3),
            st.sampled_from(["result:c1", "result:c2", "result:c3", "invalid:c4"]),
        ),
        max_size=12,
    )
)
def test_mend_matches_the_rule_on_any_history(script: list[Any]) -> None:
    history: list[Any] = []
    for item in script:
        if item == "human":
            history.append(HumanMessage("hi"))
        elif isinstance(item, list):
            calls = [ToolCall(id=c, name="add", args={}) for c in item]
            history.append(AIMessage("", tool_calls=calls))
        elif item.startswith("invalid:"):
            bad = InvalidToolCall(id=item[8:], name="add", args="{", error="not JSON")
            history.append(AIMessage("", invalid_tool_calls=[bad]))
        else:
            history.append(ToolMessage("ok", tool_call_id=item[7:], name="add"))
    mended = mend_tool_calls(history)
    assert [(m.type, getattr(m, "tool_call_id", None)) for m in mended] == _reference_mend(history)
    assert [m for m in mended if m.content != MISSING_TOOL_RESULT] == history


def test_model_node_sends_a_mended_history_and_stores_the_original() -> None:
    model = ScriptedChatModel(["sorry"])
    ai = AIMessage("", id="ai", tool_calls=[ToolCall(id="c1", name="add", args={"a": 1, "b": 2})])
    out = one_node(ModelNode(model, tools=[add])).invoke(
        {"messages": [HumanMessage("go", id="h"), ai, HumanMessage("stop", id="h2")]}
    )
    assert [m.type for m in model.requests[0].messages] == ["human", "ai", "tool", "human"]
    assert [m.type for m in out.messages] == ["human", "ai", "human", "ai"]


# ------------------------------------------------------------------ tools and options


def test_tools_are_passed_to_the_model_with_their_schemas() -> None:
    model = ScriptedChatModel(["ok"])
    one_node(ModelNode(model, tools=[add, shout])).invoke({"messages": [HumanMessage("hi")]})
    specs = model.requests[0].tools
    assert [s.name for s in specs] == ["add", "shout"]
    assert specs[0].description.startswith("Add two integers.")
    assert specs[0].parameters["properties"]["a"]["type"] == "integer"
    assert specs[0].parameters["properties"]["a"]["description"] == "The first addend."
    assert sorted(specs[0].parameters["required"]) == ["a", "b"]
    assert specs[1].parameters["properties"]["text"]["type"] == "string"


def test_options_reach_the_model() -> None:
    model = ScriptedChatModel(["ok"])
    options = ChatOptions(temperature=0.2, max_tokens=50, stop=["END"])
    one_node(ModelNode(model, options=options)).invoke({"messages": [HumanMessage("hi")]})
    got = model.requests[0].options
    assert (got.temperature, got.max_tokens, list(got.stop or [])) == (0.2, 50, ["END"])


# ------------------------------------------------------------------ streaming and ids


def test_reply_streams_as_tagged_token_chunks_with_the_stored_id() -> None:
    text = "The answer is forty two, as everyone knows."
    model = ScriptedChatModel([text])
    app = one_node(ModelNode(model), checkpointer=MemoryCheckpointer())
    parts = list(app.stream({"messages": [HumanMessage("?")]}, thread_id="t", mode="messages"))
    chunks = [p.data for p in parts]
    assert len(chunks) > 3
    assert all(p.node == "agent" for p in parts)
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert "".join(c.text for c in chunks) == text
    stored = app.get_state("t").values.messages[-1]
    assert stored.text == text
    assert stored.id is not None
    assert {c.id for c in chunks} == {stored.id}
    assert model.requests[0].stream


def test_reply_id_is_deterministic_for_the_same_thread_and_checkpoint() -> None:
    model = ScriptedChatModel(lambda messages: "same reply")
    app = one_node(ModelNode(model), checkpointer=MemoryCheckpointer())
    app.invoke({"messages": [HumanMessage("hi", id="h")]}, thread_id="t")
    before = next(s for s in app.get_state_history("t") if s.next == ("agent",))
    first = app.invoke(None, thread_id="t", checkpoint_id=before.checkpoint_id)
    second = app.invoke(None, thread_id="t", checkpoint_id=before.checkpoint_id)
    assert first.messages[-1].text == second.messages[-1].text == "same reply"
    assert first.messages[-1].id is not None
    assert first.messages[-1].id == second.messages[-1].id
    assert model.calls == 3


# ------------------------------------------------------------------ budget


def test_budget_stops_the_second_model_call_and_the_thread_resumes() -> None:
    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, "2 + 3 = 5"]
    )
    app = create_react_agent(model, [add], checkpointer=MemoryCheckpointer())
    with pytest.raises(BudgetExceededError):
        app.invoke(
            {"messages": [HumanMessage("2+3?")]}, thread_id="b", budget=Budget(max_model_calls=1)
        )
    assert model.calls == 1
    paused = app.get_state("b")
    assert paused.next == ("agent",)
    assert [m.type for m in paused.values.messages] == ["human", "ai", "tool"]
    out = app.invoke(None, thread_id="b", budget=Budget(max_model_calls=5))
    assert out.messages[-1].text == "2 + 3 = 5"
    assert [m.type for m in out.messages] == ["human", "ai", "tool", "ai"]
    assert model.calls == 2
