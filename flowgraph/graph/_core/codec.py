"""Command and Send in the checkpoint codec: what a tool or a cached node returned, stored.

ToolNode keeps each tool call's result with the step's pending writes
(`aonce`), and a node cache keeps a node's return value; either may be a
`Command` (with `Send`s in its goto). The codec's tables live in the
checkpoint layer, which must not know the graph's classes, so this module
(imported with `flowgraph.graph`) adds them: ext codes COMMAND and SEND,
fields in a fixed order, each checked as it is read back.
"""

from __future__ import annotations

from typing import Any

from flowgraph.checkpoint._codec.core import (
    COMMAND,
    DECODERS,
    ENCODERS,
    SEND,
    Corrupt,
    Decoder,
    Encoder,
    ext,
)
from flowgraph.graph._core.types import MISSING, Command, Send

__all__: list[str] = []


def _encode_send(encoder: Encoder, send: Send) -> object:
    return ext(SEND, encoder.pack([send.node, send.arg]))


def _decode_send(decoder: Decoder, data: bytes) -> Send:
    fields = decoder.decode(data)
    if type(fields) is not list or len(fields) != 2 or type(fields[0]) is not str:
        raise Corrupt("a Send record is [node, arg]")
    return Send(fields[0], fields[1])


def _encode_command(encoder: Encoder, command: Command[Any]) -> object:
    goto = command.goto
    resume = [] if command.resume is MISSING else [command.resume]
    if not isinstance(goto, (str, Send, list, tuple)):
        goto = list(goto)
    fields = [command.update, goto, resume]
    return ext(COMMAND, encoder.pack([*fields, command.graph]))


def _decode_command(decoder: Decoder, data: bytes) -> Command[Any]:
    fields = decoder.decode(data)
    if type(fields) is not list or len(fields) != 4:
        raise Corrupt("a Command record is [update, goto, resume, graph]")
    update, goto, resume, graph = fields
    if not isinstance(goto, (str, Send, list, tuple)) or (
        isinstance(goto, (list, tuple)) and not all(isinstance(g, (str, Send)) for g in goto)
    ):
        raise Corrupt("a Command's goto is a node name, a Send, or a list of them")
    if type(resume) is not list or len(resume) > 1:
        raise Corrupt("a Command's resume is stored as [] or [value]")
    if graph is not None and type(graph) is not str:
        raise Corrupt("a Command's graph is a str or None")
    return Command(update=update, goto=goto, resume=resume[0] if resume else MISSING, graph=graph)


ENCODERS[Send] = _encode_send
DECODERS[SEND] = _decode_send
ENCODERS[Command] = _encode_command
DECODERS[COMMAND] = _decode_command
