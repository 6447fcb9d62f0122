"""The checkpoint codec: exact round trips, registration, schema evolution, errors, envelope."""

from __future__ import annotations

import base64
import datetime as dt
import doctest
import enum
import math
import struct
import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import msgpack
import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from flowgraph.checkpoint import serde
from flowgraph.checkpoint._codec import core as _codec
from flowgraph.checkpoint._codec import models as _codec_models
from flowgraph.errors import DeserializationError, SerializationError
from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AIMessage,
    AudioPart,
    FilePart,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolMessage,
    Usage,
    VideoPart,
    messages_to_dicts,
)
from flowgraph.reducers import MessageList, add_messages
from flowgraph.state import MessagesState

PNG = bytes(range(256)) * 4


def assert_same(loaded: object, original: object, where: str = "value") -> None:
    """Equal, and of exactly the same types all the way down (== alone lets 1 == 1.0 == True)."""
    assert type(loaded) is type(original), f"{where}: {type(loaded)} != {type(original)}"
    if isinstance(original, dict):
        assert isinstance(loaded, dict)
        assert len(loaded) == len(original), where
        for (key, value), (okey, ovalue) in zip(loaded.items(), original.items(), strict=True):
            assert_same(key, okey, f"{where} key")
            assert_same(value, ovalue, f"{where}[{okey!r}]")
    elif isinstance(original, (list, tuple)):
        assert isinstance(loaded, (list, tuple))
        assert len(loaded) == len(original), where
        for i, (item, oitem) in enumerate(zip(loaded, original, strict=True)):
            assert_same(item, oitem, f"{where}[{i}]")
    elif isinstance(original, (set, frozenset)):
        assert {(type(x), x) for x in loaded} == {(type(x), x) for x in original}, where  # type: ignore[attr-defined]
    elif isinstance(original, float):
        assert isinstance(loaded, float)
        if math.isnan(original):
            assert math.isnan(loaded), where
        else:
            assert loaded == original and math.copysign(1, loaded) == math.copysign(1, original)
    elif isinstance(original, Decimal):
        assert str(loaded) == str(original), where
    elif isinstance(original, (dt.datetime, dt.time)):
        assert loaded == original, where
        assert loaded.utcoffset() == original.utcoffset(), where  # type: ignore[union-attr]
        assert loaded.fold == original.fold, where  # type: ignore[union-attr]
        assert loaded.tzinfo == original.tzinfo, where  # type: ignore[union-attr]
    elif isinstance(original, BaseModel):  # field by field: NaN != NaN would fail ==
        assert isinstance(loaded, BaseModel)
        assert_same(loaded.__dict__, original.__dict__, where)
        assert_same(loaded.__pydantic_extra__ or {}, original.__pydantic_extra__ or {}, where)
    else:
        assert loaded == original, where


def round_trip(value: object) -> Any:
    loaded = serde.loads(serde.dumps(value))
    assert_same(loaded, value)
    return loaded


@pytest.fixture
def registry() -> Iterator[None]:
    """Registrations made inside a test are gone after it, as in a fresh process."""
    saved = (
        dict(_codec_models._BY_NAME),
        dict(_codec_models._BY_CLASS),
        dict(_codec.ENCODERS),
    )
    yield
    for current, old in zip(
        (_codec_models._BY_NAME, _codec_models._BY_CLASS, _codec.ENCODERS), saved, strict=True
    ):
        current.clear()
        current.update(old)  # type: ignore[arg-type]


# --- registered test classes ------------------------------------------------------------


@serde.register
class Status(enum.Enum):
    OPEN = "open"
    DONE = "done"


@serde.register
class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


@serde.register
class Color(enum.StrEnum):
    RED = "red"


@serde.register
class Perm(enum.Flag):
    R = 1
    W = 2


@serde.register
class Note(BaseModel):
    text: str
    pinned: bool = False
    tags: list[str] = []
    when: dt.datetime | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    status: Status = Status.OPEN


