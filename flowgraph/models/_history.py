"""A history as a request may carry it: tool call arguments a strict server accepts.

A weak model stopped by `max_tokens` in the middle of a call leaves an
`InvalidToolCall(args='{"order_id":')` in the thread, and `ToolNode`
answers it with an error `ToolMessage`. Sending those raw arguments back
(LangChain's converters do: `function.arguments` is the raw string) kills
the thread on strict servers: llama.cpp parses every `arguments` string of
the history and answers 500 "Failed to parse tool call arguments as JSON",
and it does so on every later call, since the history only grows.

So a request carries `{}` as the arguments of such a call, and the raw text
goes into the content of the `ToolMessage` that answers the call, where the
model reads it next to `ToolNode`'s "not valid JSON" error. Why there: the
call stays in the history (its error result must answer a call, or
providers refuse the pair), `{}` is the one object that claims nothing the
model did not write, and the tool result is the model's feedback channel
already -- the place it looks to see what went wrong with its call.

Only the request changes: the messages given are never modified (the
thread keeps what the model wrote), and a history with nothing to repair is
returned as it is. A call without an id or name is left alone (converters
do not send it), and so is an invalid call whose arguments are a JSON
object (it is invalid for another reason, and the server can read it).
"""

from __future__ import annotations

import json
from typing import Any

from flowgraph.messages import AIMessage, BaseMessage, InvalidToolCall, TextPart, ToolMessage

__all__ = ["SENT_ARGUMENTS", "json_object", "raw_arguments_note", "request_history"]

SENT_ARGUMENTS = "{}"
"""The arguments a request carries for a call whose own are not a JSON object."""

MAX_QUOTED = 2_000
"""Characters of the raw arguments quoted back to the model; a runaway call is cut here."""


def json_object(raw: str) -> dict[str, Any] | None:
    """`raw` parsed, when it is a JSON object as a strict parser reads it; else None.

    NaN and Infinity are refused: Python's json reads them, llama.cpp's and
    most servers' parsers do not.
    """
    try:
        value = json.loads(raw, parse_constant=_refuse)
    except ValueError:  # JSONDecodeError, and _refuse's
        return None
    return value if isinstance(value, dict) else None


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def raw_arguments_note(raw: str) -> str:
    """What the answering tool result gains: the model's own arguments, quoted back."""
    quoted = (
        raw
        if len(raw) <= MAX_QUOTED
        else f"{raw[:MAX_QUOTED]}... ({len(raw) - MAX_QUOTED} more characters)"
    )
    return (
        f"The arguments you wrote for this call (sent back as {SENT_ARGUMENTS} because "
        f"they are not a JSON object): {quoted}"
    )


def request_history(messages: list[BaseMessage]) -> list[BaseMessage]:
    """`messages` with every invalid call's arguments sendable, and their text in its result.

    Returns `messages` itself when no AI message holds a call to repair (the
    usual case costs one pass over the list); otherwise a new list in which
    only the affected AI and tool messages are copies. A tool result counts
    as the answer to a call when it follows that call's AI message and comes
    before the next AI message (some providers reuse ids such as "call_0"
    across turns). A result that already quotes the raw text is left as it is.
    """
    for message in messages:
        if isinstance(message, AIMessage) and message.invalid_tool_calls:
            break
    else:
        return messages
    out: list[BaseMessage] = []
    spoiled: dict[str, str] = {}  # call id -> raw arguments, for the results that follow
    for message in messages:
        if isinstance(message, AIMessage):
            spoiled = {}
            if message.invalid_tool_calls:
                message = _sendable_calls(message, spoiled)
        elif spoiled and isinstance(message, ToolMessage) and message.tool_call_id in spoiled:
            message = _with_raw_arguments(message, spoiled[message.tool_call_id])
        out.append(message)
    return out


def _sendable_calls(message: AIMessage, spoiled: dict[str, str]) -> AIMessage:
    """The message with `{}` for each answerable call whose arguments are not an object."""
    calls: list[InvalidToolCall] = []
    for call in message.invalid_tool_calls:
        if call.id is not None and call.name is not None and json_object(call.args) is None:
            spoiled[call.id] = call.args
            call = call.model_copy(update={"args": SENT_ARGUMENTS})
        calls.append(call)
    if not spoiled:
        return message
    return message.model_copy(update={"invalid_tool_calls": calls})


def _with_raw_arguments(message: ToolMessage, raw: str) -> ToolMessage:
    if not raw.strip() or raw in message.text:
        return message  # nothing to quote, or the result quotes it already
    note = raw_arguments_note(raw)
    content = message.content
    if isinstance(content, str):
        new_content: str | list[Any] = f"{content}\n\n{note}" if content else note
    else:
        new_content = [*content, TextPart(text=note)]
    return message.model_copy(update={"content": new_content})
