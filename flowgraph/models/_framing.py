"""Incremental SSE and NDJSON decoding of a body that arrives in arbitrary pieces.

Bytes are buffered until a line ends and only whole lines are decoded, so
a piece may end anywhere: inside a UTF-8 character, inside a JSON string,
between the `\\r` and `\\n` of a line ending. `close()` reports what was
left unfinished, so a cut stream is an error and not a short reply.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from flowgraph.errors import MalformedResponseError

__all__ = ["LineDecoder", "NDJSONDecoder", "SSEDecoder", "SSEEvent"]

_LINE_END = re.compile(rb"\r\n|\r|\n")


class LineDecoder:
    """Splits bytes into text lines at `\\r\\n`, `\\n` or `\\r` (what SSE allows)."""

    __slots__ = ("_buffer", "_where")

    def __init__(self, where: str) -> None:
        self._buffer = b""
        self._where = where

    def feed(self, data: bytes) -> list[str]:
        buffer = self._buffer + data if self._buffer else data
        lines: list[str] = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            if match.group() == b"\r" and match.end() == len(buffer):
                break  # maybe the first half of \r\n: wait for the next piece
            lines.append(self._decode(buffer[start : match.start()]))
            start = match.end()
        self._buffer = buffer[start:]
        return lines

    def close(self) -> tuple[list[str], str | None]:
        """(lines the end of the body completed, the unterminated last line if any)."""
        rest, self._buffer = self._buffer, b""
        if rest.endswith(b"\r"):  # a lone \r ends a line too
            return [self._decode(rest[:-1])], None
        return [], self._decode(rest) if rest else None

    def _decode(self, line: bytes) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedResponseError(
                f"{self._where} sent a line that is not UTF-8 ({exc}): {line[:200]!r}"
            ) from exc


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One server-sent event: its `event:` name ("message" by default) and `data:` text."""

    event: str
    data: str


class SSEDecoder:
    """Server-sent events (the WHATWG framing) from body pieces."""

    __slots__ = ("_data", "_event", "_lines", "truncated")

    def __init__(self, where: str) -> None:
        self._lines = LineDecoder(where)
        self._event = ""
        self._data: list[str] = []
        self.truncated = False
        """Set by `close()` when the body ended inside a line or an event."""

    def feed(self, data: bytes) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        for line in self._lines.feed(data):
            self._line(line, events)
        return events

    def close(self) -> list[SSEEvent]:
        """Events still pending at the end of the body; sets `truncated` when cut."""
        events: list[SSEEvent] = []
        lines, rest = self._lines.close()
        for line in lines:
            self._line(line, events)
        if rest is not None:
            self.truncated = True  # the body ended in the middle of a line
            return events
        if self._data:
            # A complete last event without its blank line: servers forget it; accept it.
            events.append(SSEEvent(self._event or "message", "\n".join(self._data)))
            self._data, self._event = [], ""
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                events.append(SSEEvent(self._event or "message", "\n".join(self._data)))
            self._data, self._event = [], ""
            return
        if line.startswith(":"):
            return  # a comment (keep-alive)
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


class NDJSONDecoder:
    """One JSON value per line (Ollama's streaming format) from body pieces."""

    __slots__ = ("_lines", "_where", "truncated")

    def __init__(self, where: str) -> None:
        self._lines = LineDecoder(where)
        self._where = where
        self.truncated = False

    def feed(self, data: bytes) -> list[Any]:
        return [self._parse(line) for line in self._lines.feed(data) if line.strip()]

    def close(self) -> list[Any]:
        """The last line if it parses; a line cut short sets `truncated` instead."""
        lines, rest = self._lines.close()
        values = [self._parse(line) for line in lines if line.strip()]
        if rest is None or not rest.strip():
            return values
        try:
            return [*values, json.loads(rest)]
        except json.JSONDecodeError:
            self.truncated = True
            return values

    def _parse(self, line: str) -> Any:
        return decode_json(line, self._where)


def decode_json(text: str | bytes, where: str) -> Any:
    """JSON from a provider, or MalformedResponseError quoting what came instead."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        snippet = text[:300] if isinstance(text, str) else text[:300].decode("utf-8", "replace")
        raise MalformedResponseError(
            f"{where} sent something that is not JSON ({exc}): {snippet!r}"
        ) from exc