@serde.register
class Person(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    born: dt.date


@serde.register(name="projects.Project")
class Project(BaseModel):
    owner: Person
    notes: list[Note] = Field(default_factory=list)
    members: frozenset[str] = frozenset()
    budget: Decimal = Decimal("0")
    priority: Priority = Priority.LOW


@serde.register
class Tree(BaseModel):
    label: str
    children: list[Tree] = []


@serde.register
class Holder(BaseModel):
    item: Any = None


class ChatState(MessagesState):
    persona: str = "assistant"
    notes: list[str] = []  # noqa: RUF012 - a pydantic field; pydantic copies the default
    turns: int = 0


serde.register(ChatState)


class Unregistered(BaseModel):
    x: int = 1


class UnregisteredEnum(enum.Enum):
    A = 1


@dataclass
class Point:
    x: int


def test_the_module_docstring_example_runs() -> None:
    result = doctest.testmod(serde, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- plain values -------------------------------------------------------------------------

PLAIN_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    10**100,
    -(10**100),
    1.5,
    -0.0,
    math.inf,
    "",
    "héllo ✓ 中文",
    "lone \ud800 surrogate",
    b"",
    b"\x00\xff" * 10,
    [],
    [1, [2, [3.0]]],
    {},
    {"a": 1, 2: "b", None: 0, (1, "t"): [()], b"k": 1.0, frozenset({1}): {2}},
    (),
    (1,),
    ((1, 2), [3, (4,)], {"t": (5,)}),
    set(),
    {1, "a", (2, 3), frozenset({4})},
    frozenset(),
    frozenset({(1, 2), "x"}),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    Decimal("1.50"),
    Decimal("-0"),
    Decimal("NaN"),
    Decimal("-Infinity"),
    Decimal("1E+999999"),
    Decimal("3.14159265358979323846264338327950288419716939937510"),
    dt.date(2024, 2, 29),
    dt.date.min,
    dt.timedelta(days=-3, seconds=5, microseconds=7),
    dt.timedelta.max,
    dt.timedelta.min,
    dt.time(23, 59, 59, 999999),
    dt.time(1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=-3, minutes=-30))),
    dt.time(1, 2, fold=1),
    [Status.DONE, Priority.HIGH, Color.RED, Perm.R | Perm.W, Perm(0)],
    {"nested": [{"deep": ({"er": [frozenset({(1, (2, 3))})]},)}]},
]


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=lambda v: type(v).__name__)
def test_plain_values_round_trip_with_their_exact_types(value: object) -> None:
    round_trip(value)


DATETIMES = [
    dt.datetime(2024, 5, 1, 12, 34, 56, 789012),
    dt.datetime(2024, 10, 27, 2, 30, fold=1),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=1, seconds=7))),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(microseconds=-1))),
    dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-5), "EST")),
    dt.datetime(2024, 7, 1, 9, tzinfo=ZoneInfo("Europe/Paris")),
    dt.datetime(2024, 10, 27, 2, 30, tzinfo=ZoneInfo("Europe/Paris")),
    dt.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=ZoneInfo("Europe/Paris")),
    dt.datetime.min,
    dt.datetime.max.replace(tzinfo=dt.timezone(dt.timedelta(hours=-23, minutes=-59))),
]


@pytest.mark.parametrize("value", DATETIMES, ids=str)
def test_datetimes_keep_their_offset_zone_and_fold(value: dt.datetime) -> None:
    loaded = round_trip(value)
    assert loaded.tzname() == value.tzname()
    assert loaded.replace(tzinfo=None) == value.replace(tzinfo=None)  # same wall time


def test_a_zoneinfo_zone_comes_back_as_the_same_zone() -> None:
    value = dt.datetime(2024, 3, 30, 12, tzinfo=ZoneInfo("Europe/Paris"))
    loaded = round_trip(value)
    assert isinstance(loaded.tzinfo, ZoneInfo) and loaded.tzinfo.key == "Europe/Paris"
    # It keeps the zone's rules: a day later is after the DST change.
    assert (loaded + dt.timedelta(days=1)).utcoffset() == dt.timedelta(hours=2)


def _paris_file() -> Path:
    import zoneinfo

    for root in zoneinfo.TZPATH:
        path = Path(root, "Europe", "Paris")
        if path.is_file():
            return path
    pytest.skip("no system time zone database")


def test_a_zone_unknown_where_loaded_falls_back_to_its_fixed_offset() -> None:
    with _paris_file().open("rb") as file:
        zone = ZoneInfo.from_file(file, key="Mars/Olympus_Mons")
    value = dt.datetime(2024, 7, 1, 9, tzinfo=zone)
    loaded = serde.loads(serde.dumps(value))
    assert loaded == value  # the same instant
    assert loaded.tzinfo == dt.timezone(dt.timedelta(hours=2))


def test_a_zone_whose_rules_differ_where_loaded_keeps_the_instant() -> None:
    with _paris_file().open("rb") as file:
        zone = ZoneInfo.from_file(file, key="America/New_York")  # Paris rules, New York's name
    value = dt.datetime(2024, 7, 1, 9, tzinfo=zone)
    loaded = serde.loads(serde.dumps(value))
    assert loaded == value and loaded.utcoffset() == dt.timedelta(hours=2)


class _Plus90Minutes(dt.tzinfo):
    def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(minutes=90)

    def dst(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)


def test_other_tzinfo_classes_come_back_as_their_fixed_offset() -> None:
    value = dt.datetime(2024, 1, 1, tzinfo=_Plus90Minutes())
    loaded = serde.loads(serde.dumps(value))
    assert loaded == value
    assert loaded.tzinfo == dt.timezone(dt.timedelta(minutes=90))


class _NoOffset(dt.tzinfo):
    def utcoffset(self, when: dt.datetime | None) -> None:
        return None


def test_a_tzinfo_without_an_offset_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError, match="gives no UTC offset") as info:
        serde.dumps({"at": dt.datetime(2024, 1, 1, tzinfo=_NoOffset())})
    assert info.value.path == "at"


def test_a_time_with_a_zone_rule_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError, match="fixed-offset") as info:
        serde.dumps([dt.time(1, tzinfo=ZoneInfo("Europe/Paris"))])
    assert info.value.path == "[0]"


