"""ModelNode: call a chat model with the state's messages and add its reply.

What is sent is prepared, never what is stored: the node's system prompt
(or the state's persona) goes first, `memory` trims the window, and a
history the provider would reject -- an AI message whose tool calls have no
results -- is mended with error results for the missing calls. The state
keeps every message as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowgraph._context import listening
from flowgraph.graph._engine.bridge import run_sync
from flowgraph.graph._engine.once import aonce, call_key
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    SystemMessage,
    ToolCallPart,
    ToolMessage,
)
from flowgraph.models import ChatModel, ChatOptions
from flowgraph.nodes._state import messages_of, state_variables
from flowgraph.nodes._trim import trim_messages
from flowgraph.prompts import SystemPromptTemplate

__all__ = ["MISSING_TOOL_RESULT", "Memory", "ModelNode", "mend_tool_calls"]

MISSING_TOOL_RESULT = "Error: this tool call has no result (the run stopped before it ran)."

Memory = int | Callable[[list[AnyMessage]], list[AnyMessage]]
"""A window of the last N messages, or a function from the history to what is sent."""


def mend_tool_calls(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The messages with an error result added for every tool call that has none.

    Providers answer 400 to an AI message whose tool calls are not each
    followed by a tool result; such a history arises when a run stopped
    between the two. The added results go right after the tool results the
    call's message already has.
    """
    if not _has_unanswered_call(messages):  # the usual history: nothing to add
        return list(messages)
    mended: list[AnyMessage] = []
    open_calls: list[tuple[str, str]] = []

    def close_open_calls() -> None:
        mended.extend(
            ToolMessage(
                content=MISSING_TOOL_RESULT, tool_call_id=call_id, name=name, status="error"
            )
            for call_id, name in open_calls
        )
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            open_calls[:] = [c for c in open_calls if c[0] != message.tool_call_id]
        else:
            close_open_calls()
        mended.append(message)
        if isinstance(message, AIMessage):
            open_calls.extend((c.id, c.name) for c in message.tool_calls)
            open_calls.extend(
                (c.id, c.name or "") for c in message.invalid_tool_calls if c.id is not None
            )
    close_open_calls()
    return mended


def _has_unanswered_call(messages: Sequence[AnyMessage]) -> bool:
    """Whether a tool call lacks its result; reads call ids off the parts, no views built."""
    waiting: set[str | None] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            waiting.discard(message.tool_call_id)
            continue
        if waiting:
            return True
        if isinstance(message, AIMessage):
            waiting = {part.id for part in message.content_blocks if type(part) is ToolCallPart}
            if message.invalid_tool_calls:
                waiting.update(c.id for c in message.invalid_tool_calls if c.id is not None)
    return bool(waiting)


class ModelNode:
    """A node that asks `model` for the next message, with `tools` bound.

    - `system`: a prompt (text or `SystemPromptTemplate` rendered from the
      state) sent first in place of any system message in the state;
      without it the state's own system message (e.g. a persona) is used;
    - `options`: this node's `ChatOptions` (a call's own options still win);
    - `memory`: a window of the last N messages, or a function such as
      `functools.partial(trim_messages, max_tokens=4000)`, applied to what
      is sent only.

    Inside a run that streams "messages", the reply is streamed token by
    token; it is stored with the provider's id, or a deterministic one. A
    reply that arrived is kept (`aonce`): when something later in the same
    step fails and the node is retried or resumed, the model is not paid
    twice. A failed call, or a reply that could not be parsed, is retried.
    """

    node_kind = "model"

    def __init__(
        self,
        model: ChatModel,
        *,
        tools: Sequence[object] = (),
        system: str | SystemPromptTemplate | None = None,
        options: ChatOptions | None = None,
        memory: Memory | None = None,
        key: str = "messages",
    ) -> None:
        self.model = model
        self.tools = tuple(tools)
        self.system = system
        self.options = options
        self.memory = memory
        self.key = key

    def prepare(self, state: Any) -> list[AnyMessage]:
        """The messages this node would send for `state`."""
        history = list(messages_of(state, self.key, who=f"ModelNode({self.key!r})"))
        if self.system is not None:
            history = [m for m in history if not isinstance(m, SystemMessage)]
            history.insert(0, self._system_message(state))
        if isinstance(self.memory, int):
            history = trim_messages(history, max_messages=self.memory)
        elif self.memory is not None:
            history = list(self.memory(history))
        return mend_tool_calls(history)

    def _system_message(self, state: Any) -> SystemMessage:
        system = self.system
        if isinstance(system, SystemPromptTemplate):
            return system.to_message(state_variables(state, system.variables))
        return SystemMessage(content=str(system))

    async def __call__(self, state: Any) -> dict[str, list[AIMessage]]:
        messages = self.prepare(state)
        reply = await aonce(call_key("model_reply"), self._reply, messages)
        return {self.key: [reply]}

    async def _reply(self, messages: list[AnyMessage]) -> AIMessage:
        if listening("messages"):
            total: AIMessageChunk | None = None
            async for chunk in self.model.astream(messages, tools=self.tools, options=self.options):
                total = chunk if total is None else total + chunk
            reply = total.to_message() if total is not None else AIMessage(content="")
        else:
            reply = await self.model.ainvoke(messages, tools=self.tools, options=self.options)
        return reply

    def invoke(self, state: Any) -> dict[str, list[AIMessage]]:
        """Run the node outside a graph (sync)."""
        return run_sync(self(state))

    def __repr__(self) -> str:
        return f"ModelNode({self.model!r}, tools={[getattr(t, 'name', t) for t in self.tools]})"
