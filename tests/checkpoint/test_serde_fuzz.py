"""Properties of the codec over generated values, and loads fuzzed with hostile bytes.

- `loads(dumps(x))` is `x`, with exact types, for generated messages, registered
  models and nested states of every supported type;
- `loads` of any bytes at all either returns a value or raises
  DeserializationError: arbitrary binary, valid payloads with bytes flipped,
  cut, inserted or deleted, and (past the checksum) bodies that are random
  msgpack or mutated valid bodies with their CRC fixed up;
- what `loads` returns from such a body is well formed: every message and
  part validates as its class and the value can be dumped again.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import msgpack
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from flowgraph.checkpoint import serde
from flowgraph.errors import DeserializationError
from flowgraph.messages import (
    AIMessage,
    AudioPart,
    BaseMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    Usage,
    VideoPart,
)
from flowgraph.reducers import MessageList
from flowgraph.state import MessagesState

from .test_serde import ChatState, Holder, Note, Priority, Status, assert_same, with_header

FUZZ = settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- values --------------------------------------------------------------------------------

short_text = st.text(max_size=12)
offsets = st.timedeltas(
    min_value=dt.timedelta(hours=-23, minutes=-59), max_value=dt.timedelta(hours=23, minutes=59)
)
fixed_zones = st.builds(dt.timezone, offsets) | st.builds(
    dt.timezone, offsets, short_text.filter(bool)
)
zones = st.none() | fixed_zones | st.timezones()
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
hashables = st.recursive(
    scalars.filter(lambda v: v == v) | st.uuids() | st.dates(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=6,
)
stdlib = (
    st.datetimes(timezones=zones)
    | st.dates()
    | st.times(timezones=st.none() | fixed_zones)
    | st.timedeltas()
    | st.uuids()
    | st.decimals()
    | st.sampled_from([*Status, *Priority])
)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | short_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short_text, inner, max_size=3),
    max_leaves=8,
)

ids = st.none() | short_text
media_sources = st.one_of(
    st.fixed_dictionaries({"url": short_text}),
    st.fixed_dictionaries({"data": st.binary(max_size=40), "mime_type": st.just("image/png")}),
)


def _media(cls: type[BaseModel], **extra: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        lambda source, fields: cls(**source, **fields),
        media_sources,
        st.fixed_dictionaries({}, optional=extra),
    )


user_parts = st.one_of(
    st.builds(TextPart, text=st.text(max_size=20)),
    st.builds(ReasoningPart, text=short_text, signature=st.none() | short_text),
    _media(ImagePart, detail=st.sampled_from(["auto", "low", "high"])),
    _media(AudioPart),
    _media(VideoPart),
    _media(FilePart, filename=short_text),
)
ai_parts = user_parts | st.builds(
    ToolCallPart,
    id=short_text,
    name=short_text,
    args=st.dictionaries(short_text, json_like, max_size=3),
)


notes = st.builds(
    Note,
    text=short_text,
    pinned=st.booleans(),
    tags=st.lists(short_text, max_size=2),
    when=st.none() | st.datetimes(timezones=zones),
    extra=st.dictionaries(short_text, json_like, max_size=2),
    status=st.sampled_from(Status),
)
metadata = st.dictionaries(short_text, json_like | stdlib | notes, max_size=3)


def _content(parts: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.text(max_size=40) | st.lists(parts, max_size=4)


messages = st.one_of(
    st.builds(SystemMessage, content=_content(user_parts), id=ids, name=ids, metadata=metadata),
    st.builds(HumanMessage, content=_content(user_parts), id=ids, name=ids, metadata=metadata),
    st.builds(
        AIMessage,
        content=_content(ai_parts),
        id=ids,
        name=ids,
        metadata=metadata,
        invalid_tool_calls=st.lists(
            st.builds(InvalidToolCall, id=ids, name=ids, args=short_text, error=short_text),
            max_size=2,
        ),
        usage=st.none()
        | st.builds(
            Usage,
            input_tokens=st.integers(0, 10**6),
            output_tokens=st.integers(0, 10**6),
            cached_tokens=st.none() | st.integers(0, 10**6),
            reasoning_tokens=st.none() | st.integers(0, 10**6),
        ),
        response_metadata=st.dictionaries(short_text, json_like, max_size=3),
    ),
    st.builds(
        ToolMessage,
        content=_content(user_parts),
        id=ids,
        name=ids,
        metadata=metadata,
        tool_call_id=short_text,
        status=st.sampled_from(["success", "error"]),
        artifact=json_like | stdlib | notes,
    ),
    st.builds(RemoveMessage, id=short_text),
)
values = st.recursive(
    scalars | stdlib | messages | notes,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(hashables, inner, max_size=4),
        st.sets(hashables, max_size=4),
        st.frozensets(hashables, max_size=4),
        st.lists(messages, max_size=4).map(MessageList),
    ),
    max_leaves=20,
)


@PROPERTY
@given(values)
def test_loads_of_dumps_is_the_value_with_its_exact_types(value: object) -> None:
    assert_same(serde.loads(serde.dumps(value)), value)


@PROPERTY
@given(st.lists(messages, max_size=12))
def test_message_histories_round_trip(history: list[Any]) -> None:
    assert_same(serde.loads(serde.dumps(history)), history)
    assert_same(serde.loads(serde.dumps(MessageList(history))), MessageList(history))
    state = MessagesState(messages=history)
    assert_same(serde.loads(serde.dumps(state)), state)


@PROPERTY
@given(st.lists(messages | notes | scalars, max_size=6))
def test_a_message_list_holding_other_values_loads_as_a_plain_list(items: list[Any]) -> None:
    listed = MessageList(items)
    only_messages = all(isinstance(item, (BaseMessage, RemoveMessage)) for item in items)
    expected = {"a": listed if only_messages else items, "b": items, "c": Holder(item=items)}
    value = {"a": listed, "b": items, "c": Holder(item=items)}
    assert_same(serde.loads(serde.dumps(value)), expected)


@PROPERTY
@given(
    st.builds(
        ChatState,
        messages=st.lists(messages, max_size=6),
        persona=short_text,
        notes=st.lists(short_text, max_size=3),
        turns=st.integers(0, 10),
    ),
    st.dictionaries(short_text, values, max_size=3),
)
def test_nested_states_round_trip(state: ChatState, channels: dict[str, Any]) -> None:
    checkpoint = {"v": 1, "values": {"state": state, **channels}, "step": 3, "next": ("a", "b")}
    assert_same(serde.loads(serde.dumps(checkpoint)), checkpoint)


# --- fuzzing -------------------------------------------------------------------------------


def _loads_or_refuses(data: bytes) -> object:
    """loads either returns or raises DeserializationError; returns None when it refused."""
    try:
        return serde.loads(data)
    except DeserializationError:
        return None


def _assert_well_formed(value: object) -> None:
    """Every message or part in `value` is a valid instance, and the value dumps again."""
    serde.dumps(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            if type(item).__module__.startswith("flowgraph.messages"):
                type(item).model_validate(item.model_dump())
            stack.extend(item.__dict__.values())
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)


SAMPLE = {
    "messages": MessageList(
        [
            SystemMessage("sys", id="s"),
            HumanMessage(
                [TextPart("look"), ImagePart(data=b"\x89PNG....", mime_type="image/png")], id="h"
            ),
            AIMessage(
                [
                    ReasoningPart("hm"),
                    ToolCallPart(id="c", name="f", args={"x": [1, 2]}),
                    TextPart("ok"),
                ],
                id="a",
                usage=Usage(input_tokens=3, output_tokens=4),
                response_metadata={"finish_reason": "tool_calls"},
            ),
            ToolMessage("r", id="t", tool_call_id="c", status="error", artifact=(1, {2})),
        ]
    ),
    "listed": [HumanMessage("x", id="x"), RemoveMessage("x")],
    "misc": (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), Decimal("1.5"), 2**70, frozenset({"a"})),
    "state": MessagesState(messages=[AIMessage("hi", id="y")]),
    "enum": Status.DONE,
}
VALID = serde.dumps(SAMPLE)
BODY = VALID[8:]


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_refused(data: bytes) -> None:
    _loads_or_refuses(data)


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bodies_past_the_checksum_are_refused_or_well_formed(body: bytes) -> None:
    loaded = _loads_or_refuses(with_header(body))
    if loaded is not None:
        _assert_well_formed(loaded)


mutations = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, len(VALID) - 1), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, len(VALID) - 1), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, len(VALID)), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, len(VALID) - 1), st.integers(1, 16)),
)


def _mutate(data: bytes, mutation: tuple[str, int, int]) -> bytes:
    kind, at, arg = mutation
    at = at % (len(data) + (kind == "insert")) if data else 0
    if not data and kind != "insert":
        return data
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ arg]) + data[at + 1 :]
    if kind == "cut":
        return data[:at]
    if kind == "insert":
        return data[:at] + bytes([arg]) + data[at:]
    return data[:at] + data[at + arg :]


@FUZZ
@given(st.lists(mutations, min_size=1, max_size=3))
def test_mutated_payloads_are_refused(changes: list[tuple[str, int, int]]) -> None:
    data = VALID
    for change in changes:
        data = _mutate(data, change)
    assume(data != VALID)
    assert _loads_or_refuses(data) is None


@FUZZ
@given(st.lists(mutations, min_size=1, max_size=3))
def test_mutated_bodies_with_a_fixed_checksum_are_refused_or_well_formed(
    changes: list[tuple[str, int, int]],
) -> None:
    body = BODY
    for change in changes:
        body = _mutate(body, change)
    loaded = _loads_or_refuses(with_header(body))
    if loaded is not None:
        _assert_well_formed(loaded)


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.sampled_from(["projects.Project", f"{Note.__module__}.Note", "success", "image"]),
    lambda inner: st.one_of(
        st.lists(inner, max_size=8),
        st.dictionaries(st.text(max_size=6) | st.integers(0, 3), inner, max_size=4),
        st.builds(
            lambda code, payload: msgpack.ExtType(code, msgpack.packb(payload)),
            st.integers(0, 40),
            inner,
        ),
        st.builds(
            lambda code, raw: msgpack.ExtType(code, raw),
            st.integers(0, 40),
            st.binary(max_size=20),
        ),
    ),
    max_leaves=25,
)


@FUZZ
@given(msgpack_values)
def test_random_msgpack_with_our_type_codes_is_refused_or_well_formed(body: object) -> None:
    loaded = _loads_or_refuses(with_header(msgpack.packb(body)))
    if loaded is not None:
        _assert_well_formed(loaded)