def test_a_big_int_costs_only_its_bytes() -> None:
    assert len(serde.dumps(2**64)) < len(serde.dumps(str(2**64)))


# --- messages ---------------------------------------------------------------------------------


def _every_message() -> list[Any]:
    image = ImagePart(data=PNG, mime_type="image/png", detail="high")
    return [
        SystemMessage("You are terse.", id="sys", name="planner", metadata={"v": (1, 2)}),
        HumanMessage(
            [
                TextPart("What is in these?"),
                image,
                ImagePart(url="https://example.com/cat.png", detail="low"),
                AudioPart(data=b"RIFF....WAVE", mime_type="audio/wav"),
                VideoPart(url="file:///tmp/clip.mp4", mime_type="video/mp4"),
                FilePart(data=b"%PDF-1.7 ...", mime_type="application/pdf", filename="a.pdf"),
            ],
            id="h1",
            name="User_A",
            metadata={"at": dt.datetime(2024, 5, 1, tzinfo=dt.UTC), "ids": {uuid.UUID(int=7)}},
        ),
        AIMessage(
            [
                ReasoningPart("First I look.", signature="sig=="),
                ToolCallPart(id="c1", name="search", args={"q": "cats", "n": 3}),
                TextPart("Searching; meanwhile:"),
                ReasoningPart("Then I answer."),
                ToolCallPart(id="c2", name="fetch", args={}),
                TextPart(" done."),
                image,
            ],
            id="a1",
            invalid_tool_calls=[InvalidToolCall(id="c3", name="x", args="{oops", error="bad")],
            usage=Usage(input_tokens=10, output_tokens=5, cached_tokens=2, reasoning_tokens=1),
            response_metadata={"finish_reason": "tool_calls", "model_name": "m", "id": "r1"},
        ),
        ToolMessage(
            "3 cats",
            id="t1",
            tool_call_id="c1",
            artifact={"rows": [(1, "tom"), (2, "kit")], "raw": b"\x00", "note": Note(text="n")},
        ),
        ToolMessage("boom", id="t2", tool_call_id="c2", status="error", name="fetch"),
        AIMessage("It is a cat.", id="a2"),
        AIMessage("", tool_calls=[ToolCall(id="c4", name="f", args={"a": [1]})], id="a3"),
        RemoveMessage("h1"),
        RemoveMessage(REMOVE_ALL_MESSAGES),
    ]


def test_every_message_and_part_round_trips() -> None:
    messages = _every_message()
    loaded = round_trip(messages)
    assert messages_to_dicts(loaded) == messages_to_dicts(messages)


def test_an_ai_message_keeps_its_interleaved_parts_in_order() -> None:
    message = _every_message()[2]
    loaded = round_trip(message)
    assert [type(p).__name__ for p in loaded.content] == [
        "ReasoningPart",
        "ToolCallPart",
        "TextPart",
        "ReasoningPart",
        "ToolCallPart",
        "TextPart",
        "ImagePart",
    ]
    assert loaded.text == "Searching; meanwhile: done."
    assert loaded.reasoning == "First I look.Then I answer."
    assert [c.id for c in loaded.tool_calls] == ["c1", "c2"]
    assert loaded.usage.total_tokens == 15


def test_inline_media_comes_back_as_the_same_base64_text() -> None:
    part = ImagePart(data=PNG, mime_type="image/png")
    loaded = round_trip(part)
    assert loaded.data == base64.b64encode(PNG).decode() and loaded.as_bytes() == PNG
    assert len(serde.dumps(part)) < len(PNG) + 100  # stored as bytes, not base64 text
    odd = ImagePart(data="QR==", mime_type="image/png")  # decodes, but is not canonical
    assert round_trip(odd).data == "QR=="


@pytest.mark.parametrize(
    "value",
    [
        TextPart("t"),
        ReasoningPart("r"),
        ToolCallPart(id="1", name="n", args={"x": 1}),
        ImagePart(url="u"),
        AudioPart(data=b"a", mime_type="audio/mp3"),
        VideoPart(data=b"v", mime_type="video/mp4"),
        FilePart(url="u", filename="f.txt"),
        ToolCall(id="1", name="n", args={"d": dt.date(2024, 1, 1)}),
        InvalidToolCall(args="{"),
        Usage(input_tokens=1, output_tokens=2),
    ],
    ids=lambda v: type(v).__name__,
)
def test_parts_and_tool_call_values_round_trip_alone(value: BaseModel) -> None:
    round_trip(value)


def test_loaded_messages_behave_like_validated_ones() -> None:
    loaded = serde.loads(serde.dumps(_every_message()))
    first, second = loaded[0], loaded[1]
    assert first.model_fields_set == set(SystemMessage.model_fields)
    with pytest.raises(ValueError, match="frozen"):
        first.id = "other"  # type: ignore[misc]
    copy = first.model_copy(update={"id": "new"})
    assert copy.id == "new" and first.id == "sys"
    assert second.model_fields_set == set(HumanMessage.model_fields)  # the copy changed no other
    assert first.model_dump() == _every_message()[0].model_dump()
    merged = add_messages(loaded[:3], [AIMessage("edited", id="a1")])
    assert [m.id for m in merged] == ["sys", "h1", "a1"] and merged[2].text == "edited"


