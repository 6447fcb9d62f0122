"""The message timeline of one ReAct agent run, end to end.

A system prompt, a user with a speaker name, a model turn asking for two
tools in parallel, one tool that succeeds with an artifact and one that
fails, and the final answer: built the way a run builds it (add_messages
under deterministic ids), inspected field by field, sent through the OpenAI
format and back, and through the checkpoint codec.
"""

from __future__ import annotations

import json
from typing import Any

from flowgraph._context import message_id_factory
from flowgraph._ids import deterministic_id_factory
from flowgraph.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolCallPart,
    ToolMessage,
    Usage,
    from_openai,
    messages_from_dicts,
    messages_to_dicts,
    to_openai,
)
from flowgraph.reducers import add_messages

ARTIFACT = {"city": "Paris", "temp_c": 18.5, "hourly": [17, 18, 19], "source": "meteo"}


def step_update(step: int, node: str, update: list[Any], history: list[Any]) -> list[Any]:
    """Merge one node's update as the engine does: ids deterministic per (thread, step, task)."""
    task = {"__input__": 0, "agent": 0, "tools": 1}[node]
    token = message_id_factory.set(deterministic_id_factory("thread-1", step, task))
    try:
        return add_messages(history, update)
    finally:
        message_id_factory.reset(token)


def build_timeline() -> list[Any]:
    history = step_update(
        0,
        "__input__",
        [
            SystemMessage("You are a weather assistant.", id="sys-1", name="weather_policy"),
            HumanMessage("Weather in Paris and Tokyo?", name="User_A"),
        ],
        [],
    )
    history = step_update(
        1,
        "agent",
        [
            AIMessage(
                tool_calls=[
                    ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
                    ToolCall(
                        id="call_tokyo", name="get_weather", args={"city": "Tokyo", "unit": "C"}
                    ),
                ],
                usage=Usage(input_tokens=120, output_tokens=38),
                response_metadata={
                    "finish_reason": "tool_calls",
                    "model_name": "gpt-4o-mini",
                    "id": "chatcmpl-1",
                },
            )
        ],
        history,
    )
    history = step_update(
        2,
        "tools",
        [
            ToolMessage(
                "18.5°C, sunny", tool_call_id="call_paris", name="get_weather", artifact=ARTIFACT
            ),
            ToolMessage(
                "Error: TimeoutError('weather service did not answer in 5s')",
                tool_call_id="call_tokyo",
                name="get_weather",
                status="error",
            ),
        ],
        history,
    )
    return step_update(
        3,
        "agent",
        [
            AIMessage(
                "Paris: 18.5°C and sunny. Tokyo's weather is unavailable right now.",
                usage=Usage(input_tokens=210, output_tokens=21, cached_tokens=100),
                response_metadata={"finish_reason": "stop", "model_name": "gpt-4o-mini"},
            )
        ],
        history,
    )


def test_timeline_fields() -> None:
    timeline = build_timeline()
    system, human, call, paris, tokyo, answer = timeline
    assert [type(m) for m in timeline] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        AIMessage,
    ]

    assert (system.id, system.name, system.content) == (
        "sys-1",
        "weather_policy",
        "You are a weather assistant.",
    )
    assert (human.name, human.text, human.type) == (
        "User_A",
        "Weather in Paris and Tokyo?",
        "human",
    )

    assert call.text == ""
    assert call.content_blocks == [
        ToolCallPart(id="call_paris", name="get_weather", args={"city": "Paris"}),
        ToolCallPart(id="call_tokyo", name="get_weather", args={"city": "Tokyo", "unit": "C"}),
    ]
    assert call.tool_calls == [
        ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
        ToolCall(id="call_tokyo", name="get_weather", args={"city": "Tokyo", "unit": "C"}),
    ]
    assert call.has_tool_calls
    assert call.invalid_tool_calls == []
    assert call.usage == Usage(input_tokens=120, output_tokens=38, total_tokens=158)
    assert call.response_metadata["finish_reason"] == "tool_calls"

    assert [t.tool_call_id for t in (paris, tokyo)] == [c.id for c in call.tool_calls]
    assert (paris.status, paris.artifact, paris.text) == ("success", ARTIFACT, "18.5°C, sunny")
    assert (tokyo.status, tokyo.artifact) == ("error", None)
    assert tokyo.text.startswith("Error: TimeoutError")

    assert answer.tool_calls == []
    assert not answer.has_tool_calls
    assert answer.response_metadata == {"finish_reason": "stop", "model_name": "gpt-4o-mini"}
    assert answer.usage is not None
    assert (answer.usage.total_tokens, answer.usage.cached_tokens) == (231, 100)
    assert sum((m.usage for m in (call, answer)), Usage()).total_tokens == 389


