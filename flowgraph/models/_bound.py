"""`model.bind_tools(tools)`: a chat model that sends those tools with every call.

LangChain's habit, kept as it reads: `llm_with_tools = llm.bind_tools([search])`,
then `llm_with_tools.invoke(state["messages"])` inside a node. The bound model
is a thin wrapper: every call goes through the wrapped model's own `invoke` /
`stream` / `ainvoke` / `astream`, so it charges the run's Budget, notifies
listeners and streams its reply to a running graph exactly as the model does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from flowgraph.messages import AIMessage, AIMessageChunk
from flowgraph.models._base import (
    ChatOptions,
    Messages,
    StreamingHandler,
    ToolChoice,
    tool_specs,
)

__all__ = ["BoundChatModel", "tool_choice_of"]


def tool_choice_of(choice: object) -> ToolChoice | None:
    """LangChain's `tool_choice` spellings as ours: "any"/True -> "required", dicts -> a name.

    "auto", "none", "required" and a tool's name pass as they are; OpenAI's
    `{"type": "function", "function": {"name": ...}}` and Anthropic's
    `{"type": "tool", "name": ...}` name one tool; None and False set nothing.
    """
    if choice is None or choice is False:
        return None
    if choice is True or choice == "any":
        return "required"
    if isinstance(choice, str):
        return choice
    if isinstance(choice, Mapping):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
        if isinstance(name, str):
            return name
        kind = choice.get("type")
        if kind in ("auto", "none", "any"):
            return "required" if kind == "any" else str(kind)
    raise ValueError(
        f"tool_choice={choice!r} is not understood; use 'auto', 'none', 'required' (or 'any'), "
        "or a tool's name"
    )


class BoundChatModel:
    """A chat model with tools and options bound to it (what `bind_tools` returns).

    A call's own `tools=` replace the bound ones; its `options=` win over the
    bound options field by field, which win over the model's defaults.
    Anything else (`requests` of a scripted model, `model`, `listeners`) is
    read from the wrapped model.
    """

    def __init__(self, bound: Any, tools: Sequence[object], options: ChatOptions) -> None:
        tool_specs(tools)  # a tool that cannot be described fails here, not at the first call
        self.bound = bound
        """The wrapped model."""
        self.tools = tuple(tools)
        self.options = options

    def __getattr__(self, name: str) -> Any:
        if name == "bound":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.bound, name)

    def __repr__(self) -> str:
        names = [getattr(t, "name", getattr(t, "__name__", t)) for t in self.tools]
        return f"{self.bound!r}.bind_tools({names})"

    def bind_tools(
        self, tools: Sequence[object], *, tool_choice: object = None, **options: Any
    ) -> BoundChatModel:
        """The wrapped model with these tools instead (the bound options kept, then updated)."""
        return self.bound.bind_tools(  # type: ignore[no-any-return]  # the model's own
            tools, tool_choice=tool_choice, options=ChatOptions.merge(self.options), **options
        )

    def _call(
        self, tools: Sequence[object], options: ChatOptions | None
    ) -> tuple[Sequence[object], ChatOptions]:
        return (tools or self.tools), ChatOptions.merge(self.options, options)

    def invoke(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AIMessage:
        """The reply, the bound tools offered (see the wrapped model's `invoke`)."""
        tools, options = self._call(tools, options)
        return self.bound.invoke(  # type: ignore[no-any-return]
            messages, tools=tools, options=options, **_handler(handler)
        )

    async def ainvoke(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AIMessage:
        """`invoke` without blocking the event loop."""
        tools, options = self._call(tools, options)
        return await self.bound.ainvoke(  # type: ignore[no-any-return]
            messages, tools=tools, options=options, **_handler(handler)
        )

    def stream(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> Iterator[AIMessageChunk]:
        """The reply in chunks, the bound tools offered."""
        tools, options = self._call(tools, options)
        return self.bound.stream(  # type: ignore[no-any-return]
            messages, tools=tools, options=options, **_handler(handler)
        )

    def astream(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AsyncIterator[AIMessageChunk]:
        """`stream` without blocking the event loop."""
        tools, options = self._call(tools, options)
        return self.bound.astream(  # type: ignore[no-any-return]
            messages, tools=tools, options=options, **_handler(handler)
        )


def _handler(handler: StreamingHandler | None) -> dict[str, Any]:
    """`handler=` only when given: a model of your own may not take it."""
    return {} if handler is None else {"handler": handler}