def test_a_message_list_stays_a_message_list_and_a_plain_list_stays_plain() -> None:
    messages = _every_message()[:6]
    merged = add_messages([], messages)
    assert type(merged) is MessageList
    assert type(round_trip({"messages": merged})["messages"]) is MessageList
    assert type(round_trip({"messages": list(messages)})["messages"]) is list
    assert type(round_trip(MessageList())) is MessageList
    mixed = MessageList([messages[0], "not a message", 3])  # not what add_messages makes
    assert_same(serde.loads(serde.dumps(mixed)), list(mixed))
    named = MessageList([HumanMessage("x", metadata={"n": Note(text="a")}), "junk", Note(text="b")])
    assert_same(serde.loads(serde.dumps(named)), list(named))


def test_messages_state_and_subclasses_round_trip() -> None:
    messages = _every_message()[:6]
    round_trip(MessagesState(messages=messages))
    state = ChatState(messages=messages, persona="reviewer", notes=["a"], turns=3)
    assert type(round_trip(state).messages) is list
    round_trip(ChatState())


# --- registered models and enums ---------------------------------------------------------


def test_registered_models_round_trip_nested() -> None:
    owner = Person(name="Ada", born=dt.date(1815, 12, 10))
    project = Project(
        owner=owner,
        notes=[
            Note(text="a", pinned=True, tags=["x"], when=dt.datetime(2024, 1, 1)),
            Note(text="b", extra={"k": (1, {2})}, status=Status.DONE),
        ],
        members=frozenset({"ada", "bob"}),
        budget=Decimal("12.50"),
        priority=Priority.HIGH,
    )
    loaded = round_trip(project)
    assert loaded.owner.model_config.get("frozen")
    round_trip({"projects": [project, project], "note": Note(text="solo")})
    round_trip(HumanMessage("hi", metadata={"project": project}))


def test_a_recursive_model_round_trips() -> None:
    tree = Tree(
        label="root", children=[Tree(label="a", children=[Tree(label="a1")]), Tree(label="b")]
    )
    round_trip(tree)
    round_trip([Holder(item=tree), tree, Holder(item=[Holder(item=Status.DONE), tree])])


def test_fields_at_their_default_are_left_out() -> None:
    bare = serde.dumps(Note(text="x"))
    assert b"pinned" not in bare and b"tags" not in bare and b"extra" not in bare
    assert b"status" not in bare and b"when" not in bare
    full = serde.dumps(Note(text="x", pinned=True, tags=["t"], extra={"a": 1}, status=Status.DONE))
    assert all(name in full for name in (b"pinned", b"tags", b"extra", b"status"))
    assert serde.loads(bare).model_fields_set == {"text"}
    owner = Person(name="a", born=dt.date.min)
    budget = serde.loads(serde.dumps(Project(owner=owner, budget=Decimal("0.00")))).budget
    assert_same(budget, Decimal("0.00"))  # equal to the default 0, but not the same value


class Numbers(BaseModel):
    ratio: int | float = 1
    flag: bool | int = 0
    zero: float = 0.0


def test_a_default_equal_in_value_but_not_in_type_or_sign_is_kept(registry: None) -> None:
    serde.register(Numbers, name="tests.Numbers")
    value = Numbers(ratio=1.0, flag=False, zero=-0.0)
    assert value == Numbers()  # == alone would have left them all out
    assert serde.loads(serde.dumps(value)).model_fields_set == {"ratio", "flag", "zero"}
    round_trip(value)


def test_a_registered_name_is_written_once_per_payload() -> None:
    notes = [Note(text=str(i)) for i in range(100)]
    data = serde.dumps(
        {"a": notes, "b": Project(owner=Person(name="p", born=dt.date.min), notes=notes)}
    )
    assert data.count(b"test_serde.Note") == 1
    assert data.count(b"projects.Project") == 1
    round_trip({"a": notes, "b": Project(owner=Person(name="p", born=dt.date.min), notes=notes)})


def test_extras_private_attributes_and_post_init_are_restored() -> None:
    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int = 0
        _cache: list[int] = PrivateAttr(default_factory=lambda: [42])

        def model_post_init(self, context: Any, /) -> None:
            self._cache.append(self.a)

    serde.register(Loose, name="tests.Loose")
    loaded = round_trip(Loose(a=1, surprise={"x"}))
    assert loaded.surprise == {"x"} and loaded._cache == [42, 1]