def test_timeline_ids_are_unique_and_deterministic() -> None:
    first, second = build_timeline(), build_timeline()
    assert first == second
    ids = [m.id for m in first]
    assert ids[0] == "sys-1"
    assert None not in ids
    assert len(set(ids)) == len(ids)
    # a retried step re-emits its update with the same ids: merging it changes nothing
    last = first[-1]
    retry = AIMessage(last.content, usage=last.usage, response_metadata=last.response_metadata)
    assert step_update(3, "agent", [retry], first) == first


EXPECTED_OPENAI = [
    {"role": "system", "content": "You are a weather assistant.", "name": "weather_policy"},
    {"role": "user", "content": "Weather in Paris and Tokyo?", "name": "User_A"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_paris",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "call_tokyo",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Tokyo","unit":"C"}'},
            },
        ],
    },
    {
        "role": "tool",
        "content": "18.5°C, sunny",
        "name": "get_weather",
        "tool_call_id": "call_paris",
    },
    {
        "role": "tool",
        "content": "Error: TimeoutError('weather service did not answer in 5s')",
        "name": "get_weather",
        "tool_call_id": "call_tokyo",
    },
    {
        "role": "assistant",
        "content": "Paris: 18.5°C and sunny. Tokyo's weather is unavailable right now.",
    },
]


def without_what_openai_drops(message: BaseMessage) -> BaseMessage:
    """The message as Chat Completions can carry it: no id, metadata, usage, status, artifact."""
    dropped: dict[str, Any] = {"id": None, "metadata": {}}
    if isinstance(message, AIMessage):
        dropped |= {"usage": None, "response_metadata": {}}
    if isinstance(message, ToolMessage):
        dropped |= {"status": "success", "artifact": None}
    return message.model_copy(update=dropped)


def test_timeline_to_openai_and_back() -> None:
    timeline = build_timeline()
    wire = to_openai(timeline)
    assert wire == EXPECTED_OPENAI
    assert json.loads(json.dumps(wire)) == wire

    back = from_openai(wire)
    assert back == [without_what_openai_drops(m) for m in timeline]
    # what survives: roles, speaker names, text, tool calls and their pairing
    assert [m.name for m in back] == [m.name for m in timeline]
    assert [m.text for m in back] == [m.text for m in timeline]
    assert back[2].tool_calls == timeline[2].tool_calls  # type: ignore[union-attr]  # AIMessages
    assert [m.tool_call_id for m in back[3:5]] == ["call_paris", "call_tokyo"]  # type: ignore[union-attr]
    # what does not: the error status, the artifact, usage, ids
    assert back[4].status == "success"  # type: ignore[union-attr]  # a ToolMessage
    assert back[3].artifact is None  # type: ignore[union-attr]  # a ToolMessage
    assert back[2].usage is None and back[2].response_metadata == {}  # type: ignore[union-attr]
    assert all(m.id is None for m in back)
    # merged back into the run's history by id, nothing is duplicated
    assert to_openai(from_openai(wire)) == wire


def test_timeline_through_dicts() -> None:
    timeline = build_timeline()
    assert messages_from_dicts(messages_to_dicts(timeline)) == timeline


def test_timeline_mixed_openai_and_native_input_coerces_into_the_same_history() -> None:
    """A caller may hand the run an OpenAI transcript: it coerces to the same messages."""
    timeline = build_timeline()
    wire_with_ids = [{**d, "id": m.id} for d, m in zip(EXPECTED_OPENAI, timeline, strict=True)]
    merged = add_messages([], wire_with_ids)
    assert [m.id for m in merged] == [m.id for m in timeline]
    assert merged == [
        without_what_openai_drops(m).model_copy(update={"id": m.id}) for m in timeline
    ]


def test_timeline_through_the_checkpoint_codec() -> None:
    """Written last: the codec (flowgraph.checkpoint.serde) round-trips the timeline exactly."""
    from flowgraph.checkpoint import serde

    timeline = build_timeline()
    data = serde.dumps(timeline)
    assert isinstance(data, bytes)
    restored = serde.loads(data)
    assert restored == timeline
    assert [type(m) for m in restored] == [type(m) for m in timeline]
    assert restored[3].artifact == ARTIFACT
    assert restored[4].status == "error"
    assert restored[2].usage == timeline[2].usage
    assert restored[2].tool_calls == timeline[2].tool_calls

    state = {"messages": timeline, "persona": "assistant", "step": 3}
    assert serde.loads(serde.dumps(state)) == state
