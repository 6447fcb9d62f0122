"""Which error answers say the request itself is malformed: those are never sent again.

Servers do not all answer a request they cannot read with a 4xx: llama.cpp
answers 500 "Failed to parse tool call arguments as JSON" to a history
holding arguments that are not JSON, and 500 "Failed to parse messages: ..."
to a message it cannot read. Retrying such an answer sends the same bytes
and gets the same refusal, and a resumed thread does it again: the error
must say so and what to do, and the call must not be retried.

The rules, checked in order on the provider's error message (case
insensitive) and the error body's ``type``/``code`` (first match wins):

==================  =============================================  ===================
rule                matches                                        statuses
==================  =============================================  ===================
``tool-arguments``  "failed to parse tool call arguments",         400, 422, 5xx
                    "could not parse tool call arguments",
                    "invalid tool call arguments"
``messages``        "failed to parse messages"                     400, 422, 5xx
``invalid-request`` type or code ``invalid_request_error``,        5xx
                    ``invalid_request``, ``bad_request``,
                    ``BadRequestError``, ``validation_error``,
                    ``invalid_argument``; or the message says
                    "invalid request" or "malformed request"
==================  =============================================  ===================

5xx here never includes 502, 503 and 504: a gateway, an unavailable or a
timed-out server says nothing about the request, whatever its body holds.
A 4xx is never retried anyway; matching one only adds the advice.
Deliberately not matched: llama.cpp's 500 "Failed to parse input at pos N",
which is about the *model's output* (its tool-call parser rejected what the
model generated), so another attempt, sampling again, may well succeed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["MalformedRequest", "malformed_request"]


@dataclass(frozen=True, kw_only=True, slots=True)
class MalformedRequest:
    """An error answer read as "the request itself is at fault": which rule, and the fix."""

    rule: str
    """The rule that matched: "tool-arguments", "messages" or "invalid-request"."""
    problem: str
    """What is wrong with the request, as the end of "refused the request: it ..."."""
    advice: str
    """What to do about it."""


_TOOL_ARGUMENTS = re.compile(r"(failed to parse|could not parse|invalid) tool[ _]call arguments")
_MESSAGES = re.compile(r"failed to parse messages")
_INVALID_REQUEST = re.compile(r"\b(invalid|malformed) request\b")
_INVALID_TYPES = frozenset(
    {
        "invalidrequesterror",
        "invalidrequest",
        "badrequest",
        "badrequesterror",
        "validationerror",
        "invalidargument",
    }
)
"""Error types and codes that name a client error, spelled without case or underscores."""

_NOT_ABOUT_THE_REQUEST = frozenset({502, 503, 504})

_TOOL_ARGUMENTS_ADVICE = (
    "Sending it again would fail the same way, so it was not retried. flowgraph sends {} "
    "for arguments that are not a JSON object, so these came in another form: a message "
    "built by hand or by another client, or a value Python's json reads and strict "
    "parsers refuse (NaN, Infinity). Correct or remove the AI message with those "
    "arguments (app.update_state, or RemoveMessage(id)) and resume the thread"
)
_MESSAGES_ADVICE = (
    "Sending it again would fail the same way, so it was not retried. Correct or remove "
    "the message the server names (app.update_state, or RemoveMessage(id)) and resume "
    "the thread; an on_request listener sees the messages of every call"
)
_INVALID_ADVICE = (
    "Sending it again would fail the same way, so it was not retried. Check what the "
    "server's message names against what it supports (an on_request listener shows the "
    "messages, tools and options sent), correct it, and call again"
)


def malformed_request(status: int, message: str | None, body: bytes) -> MalformedRequest | None:
    """The rule an error answer matches (see the module docstring), or None.

    `message` is the provider's own explanation (`HttpChatModel._error_message`);
    `body` the whole answer, whose ``type`` and ``code`` are read when it is JSON.
    """
    if status >= 500:
        if status in _NOT_ABOUT_THE_REQUEST:
            return None
    elif status not in (400, 422):
        return None
    said = (message or body[:2_000].decode("utf-8", "replace")).lower()
    if _TOOL_ARGUMENTS.search(said):
        return MalformedRequest(
            rule="tool-arguments",
            problem="it holds tool call arguments that are not valid JSON",
            advice=_TOOL_ARGUMENTS_ADVICE,
        )
    if _MESSAGES.search(said):
        return MalformedRequest(
            rule="messages",
            problem="it holds a message the server cannot read",
            advice=_MESSAGES_ADVICE,
        )
    if status >= 500 and (_INVALID_REQUEST.search(said) or _names_a_client_error(body)):
        return MalformedRequest(
            rule="invalid-request",
            problem="the server calls it invalid",
            advice=_INVALID_ADVICE,
        )
    return None


def _names_a_client_error(body: bytes) -> bool:
    """True when the JSON body's error ``type`` or ``code`` names a client error."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(data, dict):
        return False
    error = data.get("error")
    places = [error, data] if isinstance(error, dict) else [data]
    for place in places:
        for key in ("type", "code"):
            value = place.get(key)
            if isinstance(value, str) and _spelled(value) in _INVALID_TYPES:
                return True
    return False


def _spelled(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()
