"""Sequence diagrams of a thread's conversation: who said what, tool calls linked to results."""

from __future__ import annotations

import re

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    ScriptedChatModel,
    StateGraph,
    SystemMessage,
    ToolMessage,
    create_react_agent,
    tool,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import DiagramError
from flowgraph.viz import to_mermaid_sequence
from flowgraph.viz._sequence import messages_to_sequence

_ARROW = re.compile(r"^    (\w+)(->>|-->>|--x)(\w+): (.*)$")


def arrows(text: str) -> list[tuple[str, str, str, str]]:
    return [m.groups() for line in text.splitlines() if (m := _ARROW.match(line))]  # type: ignore[misc]


def test_react_turn(react_thread):
    app, thread = react_thread
    text = to_mermaid_sequence(app, thread)
    assert text == app.to_mermaid_sequence(thread)
    assert text.splitlines()[:8] == [
        "---",
        'title: "react_agent (thread t1)"',
        "---",
        "sequenceDiagram",
        "    autonumber",
        "    actor User as User",
        "    participant Assistant as Assistant",
        "    participant get_weather as get_weather",
    ]
    assert arrows(text) == [
        ("User", "->>", "Assistant", "Weather in Paris?"),
        ("Assistant", "->>", "get_weather", 'get_weather({"city": "Paris"}) [call_1_0]'),
        ("get_weather", "-->>", "Assistant", "[call_1_0] sunny in Paris"),
        ("Assistant", "-->>", "User", "It is sunny in Paris."),
    ]


def test_call_ids_link_parallel_calls_to_their_results():
    @tool
    def lookup(q: str) -> str:
        """Look up."""
        if q == "bad":
            raise ValueError("no such thing")
        return f"found {q}"

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = ScriptedChatModel(
        [
            {
                "content": "Let me check.",
                "tool_calls": [
                    {"name": "lookup", "args": {"q": "bad"}, "id": "c1"},
                    {"name": "add", "args": {"a": 1, "b": 2}, "id": "c2"},
                ],
            },
            "Done.",
        ]
    )
    app = create_react_agent(model, [lookup, add], checkpointer=MemoryCheckpointer())
    app.invoke({"messages": [HumanMessage("go", name="ada")]}, thread_id="p")
    got = arrows(to_mermaid_sequence(app, "p"))
    assert got[0] == ("ada", "->>", "Assistant", "go")
    assert got[1] == ("Assistant", "-->>", "ada", "Let me check.")
    assert got[2] == ("Assistant", "->>", "lookup", 'lookup({"q": "bad"}) [c1]')
    assert got[3] == ("Assistant", "->>", "add", 'add({"a": 1, "b": 2}) [c2]')
    results = {g[0]: g for g in got[4:6]}
    assert results["lookup"][1] == "--x" and results["lookup"][3].startswith("[c1] ")
    assert results["add"] == ("add", "-->>", "Assistant", "[c2] 3")
    assert got[6] == ("Assistant", "-->>", "ada", "Done.")


def test_system_note_named_speakers_and_escaping():
    messages = [
        SystemMessage("Be terse; #1 rule"),
        HumanMessage("hi <b>there</b> & more\nsecond line", name="User A"),
        AIMessage("ok", name="bot"),
        AIMessage("x" * 200, name="bot"),
        ToolMessage("orphan result", tool_call_id="zz"),
    ]
    text = messages_to_sequence(messages)
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    Note over Assistant: system: Be terse#59; #35;1 rule" in lines
    assert "    actor User_A as User A" in lines
    assert "    participant bot as bot" in lines
    assert "    User_A->>Assistant: hi #lt;b#gt;there#lt;/b#gt; #amp; more second line" in lines
    long_line = next(line for line in lines if line.startswith("    bot-->>User_A: xxx"))
    assert len(long_line) < 120 and long_line.endswith("…")
    assert "    tool-->>bot: [zz] orphan result" in lines


def test_without_history_the_error_names_the_thread():
    graph = StateGraph(MessagesState)
    graph.add_node("a", lambda s: {}).add_edge(START, "a").add_edge("a", END)
    with pytest.raises(DiagramError, match="keeps no history"):
        to_mermaid_sequence(graph.compile(), "x")
    with pytest.raises(DiagramError, match="'nope' has no checkpoints") as info:
        to_mermaid_sequence(graph.compile(checkpointer=MemoryCheckpointer()), "nope")
    assert info.value.thread_id == "nope"


def test_a_state_without_messages_is_a_clear_error():
    from pydantic import BaseModel

    class Counter(BaseModel):
        n: int = 0

    graph = StateGraph(Counter)
    graph.add_node("inc", lambda s: {"n": s.n + 1}).add_edge(START, "inc").add_edge("inc", END)
    app = graph.compile(checkpointer=MemoryCheckpointer())
    app.invoke({"n": 1}, thread_id="c")
    with pytest.raises(DiagramError, match="no 'messages' field"):
        to_mermaid_sequence(app, "c")
