"""Command and Send in the checkpoint codec (stored when a tool or a cached node returns one).

They round-trip exactly, resume values and nested Sends included, and a
record of the wrong shape is a DeserializationError, never a half-built
Command.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type information
import pytest

from flowgraph import Command, DeserializationError, HumanMessage, Send
from flowgraph.checkpoint import serde
from flowgraph.checkpoint._codec.core import COMMAND, SEND


@pytest.mark.parametrize(
    "value",
    [
        Command(),
        Command(update={"messages": [HumanMessage("hi", id="1")], "n": 2}, goto="next"),
        Command(update=[("n", 1), ("n", 2)], goto=[Send("work", {"x": (1, 2)}), "other"]),
        Command(goto=("a", "b"), graph=Command.PARENT),
        Command(resume={"id-1": "yes"}),
        Command(resume=None),
        Send("node", None),
        {"calls": [Send("a", 1), Send("b", [Send("c", 3)])]},
    ],
)
def test_commands_and_sends_round_trip_exactly(value: Any) -> None:
    again = serde.loads(serde.dumps(value))
    assert again == value
    if isinstance(value, Command):
        assert again.has_resume == value.has_resume


def _forged(code: int, fields: object) -> bytes:
    body = msgpack.packb(msgpack.ExtType(code, msgpack.packb(fields, use_bin_type=True)))
    crc = zlib.crc32(body, zlib.crc32(bytes((serde.FORMAT_VERSION, 0))))
    return struct.pack(">2sBBI", b"FG", serde.FORMAT_VERSION, 0, crc) + body


@pytest.mark.parametrize(
    ("code", "fields", "match"),
    [
        (SEND, ["only the node"], "a Send record is"),
        (SEND, [3, None], "a Send record is"),
        (COMMAND, [None, "a", []], "a Command record is"),
        (COMMAND, [None, 7, [], None], "goto is a node name"),
        (COMMAND, [None, ["a", 1], [], None], "goto is a node name"),
        (COMMAND, [None, "a", [1, 2], None], "resume is stored as"),
        (COMMAND, [None, "a", [], 5], "graph is a str or None"),
    ],
)
def test_a_malformed_record_is_a_deserialization_error(
    code: int, fields: object, match: str
) -> None:
    with pytest.raises(DeserializationError, match=match):
        serde.loads(_forged(code, fields))