def test_aliased_fields_round_trip_by_field_name() -> None:
    class Aliased(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        user_name: str = Field(alias="userName")
        other: int = Field(default=1, validation_alias="o")

    serde.register(Aliased, name="tests.Aliased")
    round_trip(Aliased(userName="ada", o=3))


def test_register_is_idempotent_and_usable_as_a_decorator(registry: None) -> None:
    @serde.register
    class A(BaseModel):
        x: int = 0

    @serde.register(name="tests.B")
    class B(BaseModel):
        y: int = 0

    assert serde.register(A) is A and serde.register(B, name="tests.B") is B
    assert serde.register(HumanMessage) is HumanMessage  # built in: nothing to do
    assert serde.register(MessagesState) is MessagesState
    assert b"tests.B" in serde.dumps(B())
    round_trip([A(x=1), B(y=2)])


def test_register_refuses_what_it_cannot_honour(registry: None) -> None:
    class Other(BaseModel):
        pass

    with pytest.raises(SerializationError, match="already registered for"):
        serde.register(Other, name="projects.Project")
    with pytest.raises(SerializationError, match=r"already registered as 'projects\.Project'"):
        serde.register(Project, name="elsewhere.Project")
    with pytest.raises(SerializationError, match="pydantic model class or an Enum"):
        serde.register(Point)
    with pytest.raises(SerializationError, match="pydantic model class or an Enum"):
        serde.register(Note(text="an instance"))  # type: ignore[type-var]
    with pytest.raises(SerializationError, match="built into the codec"):
        serde.register(HumanMessage, name="my.Human")
    with pytest.raises(SerializationError, match="non-empty str"):
        serde.register(Other, name="")


def test_an_unregistered_subclass_is_not_written_as_its_base() -> None:
    class SpecialNote(Note):
        secret: str = "s"

    with pytest.raises(SerializationError, match=r"serde\.register\(.*SpecialNote\)"):
        serde.dumps(SpecialNote(text="x"))


# --- schema evolution ------------------------------------------------------------------------


def test_a_field_added_later_with_a_default_loads_old_data(registry: None) -> None:
    class V1(BaseModel):
        text: str

    serde.register(V1, name="evolving.Note")
    old = serde.dumps([V1(text="hello")])
    _forget("evolving.Note")

    class V2(BaseModel):
        text: str
        rating: int = 5
        labels: list[str] = Field(default_factory=list)
        slug: str = Field(default_factory=lambda data: data["text"].upper())  # type: ignore[misc]

    serde.register(V2, name="evolving.Note")
    [loaded] = serde.loads(old)
    assert loaded == V2(text="hello", rating=5, labels=[], slug="HELLO")
    assert loaded.model_fields_set == {"text"}


def test_a_field_removed_later_is_dropped_or_kept_as_an_extra(registry: None) -> None:
    class StrictV1(BaseModel):
        text: str
        obsolete: int

    class LooseV1(BaseModel):
        text: str
        obsolete: int

    serde.register(StrictV1, name="evolving.Strict")
    serde.register(LooseV1, name="evolving.Loose")
    old = serde.dumps([StrictV1(text="t", obsolete=1), LooseV1(text="t", obsolete=2)])
    _forget("evolving.Strict")
    _forget("evolving.Loose")

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        text: str

    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        text: str

    serde.register(Strict, name="evolving.Strict")
    serde.register(Loose, name="evolving.Loose")
    strict, loose = serde.loads(old)
    assert strict == Strict(text="t") and strict.__pydantic_extra__ is None
    assert loose.text == "t" and loose.obsolete == 2


def test_a_required_field_added_later_names_itself(registry: None) -> None:
    class V1(BaseModel):
        text: str

    serde.register(V1, name="evolving.Required")
    old = serde.dumps(V1(text="t"))
    _forget("evolving.Required")

    class V2(BaseModel):
        text: str
        owner: str

    serde.register(V2, name="evolving.Required")
    with pytest.raises(
        DeserializationError, match=r"required field 'owner'.*give the field a default"
    ):
        serde.loads(old)


def test_an_enum_member_removed_later_names_the_value(registry: None) -> None:
    class Before(enum.Enum):
        A = "a"
        B = "b"

    serde.register(Before, name="evolving.Enum")
    old = serde.dumps(Before.B)
    _forget("evolving.Enum")

    class After(enum.Enum):
        A = "a"

    serde.register(After, name="evolving.Enum")
    assert serde.loads(serde.dumps(After.A)) is After.A
    with pytest.raises(DeserializationError, match="'b' is no longer one of its values"):
        serde.loads(old)


def test_a_moved_class_loads_under_its_pinned_old_name(registry: None) -> None:
    class Old(BaseModel):
        x: int

    serde.register(Old)
    data = serde.dumps(Old(x=1))
    name = f"{__name__}.{Old.__qualname__}"
    _forget(name)

    class Moved(BaseModel):
        x: int

    serde.register(Moved, name=name)
    assert serde.loads(data) == Moved(x=1)


def _forget(name: str) -> None:
    """Drop a registration, as a process that no longer has the class would not have it."""
    codec = _codec_models._BY_NAME.pop(name)
    del _codec_models._BY_CLASS[codec.cls]
    del _codec.ENCODERS[codec.cls]


def test_an_unknown_registered_name_says_which_and_how_to_fix_it(registry: None) -> None:
    class Gone(BaseModel):
        x: int = 1

    serde.register(Gone, name="app.models.Gone")
    data = serde.dumps({"x": [Gone(x=2)]})
    _forget("app.models.Gone")
    with pytest.raises(DeserializationError) as info:
        serde.loads(data)
    message = str(info.value)
    assert "'app.models.Gone'" in message and "serde.register(Gone)" in message
    assert "before loading" in message


def test_an_unregistered_enum_is_not_loaded(registry: None) -> None:
    class Mood(enum.Enum):
        HAPPY = 1

    serde.register(Mood, name="app.Mood")
    data = serde.dumps(Mood.HAPPY)
    _forget("app.Mood")
    with pytest.raises(DeserializationError, match=r"'app\.Mood'.*serde\.register"):
        serde.loads(data)


# --- serialization errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ({"values": {"notes": [1, 2, 3, {"when": object()}]}}, "values.notes[3].when", "object"),
        ({"state": Holder(item=[1, (2, Point(1))])}, "state.item[1][1]", f"{__name__}.Point"),
        (("a", "b", {1: [object()]}), "[2][1][0]", "object"),
        ({"my key": object()}, "['my key']", "object"),
        (
            [
                Project(
                    owner=Person(name="p", born=dt.date.min),
                    notes=[Note(text="a"), Note(text="b", extra={"x": Unregistered()})],
                )
            ],
            "[0].notes[1].extra.x",
            f"{__name__}.Unregistered",
        ),
        (
            {"messages": MessageList([HumanMessage("hi", metadata={"bad": {UnregisteredEnum.A}})])},
            "messages[0].metadata.bad{<UnregisteredEnum.A: 1>}",
            f"{__name__}.UnregisteredEnum",
        ),
        (
            [ToolMessage("x", tool_call_id="c", artifact=OrderedDict(a=1))],
            "[0].artifact",
            "collections.OrderedDict",
        ),
        (object(), "", "object"),
    ],
)
def test_a_serialization_error_gives_the_path_and_type(
    value: object, path: str, type_name: str
) -> None:
    with pytest.raises(SerializationError) as info:
        serde.dumps(value)
    error = info.value
    assert (error.path, error.type_name) == (path, type_name)
    assert isinstance(error, TypeError)
    assert (f"at {path}:" if path else "(the value itself)") in str(error)


