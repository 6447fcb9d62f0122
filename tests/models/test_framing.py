"""SSE and NDJSON decoding of bodies cut into pieces at every possible place."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph.errors import MalformedResponseError
from flowgraph.models._framing import NDJSONDecoder, SSEDecoder, SSEEvent

BODY = (
    ": keep-alive comment\r\n"
    "event: message_start\r\n"
    'data: {"text": "Grüße 🌍"}\r\n'
    "\r\n"
    "data: line one\n"
    "data:line two\n"
    "id: 7\n"
    "\n"
    "data: [DONE]\r"
    "\r"
).encode()
EVENTS = [
    SSEEvent("message_start", '{"text": "Grüße 🌍"}'),
    SSEEvent("message", "line one\nline two"),
    SSEEvent("message", "[DONE]"),
]


def decode(pieces: list[bytes]) -> tuple[list[SSEEvent], bool]:
    decoder = SSEDecoder("test")
    events = [event for piece in pieces for event in decoder.feed(piece)]
    events += decoder.close()
    return events, decoder.truncated


def test_every_single_cut_point_gives_the_same_events() -> None:
    for cut in range(len(BODY) + 1):
        assert decode([BODY[:cut], BODY[cut:]]) == (EVENTS, False), cut


def test_byte_by_byte() -> None:
    assert decode([bytes([b]) for b in BODY]) == (EVENTS, False)


@settings(deadline=None)
@given(st.lists(st.integers(1, len(BODY)), max_size=12))
def test_any_cuts(points: list[int]) -> None:
    cuts = sorted(set(points))
    pieces = [BODY[a:b] for a, b in zip([0, *cuts], [*cuts, len(BODY)], strict=True)]
    assert decode(pieces) == (EVENTS, False)


def test_a_last_event_without_its_blank_line_is_kept_but_a_cut_line_is_not() -> None:
    assert decode([b"data: a\n"]) == ([SSEEvent("message", "a")], False)
    assert decode([b'data: a\n\ndata: {"b']) == ([SSEEvent("message", "a")], True)


def test_bytes_that_are_not_utf8_are_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="not UTF-8"):
        SSEDecoder("test").feed(b"data: \xff\xfe\n\n")


def test_ndjson_lines_split_anywhere() -> None:
    body = '{"a": "é"}\n\n{"b": [1, 2]}\r\n{"c": null}'.encode()
    for cut in range(len(body) + 1):
        decoder = NDJSONDecoder("test")
        values = decoder.feed(body[:cut]) + decoder.feed(body[cut:]) + decoder.close()
        assert values == [{"a": "é"}, {"b": [1, 2]}, {"c": None}], cut
        assert not decoder.truncated


def test_ndjson_cut_mid_line_and_bad_lines() -> None:
    decoder = NDJSONDecoder("test")
    assert decoder.feed(b'{"a": 1}\n{"b"') == [{"a": 1}]
    assert decoder.close() == []
    assert decoder.truncated
    with pytest.raises(MalformedResponseError, match="not JSON"):
        NDJSONDecoder("test").feed(b"<html>\n")
