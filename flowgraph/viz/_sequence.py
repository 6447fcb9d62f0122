"""A thread's conversation as a Mermaid sequence diagram.

Participants: the user (one per human `name`, else "User"), the model (one
per AI `name`, else "Assistant") and one per tool the model called. Each
message is an arrow: user -> model, a tool call model -> tool and its
result tool --> model, both tagged with the tool-call id that links them
(a failed call's result is a cross `--x`), the model's answer model --> user.
A system message is a note over the model. Text is shortened to one line
and escaped, so any content draws.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from flowgraph.errors import DiagramError
from flowgraph.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from flowgraph.viz._names import identifiers

if TYPE_CHECKING:
    from flowgraph.graph import CompiledGraph

__all__ = ["messages_to_sequence", "to_mermaid_sequence"]

_TEXT_LIMIT = 80
_ENTITIES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}


def _escape(text: str, limit: int = _TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "".join(_ENTITIES.get(ch, ch) for ch in text) or " "


def _call_text(name: str, args: dict[str, Any], call_id: str | None) -> str:
    rendered = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return f"{name}({rendered})" + (f" [{call_id}]" if call_id else "")


def _messages_of(app: CompiledGraph, thread_id: str) -> list[BaseMessage]:
    if app.checkpointer is None:
        raise DiagramError(
            f"Cannot draw the conversation of thread {thread_id!r}: graph {app.name!r} keeps "
            "no history; compile(checkpointer=...) to record threads",
            thread_id=thread_id,
        )
    snapshot = app.get_state(thread_id)
    if snapshot.checkpoint_id is None:
        raise DiagramError(
            f"Thread {thread_id!r} has no checkpoints; run it with "
            f"invoke(..., thread_id={thread_id!r}) before drawing its conversation",
            thread_id=thread_id,
        )
    values = snapshot.values
    messages = (
        values.get("messages") if isinstance(values, dict) else getattr(values, "messages", None)
    )
    if messages is None:
        raise DiagramError(
            f"The state of thread {thread_id!r} has no 'messages' field to draw",
            thread_id=thread_id,
        )
    return list(messages)


def messages_to_sequence(messages: list[BaseMessage], *, title: str | None = None) -> str:
    """The messages as a Mermaid sequence diagram, ending with a newline."""
    order: list[tuple[str, str]] = []  # (key, shown name) in order of appearance
    tool_names: dict[str, str] = {}  # tool call id -> tool name
    callers: dict[str, str] = {}  # tool call id -> AI participant key

    def participant(kind: str, name: str) -> str:
        key = f"{kind}\0{name}"
        if all(k != key for k, _ in order):
            order.append((key, name))
        return key

    events: list[tuple[str, str, str, str]] = []  # (arrow, from key, to key, text)
    user_key = ai_key = None
    for message in messages:
        if isinstance(message, SystemMessage):
            ai_key = ai_key or participant("ai", "Assistant")
            events.append(("note", ai_key, ai_key, "system: " + message.text))
        elif isinstance(message, HumanMessage):
            user_key = participant("user", message.name or "User")
            ai_key = ai_key or participant("ai", "Assistant")
            events.append(("->>", user_key, ai_key, message.text))
        elif isinstance(message, AIMessage):
            ai_key = participant("ai", message.name or "Assistant")
            if message.text or not message.tool_calls:
                user_key = user_key or participant("user", "User")
                events.append(("-->>", ai_key, user_key, message.text))
            for call in message.tool_calls:
                tool_key = participant("tool", call.name)
                tool_names[call.id or ""] = call.name
                callers[call.id or ""] = ai_key
                events.append(("->>", ai_key, tool_key, _call_text(call.name, call.args, call.id)))
        elif isinstance(message, ToolMessage):
            name = tool_names.get(message.tool_call_id) or message.name or "tool"
            tool_key = participant("tool", name)
            target = callers.get(message.tool_call_id) or ai_key or participant("ai", "Assistant")
            arrow = "--x" if message.status == "error" else "-->>"
            events.append((arrow, tool_key, target, f"[{message.tool_call_id}] {message.text}"))
    ids = identifiers(order)
    lines = []
    if title:
        lines += ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---"]
    lines += ["sequenceDiagram", "    autonumber"]
    for key, name in order:
        kind = key.split("\0", 1)[0]
        word = "actor" if kind == "user" else "participant"
        lines.append(f"    {word} {ids[key]} as {_escape(name, 40)}")
    for arrow, source, target, text in events:
        if arrow == "note":
            lines.append(f"    Note over {ids[source]}: {_escape(text)}")
        else:
            lines.append(f"    {ids[source]}{arrow}{ids[target]}: {_escape(text)}")
    return "\n".join(lines) + "\n"


def to_mermaid_sequence(app: CompiledGraph, thread_id: str) -> str:
    """Thread `thread_id`'s conversation as a Mermaid sequence diagram."""
    messages = _messages_of(app, thread_id)
    return messages_to_sequence(messages, title=f"{app.name} (thread {thread_id})")