def test_a_serialization_error_says_how_to_fix_it() -> None:
    with pytest.raises(SerializationError) as info:
        serde.dumps({"values": {"notes": [Unregistered()]}})
    assert str(info.value) == (
        f"Cannot serialize {__name__}.Unregistered at values.notes[0]: Unregistered is not "
        "registered; register the class before saving: serde.register(Unregistered) "
        "(from flowgraph.checkpoint import serde)."
    )
    with pytest.raises(SerializationError, match=r"plain dict \(dict\(value\)\)"):
        serde.dumps(OrderedDict())
    with pytest.raises(
        SerializationError, match=r"make Point a pydantic model.*serde.register\(Point\)"
    ):
        serde.dumps(Point(1))
    with pytest.raises(
        SerializationError, match=r"serde.register\(UnregisteredEnum\)"
    ) as enum_info:
        serde.dumps([UnregisteredEnum.A])
    assert enum_info.value.path == "[0]"


def test_unsupported_keys_and_set_items_are_located() -> None:
    with pytest.raises(SerializationError) as info:
        serde.dumps({"k": {object(): 1}})
    assert info.value.path.startswith("k[key <object object")
    with pytest.raises(SerializationError) as info:
        serde.dumps({"tags": {object()}})
    assert info.value.path.startswith("tags{<object object")


def test_a_value_that_contains_itself_is_a_clear_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(SerializationError, match="nests too deep"):
        serde.dumps({"loop": loop})
    deep: Any = "leaf"
    for _ in range(2000):
        deep = Holder(item=deep)
    with pytest.raises(SerializationError, match="nests too deep"):
        serde.dumps(deep)


def test_a_message_built_without_validation_is_still_checked() -> None:
    odd = HumanMessage.model_construct(content=[TextPart("ok"), Point(1)])
    with pytest.raises(SerializationError) as info:
        serde.dumps([odd])
    assert info.value.path == "[0].content[1]"


# --- envelope ---------------------------------------------------------------------------


def _header(data: bytes) -> tuple[bytes, int, int, int]:
    return struct.unpack(">2sBBI", data[:8])  # type: ignore[return-value]


def test_the_envelope_names_format_and_version_and_checksums_the_body() -> None:
    data = serde.dumps({"x": 1})
    magic, version, flags, crc = _header(data)
    assert (magic, version, flags) == (b"FG", serde.FORMAT_VERSION, 0)
    assert crc == zlib.crc32(data[8:], zlib.crc32(data[2:4]))
    assert msgpack.unpackb(data[8:]) == {"x": 1}  # the body is plain msgpack
    assert _header(serde.dumps("\udcff"))[2] == 1  # surrogates flagged


def test_a_future_version_is_refused_with_its_number() -> None:
    data = bytearray(serde.dumps([1]))
    data[2] = serde.FORMAT_VERSION + 1
    with pytest.raises(DeserializationError, match=r"format version 2, newer .* upgrade flowgraph"):
        serde.loads(bytes(data))
    data[2] = 0
    with pytest.raises(DeserializationError, match="Unknown checkpoint format version 0"):
        serde.loads(bytes(data))
    data[2], data[3] = serde.FORMAT_VERSION, 0x80
    with pytest.raises(DeserializationError, match="flags 0x80"):
        serde.loads(bytes(data))


