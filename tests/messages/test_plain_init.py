"""Messages built from plain arguments skip the validator: the result must be what it makes.

`AIMessage("done")`, `ToolMessage(text, tool_call_id=...)` and tool calls given
as dicts are set field by field (see `_init_plain`); everything else goes
through pydantic. Each case here is built both ways (the constructor, and
`model_validate` with the same data, which never takes the shortcut) and the
two must agree on every field, on the fields set, on the parts' types and on
what they dump to.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolMessage,
)
from flowgraph.messages._messages import _init_plain


def _validated(cls: type[BaseModel], content: Any, data: dict[str, Any]) -> BaseModel:
    full = dict(data)
    if content is not None:
        full["content"] = content
    return cls.model_validate(full)


def _assert_same(fast: BaseModel, slow: BaseModel) -> None:
    assert type(fast) is type(slow)
    assert fast.__dict__ == slow.__dict__
    assert list(fast.__dict__) == list(slow.__dict__)  # field order too (repr, iteration)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert repr(fast) == repr(slow)
    assert fast == slow
    content = getattr(fast, "content_blocks", None)
    if isinstance(content, list):
        for a, b in zip(content, slow.content_blocks, strict=True):  # type: ignore[attr-defined]
            _assert_same(a, b)


CALL = {"id": "call-1", "name": "lookup", "args": {"q": 1, "nested": {"x": [1, 2]}}}

PLAIN_CASES: list[tuple[type[BaseModel], Any, dict[str, Any]]] = [
    (HumanMessage, "hello", {}),
    (HumanMessage, "", {}),
    (HumanMessage, None, {}),
    (HumanMessage, "hi", {"id": "m1", "name": "ann"}),
    (HumanMessage, "hi", {"id": None, "name": None}),
    (SystemMessage, "be brief", {}),
    (AIMessage, "done", {}),
    (AIMessage, "done", {"id": "a1"}),
    (AIMessage, "", {"tool_calls": [CALL]}),
    (AIMessage, "let me look", {"tool_calls": [CALL]}),
    (AIMessage, None, {"tool_calls": [CALL]}),
    (AIMessage, "", {"tool_calls": [CALL, {**CALL, "id": "call-2"}]}),
    (AIMessage, "", {"tool_calls": [{"id": "c", "name": "n"}]}),  # no args: the default
    (AIMessage, "", {"tool_calls": [{**CALL, "type": "function"}]}),  # type is overwritten
    (AIMessage, "x", {"tool_calls": []}),
    (AIMessage, None, {"tool_calls": []}),
    (AIMessage, "", {"tool_calls": [ToolCall(**CALL)]}),  # a call taken from a message
    (AIMessage, "", {"tool_calls": [ToolCall(id="c", name="n"), {**CALL, "id": "c2"}]}),
    (ToolMessage, "result", {"tool_call_id": "call-1"}),
    (ToolMessage, "failed", {"tool_call_id": "c", "status": "error", "name": "lookup"}),
]


@pytest.mark.parametrize(("cls", "content", "data"), PLAIN_CASES)
def test_plain_arguments_take_the_shortcut_and_match_the_validator(
    cls: type[BaseModel], content: Any, data: dict[str, Any]
) -> None:
    full, args = _arguments(content, data)
    assert _init_plain(object.__new__(cls), dict(full)), "these should not need the validator"
    _assert_same(cls(*args, **data), _validated(cls, content, data))


def _arguments(content: Any, data: dict[str, Any]) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """The keyword arguments `_init_plain` sees, and the positional ones of the call."""
    full = dict(data)
    if content is not None:
        full["content"] = content
    return full, (() if content is None else (content,))


def test_tool_call_args_are_copied_as_validation_copies_them() -> None:
    args = {"q": 1}
    message = AIMessage("", tool_calls=[{"id": "c", "name": "n", "args": args}])
    part = message.content_blocks[0]
    assert isinstance(part, ToolCallPart)
    assert part.args == args and part.args is not args
    again = AIMessage("", tool_calls=message.tool_calls)  # from ToolCall views
    assert isinstance(again.content_blocks[0], ToolCallPart)
    assert again.content_blocks[0].args == args and again.content_blocks[0].args is not part.args
    assert message.tool_calls[0].args == {"q": 1}
    assert message.has_tool_calls


def test_text_and_calls_keep_their_order() -> None:
    message = AIMessage("let me look", tool_calls=[CALL])
    assert [type(p) for p in message.content_blocks] == [TextPart, ToolCallPart]
    assert message.text == "let me look"


class _Str(str):
    pass


OTHER_CASES: list[tuple[type[BaseModel], Any, dict[str, Any]]] = [
    (HumanMessage, _Str("sub"), {}),  # a str subclass: pydantic decides what it becomes
    (HumanMessage, ["a", "b"], {}),  # parts from strings
    (HumanMessage, "hi", {"metadata": {"k": 1}}),
    (AIMessage, "", {"tool_calls": ({**CALL},)}),  # a tuple of calls
    (AIMessage, "hi", {"usage": {"input_tokens": 1}}),
    (ToolMessage, "r", {"tool_call_id": "c", "artifact": [1, 2]}),
]


@pytest.mark.parametrize(("cls", "content", "data"), OTHER_CASES)
def test_other_arguments_go_through_the_validator(
    cls: type[BaseModel], content: Any, data: dict[str, Any]
) -> None:
    full, args = _arguments(content, data)
    assert not _init_plain(object.__new__(cls), full)
    assert full == {**data, **({"content": content} if content is not None else {})}
    _assert_same(cls(*args, **data), _validated(cls, content, data))


@pytest.mark.parametrize(
    ("cls", "content", "data"),
    [
        (HumanMessage, "hi", {"unknown": "x"}),
        (HumanMessage, 5, {}),
        (ToolMessage, "r", {}),  # tool_call_id is required
        (ToolMessage, "r", {"tool_call_id": "c", "status": "maybe"}),
        (AIMessage, "", {"tool_calls": [{"id": "c"}]}),  # no name
        (AIMessage, "", {"tool_calls": [{"id": 1, "name": "n"}]}),
        (AIMessage, "", {"tool_calls": [{"id": "c", "name": "n", "extra": 1}]}),
        (AIMessage, "", {"tool_calls": "not a list"}),
        (AIMessage, "", {"tool_calls": [{**CALL, "args": {1: "non-str key"}}]}),
    ],
)
def test_invalid_arguments_still_fail_as_the_validator_says(
    cls: type[BaseModel], content: Any, data: dict[str, Any]
) -> None:
    with pytest.raises((ValidationError, ValueError)) as fast:
        cls(content, **data)
    with pytest.raises((ValidationError, ValueError)) as slow:
        _validated(cls, content, data)
    assert str(fast.value) == str(slow.value)


def test_a_subclass_of_a_message_is_always_validated() -> None:
    class Tagged(HumanMessage):
        tag: str = "none"

    probe = object.__new__(Tagged)
    assert not _init_plain(probe, {"content": "hi"})
    message = Tagged("hi", tag="x")
    assert message.tag == "x" and message.content == "hi"


texts = st.text(max_size=8)
optional = st.none() | texts
args_values = st.recursive(
    st.none() | st.integers() | texts, lambda inner: st.lists(inner, max_size=2), max_leaves=4
)
calls = st.fixed_dictionaries(
    {"id": texts, "name": texts},
    optional={"args": st.dictionaries(texts, args_values, max_size=3)},
)


@given(content=texts, calls=st.lists(calls, max_size=3), message_id=optional, name=optional)
def test_any_plain_ai_message_matches_the_validator(
    content: str, calls: list[dict[str, Any]], message_id: str | None, name: str | None
) -> None:
    data: dict[str, Any] = {"tool_calls": calls, "id": message_id, "name": name}
    _assert_same(AIMessage(content, **data), _validated(AIMessage, content, data))


@given(content=texts, call_id=texts, status=st.sampled_from(["success", "error"]))
def test_any_plain_tool_message_matches_the_validator(
    content: str, call_id: str, status: str
) -> None:
    data = {"tool_call_id": call_id, "status": status}
    _assert_same(ToolMessage(content, **data), _validated(ToolMessage, content, data))
