"""The unvalidated copies must equal what pydantic itself would build.

`with_new_id` copies a message without validation, and `AIMessage.tool_calls`
builds its ToolCall views from each part's fields; both are compared here
with `model_validate` and `model_copy` results: fields, fields set, slots,
dumps and repr.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from flowgraph._context import message_id_factory
from flowgraph._ids import StepIds, with_new_id
from flowgraph.messages import AIMessage, HumanMessage, ToolCall, ToolCallPart, ToolMessage


def _assert_same(fast: BaseModel, slow: BaseModel) -> None:
    assert type(fast) is type(slow)
    assert fast.__dict__ == slow.__dict__
    assert list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast.model_dump_json() == slow.model_dump_json()
    assert repr(fast) == repr(slow)
    assert fast == slow


def _in_run(message: Any) -> Any:
    token = message_id_factory.set(StepIds("k", 3, 1))
    try:
        return with_new_id(message)
    finally:
        message_id_factory.reset(token)


CALL = {"id": "call-1", "name": "lookup", "args": {"q": 1}}


def test_with_new_id_matches_a_validated_message_with_that_id() -> None:
    for message in (
        HumanMessage("hi", name="ann"),
        AIMessage("", tool_calls=[CALL]),
        ToolMessage("result", tool_call_id="call-1", status="error"),
    ):
        copy = _in_run(message)
        assert copy.id == "k-3-1-0" and message.id is None
        data = message.model_dump(exclude_unset=True)
        _assert_same(copy, type(message).model_validate({**data, "id": "k-3-1-0"}))
        _assert_same(copy, message.model_copy(update={"id": "k-3-1-0"}))


def test_with_new_id_keeps_extra_fields_and_private_attributes() -> None:
    class Loose(HumanMessage):
        model_config = ConfigDict(extra="allow")

    class Private(HumanMessage):
        _seen: int = PrivateAttr(default=7)

    loose = Loose.model_validate({"content": "hi", "mood": "calm"})
    copy = _in_run(loose)
    assert copy.__pydantic_extra__ == {"mood": "calm"}
    _assert_same(copy, loose.model_copy(update={"id": "k-3-1-0"}))

    private = Private("hi")
    copy = _in_run(private)
    assert copy._seen == 7
    _assert_same(copy, private.model_copy(update={"id": "k-3-1-0"}))


def test_tool_call_views_match_validated_tool_calls() -> None:
    message = AIMessage("look", tool_calls=[CALL, {"id": "c2", "name": "n"}])
    views = message.tool_calls
    assert [call.id for call in views] == ["call-1", "c2"]
    parts = [p for p in message.content_blocks if isinstance(p, ToolCallPart)]
    for view, part in zip(views, parts, strict=True):
        data = {"id": part.id, "name": part.name, "args": part.args}
        _assert_same(view, ToolCall.model_validate(data))