@pytest.mark.parametrize(
    "data",
    [b"", b"F", b"FG\x01", b"\x80", b"PK\x03\x04 zip file", msgpack.packb({"a": 1})],
    ids=repr,
)
def test_bytes_that_are_not_a_checkpoint_are_refused(data: bytes) -> None:
    with pytest.raises(DeserializationError, match="Not flowgraph checkpoint data"):
        serde.loads(data)


def test_corruption_is_caught_by_the_checksum() -> None:
    data = serde.dumps(_every_message())
    for position in (8, len(data) // 2, len(data) - 1):
        flipped = bytearray(data)
        flipped[position] ^= 0x01
        with pytest.raises(DeserializationError, match="CRC32"):
            serde.loads(bytes(flipped))
    with pytest.raises(DeserializationError, match="CRC32"):
        serde.loads(data[:-1])


def test_loads_takes_any_bytes_like_object_and_nothing_else() -> None:
    data = serde.dumps([1, "a"])
    assert serde.loads(bytearray(data)) == serde.loads(memoryview(data)) == [1, "a"]
    with pytest.raises(DeserializationError, match="takes the bytes"):
        serde.loads("FG...")  # type: ignore[arg-type]


def test_data_written_by_format_1_stays_readable() -> None:
    """Bytes from format version 1, frozen here: any later flowgraph must load them."""
    data = bytes.fromhex(GOLDEN_V1)
    assert_same(serde.loads(data), golden_value())


def test_format_1_is_still_what_dumps_writes() -> None:
    """The writer's fast paths (reused encoders, the prebuilt header) change no byte."""
    assert serde.dumps(golden_value()) == bytes.fromhex(GOLDEN_V1)


def test_each_dumps_starts_afresh_after_a_success_a_failure_or_a_large_value() -> None:
    """Encoders are reused between calls: none may carry a name table or bytes over."""
    value = {
        "notes": [Note(text="a"), Note(text="b")],
        "project": Project(owner=Person(name="p", born=dt.date(2000, 1, 1))),
    }
    first = serde.dumps(value)
    assert first.count(b"test_serde.Note") == first.count(b"projects.Project") == 1
    with pytest.raises(SerializationError, match="notes"):
        serde.dumps({"project": value["project"], "notes": [Note(text="c"), object()]})
    large = [Note(text=str(i) * 50) for i in range(20_000)]
    assert serde.loads(serde.dumps(large)) == large
    for _ in range(3):
        assert serde.dumps(value) == first
        assert serde.dumps([1, "x"]) == with_header(msgpack.packb([1, "x"]))


@serde.register(name="golden.Level")
class GoldenLevel(enum.Enum):
    HIGH = "high"


@serde.register(name="golden.Note")
class GoldenNote(BaseModel):
    text: str
    level: GoldenLevel = GoldenLevel.HIGH
    when: dt.datetime | None = None
    tags: tuple[str, ...] = ()


def golden_value() -> object:
    return {
        "messages": MessageList(
            [
                SystemMessage("be brief", id="s", name="planner"),
                HumanMessage(
                    [TextPart("see"), ImagePart(data=b"\x89PNG", mime_type="image/png")],
                    id="h",
                    metadata={"at": dt.date(2024, 1, 2)},
                ),
                AIMessage(
                    [
                        ReasoningPart("r", signature="sig"),
                        TextPart("t"),
                        ToolCallPart(id="c", name="f", args={"a": 1}),
                    ],
                    id="a",
                    invalid_tool_calls=[InvalidToolCall(id="d", name="g", args="{", error="e")],
                    usage=Usage(input_tokens=1, output_tokens=2, cached_tokens=0),
                    response_metadata={"finish_reason": "tool_calls"},
                ),
                ToolMessage("ok", id="t", tool_call_id="c", status="error", artifact=(1, {2})),
                RemoveMessage("h"),
            ]
        ),
        "state": MessagesState(messages=[AIMessage("plain", id="p")]),
        "notes": [
            GoldenNote(text="n", when=dt.datetime(2024, 1, 2, 3, 4, 5, 6, dt.UTC), tags=("x",)),
            GoldenNote(text="m"),
        ],
        "misc": [
            uuid.UUID(int=1),
            Decimal("1.50"),
            dt.timedelta(days=1, microseconds=2),
            dt.time(4, 5, tzinfo=dt.timezone(dt.timedelta(hours=-2))),
            dt.datetime(2024, 7, 1, 9, tzinfo=ZoneInfo("Europe/Paris")),
            2**70,
            frozenset({"f"}),
            {3, 4},
            GoldenLevel.HIGH,
            b"\x00",
            (),
        ],
    }


GOLDEN_V1 = (
    "46470100bce75f9d84a86d65737361676573c7ab1f959510a86265206272696566a173a7706c616e6e657280"
    "9511929215a37365659516c0c40489504e47a9696d6167652f706e67c0a168c081a26174c7060593cd07e801"
    "02981293931aa172a37369679215a174941ba163a16681a16101a161c08091951da164a167a17ba165961e01"
    "020300c081ad66696e6973685f726561736f6eaa746f6f6c5f63616c6c739813a26f6ba174c080a163a56572"
    "726f72c706019201d50291029214a168a57374617465c73b0c92bd666c6f7767726170682e73746174652e4d"
    "65737361676573537461746581a86d65737361676573d820919812a5706c61696ea170c08090c080a56e6f74"
    "657392c7340c92ab676f6c64656e2e4e6f746583a474657874a16ea47768656ec70c0499cd07e80102030405"
    "060000a474616773c7030191a178c70a0c920181a474657874a16da46d6973639bd808000000000000000000"
    "00000000000001d609312e3530d60793010002c70f06960405000000d3fffffffe52d8b800c722049bcd07e8"
    "07010900000000cf00000001ad274800c0ac4575726f70652f5061726973c7090a400000000000000000c703"
    "0391a166c70302920304c7130b92ac676f6c64656e2e4c6576656ca468696768c40100d40190"
)


# --- forged bodies: a valid checksum around data this codec never writes -----------------


def forge(body: object) -> bytes:
    """A checkpoint around any msgpack body, checksum and all."""
    packed = msgpack.packb(body, use_bin_type=True)
    return with_header(packed)


def with_header(body: bytes, flags: int = 0) -> bytes:
    """The envelope `dumps` puts around a body, around any bytes."""
    crc = zlib.crc32(body, zlib.crc32(bytes((serde.FORMAT_VERSION, flags))))
    return struct.pack(">2sBBI", b"FG", serde.FORMAT_VERSION, flags, crc) + body


def _ext(code: int, fields: object) -> msgpack.ExtType:
    return msgpack.ExtType(code, msgpack.packb(fields, use_bin_type=True))


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (_ext(99, []), "unknown type code 99"),
        (_ext(17, [17, "hi", None, None]), "bad HumanMessage record"),
        (_ext(17, [17, "hi", 7, None, {}]), "bad HumanMessage record"),
        (_ext(17, [17, 5, None, None, {}]), "bad content record"),
        (_ext(17, [17, [[27, "id", "n", {}]], None, None, {}]), "bad content part record"),
        (_ext(18, [18, "", None, None, {}, [], [30, 1, 2], {}]), "bad Usage record"),
        (_ext(19, [19, "x", None, None, {}, "c", "maybe", None]), "bad ToolMessage record"),
        (_ext(22, [22, "u", "not base64!", None, None]), "bad ImagePart record"),
        (_ext(22, [22, None, None, None, None]), "bad ImagePart record"),
        (_ext(17, [18, "hi", None, None, {}]), "bad HumanMessage record"),
        (_ext(31, [[17, "a", None, None, {}], "x"]), "bad record in a list"),
        (_ext(12, [3, {}]), "bad type name reference 3"),
        (_ext(12, ["projects.Project", {"owner": 1, 5: 2}]), "bad field name"),
        (_ext(12, ["projects.Project", [1]]), "bad projects.Project record"),
        (_ext(11, ["projects.Project", 1]), "bad projects.Project record"),
        (_ext(4, [2024, 1, 1]), "bad datetime"),
        (_ext(4, [2024, 13, 1, 0, 0, 0, 0, 0]), "month must be in 1..12"),
        (msgpack.ExtType(8, b"\x01" * 15), "16-char string"),
        (_ext(1, {"not": "a list"}), "expected an array"),
        (msgpack.ExtType(10, b""), "empty integer"),
        (_ext(2, [[1]]), "unhashable"),
        (msgpack.ExtType(9, b"\xff"), "Corrupted"),
    ],
)
def test_a_forged_body_is_a_deserialization_error_never_a_half_built_value(
    body: object, match: str
) -> None:
    with pytest.raises(DeserializationError, match=match):
        serde.loads(forge(body))


def test_forged_nesting_does_not_crash_the_interpreter() -> None:
    deep: object = []
    for _ in range(5000):
        deep = _ext(1, [deep])
    with pytest.raises(DeserializationError):
        serde.loads(forge(deep))
    with pytest.raises(DeserializationError):
        serde.loads(forge(None)[:8] + b"\x91" * 100_000)


def test_a_forged_msgpack_timestamp_loads_as_a_plain_int() -> None:
    body = b"\xd6\xff\x00\x00\x00\x01"  # ext -1 (msgpack's timestamp), one second
    assert serde.loads(with_header(body)) == 1_000_000_000


# --- concurrency ----------------------------------------------------------------------


def test_dumps_and_loads_are_safe_from_many_threads() -> None:
    values = [
        {"i": i, "messages": MessageList(_every_message()), "notes": [Note(text=str(i))] * i}
        for i in range(16)
    ]
    expected = [serde.dumps(v) for v in values]
    barrier = threading.Barrier(8)

    def work(i: int) -> bytes:
        barrier.wait() if i < 8 else None
        data = serde.dumps(values[i])
        assert_same(serde.loads(data), values[i])
        return data

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(work, range(16))) == expected
