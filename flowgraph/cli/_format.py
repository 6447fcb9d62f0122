"""How the CLI prints: colours (TTY only, never with NO_COLOR), conversations and tables.

Plain text when stdout is not a terminal, so output piped to a file or a
test reads the same as on screen minus the escape codes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import IO, Any

from flowgraph.messages import (
    AIMessage,
    BaseMessage,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
)

__all__ = ["Style", "conversation", "describe_value", "table", "timestamp", "tool_call"]

_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
ROLE_COLOURS = {"system": "magenta", "human": "green", "ai": "cyan", "tool": "yellow"}


class Style:
    """ANSI styling that is a no-op unless the stream is a terminal and NO_COLOR is unset."""

    def __init__(self, stream: IO[str]) -> None:
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def timestamp(seconds: float | None) -> str:
    """Local time to the second (what `ls -l` users expect to read)."""
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def describe_value(value: Any) -> str:
    """A value (an interrupt's, a state field's) as compact JSON, or its repr."""
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    except (TypeError, ValueError):
        return repr(value)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def tool_call(name: str, args: Any) -> str:
    return f"{name}({describe_value(args)})"


def _content_lines(message: BaseMessage, style: Style) -> list[str]:
    """The message's parts in order: text, reasoning (dim), media and tool calls as tags."""
    if isinstance(message.content, str):
        return message.content.splitlines() or ([""] if not isinstance(message, AIMessage) else [])
    lines: list[str] = []
    for part in message.content:
        if isinstance(part, TextPart):
            lines.extend(part.text.splitlines())
        elif isinstance(part, ReasoningPart):
            lines.extend(style(f"(thinking) {line}", "dim") for line in part.text.splitlines())
        elif isinstance(part, ToolCallPart):
            continue  # shown with its link, below
        else:
            mime = getattr(part, "mime_type", None)
            lines.append(style(f"[{part.type}{' ' + mime if mime else ''}]", "dim"))
    return lines


def conversation(messages: Sequence[BaseMessage], style: Style) -> list[str]:
    """The conversation as lines: `#n role[:name]  content`, tool calls linked to results by id."""
    numbers = {id(m): i for i, m in enumerate(messages, 1)}
    # a result answers the latest call with its id (some models reuse ids turn after turn)
    call_at: dict[int, int] = {}
    result_at: dict[tuple[int, str], int] = {}
    open_calls: dict[str, int] = {}
    for message in messages:
        number = numbers[id(message)]
        if isinstance(message, AIMessage):
            open_calls.update((call.id, number) for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and message.tool_call_id in open_calls:
            origin = open_calls.pop(message.tool_call_id)
            call_at[number] = origin
            result_at[(origin, message.tool_call_id)] = number
    labels = [
        m.type + (f":{m.name}" if m.name and not isinstance(m, ToolMessage) else "")
        for m in messages
    ]
    width = min(max((len(label) for label in labels), default=0), 24)
    number_width = len(str(len(messages))) + 1
    out: list[str] = []
    for message, label in zip(messages, labels, strict=True):
        colour = ROLE_COLOURS.get(message.type, "bold")
        head = style(f"#{numbers[id(message)]}".rjust(number_width), "dim")
        role = style(label.ljust(width), colour, "bold")
        indent = " " * (number_width + 1 + width + 2)
        body = _content_lines(message, style)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                answered = result_at.get((numbers[id(message)], call.id))
                link = f"-> #{answered}" if answered else "-> no result yet"
                body.append(
                    f"{style('calls', colour)} {tool_call(call.name, call.args)}  "
                    + style(f"[{call.id} {link}]", "dim")
                )
            for bad in message.invalid_tool_calls:
                body.append(style(f"invalid call {bad.name}({bad.args}): {bad.error}", "red"))
        elif isinstance(message, ToolMessage):
            caller = call_at.get(numbers[id(message)])
            link = f"<- #{caller}" if caller else "<- unknown call"
            status = style(message.status, "red" if message.status == "error" else "green")
            tag = f"result of {message.name or 'tool'} " + style(
                f"[{message.tool_call_id} {link}]", "dim"
            )
            body.insert(0, f"{tag} {status}")
        if not body:
            body = [""]
        out.append(f"{head} {role}  {body[0]}".rstrip())
        out.extend(f"{indent}{line}".rstrip() for line in body[1:])
    return out


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], style: Style) -> list[str]:
    """Columns padded to their widest cell; numbers (right-aligned headers start with '>')."""
    right = [h.startswith(">") for h in headers]
    names = [h.lstrip(">") for h in headers]
    widths = [max([len(n), *(len(r[i]) for r in rows)]) for i, n in enumerate(names)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(padded).rstrip()

    return [style(line(names), "bold"), *(line(r) for r in rows)]
