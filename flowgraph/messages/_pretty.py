"""Messages as text for a terminal: the layout LangChain's `pretty_print()` prints.

A banner line of `=` 80 columns wide names the message type ("Human
Message"), a `Name:` line follows when the message has a name, then a blank
line and the content. An AI message then lists its tool calls (name, id,
each argument on its own line) and its invalid tool calls. A tutorial's
printed transcript therefore reads the same in flowgraph.

Content parts print as their text; media and reasoning, which LangChain
prints as raw dicts, print as one bracketed line each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["pretty_repr"]

WIDTH = 80
_BOLD, _PLAIN = "\033[1m", "\033[0m"


def banner(title: str, *, bold: bool = False) -> str:
    """` title ` centred in a line of `=` (the extra `=` of an odd fit goes right)."""
    padded = f" {title} "
    left = max(WIDTH - len(padded), 0) // 2
    right = max(WIDTH - len(padded) - left, 0)
    if bold:
        padded = f"{_BOLD}{padded}{_PLAIN}"
    return "=" * left + padded + "=" * right


def _content(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    lines: list[str] = []
    for part in content:
        kind = getattr(part, "type", "")
        if kind == "text":
            lines.append(part.text)
        elif kind == "reasoning":
            lines.append(f"[reasoning: {part.text}]")
        elif kind in ("image", "audio", "video", "file"):
            where = part.url or f"{part.mime_type or 'data'}, {len(part.data or '')} base64 chars"
            lines.append(f"[{kind}: {where}]")
    return "\n".join(lines)


def _calls(title: str, calls: Iterable[Any], *, invalid: bool) -> list[str]:
    lines = [f"{title}:"]
    for call in calls:
        lines.append(f"  {call.name} ({call.id})")
        lines.append(f" Call ID: {call.id}")
        if invalid and call.error:
            lines.append(f"  Error: {call.error}")
        lines.append("  Args:")
        args = call.args
        if isinstance(args, Mapping):
            lines.extend(f"    {key}: {value}" for key, value in args.items())
        elif args:
            lines.append(f"    {args}")
    return lines


def pretty_repr(message: Any, *, html: bool = False) -> str:
    """The message as `pretty_print()` shows it (`html`: the title in bold, for notebooks)."""
    title = banner(f"{message.type.title()} Message", bold=html)
    if message.name is not None:
        title += f"\nName: {message.name}"
    text = f"{title}\n\n{_content(message.content)}"
    calls = [part for part in _parts(message) if getattr(part, "type", "") == "tool_call"]
    invalid = list(getattr(message, "invalid_tool_calls", ()))
    if not calls and not invalid:
        return text.strip() if message.type == "ai" else text  # LangChain strips an AI's
    lines: list[str] = []
    if calls:
        lines.extend(_calls("Tool Calls", calls, invalid=False))
    if invalid:
        lines.extend(_calls("Invalid Tool Calls", invalid, invalid=True))
    return (text.strip() + "\n" + "\n".join(lines)).strip()


def _parts(message: Any) -> list[Any]:
    return list(message.content_blocks)
