"""ToolNode: answer every tool call of the last AIMessage, concurrently, in call order.

Each call gets exactly one ToolMessage with its `tool_call_id`. What goes
wrong -- an unknown tool, arguments that fail validation, an exception, a
timeout, arguments the model sent as broken JSON -- becomes a
`status="error"` message written for the model to read and correct, or,
with `handle_errors=False`, a `ToolError`.

A call that already has a ToolMessage after its AIMessage is not run
again: when a step is retried or resumed, or a person answered a call with
`update_state`, only the unanswered calls execute. Within a step, each
call runs through `aonce` (key: its call id): a call that returned is
never run again when the node is retried or resumed because a sibling
call, or anything after it, failed; only calls that failed, or were cut
off mid-way by a crash, run again.

A tool may return a `Command(update=..., goto=...)` instead of a result,
as in LangGraph: its update is applied (it must answer its own call with a
ToolMessage among its messages), and the run goes where it says, after
the other calls' messages in call order. `graph=Command.PARENT` hands off
to the graph that runs this one as a node (a multi-agent handoff).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

import flowgraph._hooks as _hooks
from flowgraph._context import charge_tool_calls, current_task
from flowgraph.errors import BudgetExceededError, InvalidUpdateError, ToolError
from flowgraph.graph import Command
from flowgraph.graph._core.pool import run_in_thread
from flowgraph.graph._engine.bridge import run_sync
from flowgraph.graph._engine.once import aonce
from flowgraph.graph._thread.reuse import answer_from_origin
from flowgraph.messages import (
    AIMessage,
    AnyMessage,
    AudioPart,
    FilePart,
    ImagePart,
    InvalidToolCall,
    TextPart,
    ToolCall,
    ToolMessage,
    VideoPart,
    coerce_messages,
)
from flowgraph.nodes._state import messages_of
from flowgraph.tools import Tool

__all__ = ["ErrorHandler", "ToolNode", "pending_tool_calls"]

ErrorHandler = bool | str | Callable[[Exception], str]
"""True: the exception's type and text go to the model; a string: that text;
a function: its text for the exception; False: raise ToolError instead."""

_CONTENT_PARTS = (TextPart, ImagePart, AudioPart, VideoPart, FilePart)


class _Failure(Exception):
    """A call that could not be answered normally: `text` is what the model reads."""

    def __init__(self, text: str, cause: BaseException | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.cause = cause


def _last_ai_message(messages: Sequence[AnyMessage]) -> tuple[int, AIMessage] | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            return index, message
    return None


def pending_tool_calls(
    messages: Sequence[AnyMessage],
) -> tuple[AIMessage | None, list[ToolCall | InvalidToolCall]]:
    """The last AIMessage and its calls that no ToolMessage after it answers yet, in order.

    Only ToolMessages *after* that AIMessage count: some providers reuse
    call ids across turns ("call_0"), so an answer from an earlier turn must
    not silence a new call. Invalid calls come after the valid ones; those
    without an id or name cannot be answered and are left out (converters
    do not send them to the provider either).
    """
    found = _last_ai_message(messages)
    if found is None:
        return None, []
    index, message = found
    calls: list[ToolCall | InvalidToolCall]
    if index == len(messages) - 1:  # the usual case: nothing after it answers a call yet
        calls = message.tool_calls  # type: ignore[assignment]  # a fresh list of views
        answered: set[str | None] = set()
    else:
        answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
        calls = [call for call in message.tool_calls if call.id not in answered]
    if message.invalid_tool_calls:
        calls.extend(
            call
            for call in message.invalid_tool_calls
            if call.id is not None and call.name is not None and call.id not in answered
        )
    return message, calls


def _from_origin(calls: Sequence[ToolCall | InvalidToolCall]) -> list[ToolMessage | None]:
    """Each call's result as another branch of the thread stored it, or None: run it."""
    return [answer_from_origin(c) if isinstance(c, ToolCall) else None for c in calls]


def _once_keys(calls: Sequence[ToolCall | InvalidToolCall]) -> list[str]:
    """Each call's `once` key: its id (a provider that repeats an id gets `id#2`, ...)."""
    if len(calls) == 1:
        return [f"tool_call:{calls[0].id or ''}"]
    seen: dict[str, int] = {}
    keys = []
    for call in calls:
        call_id = call.id or ""
        count = seen[call_id] = seen.get(call_id, 0) + 1
        keys.append(f"tool_call:{call_id}" if count == 1 else f"tool_call:{call_id}#{count}")
    return keys


def _as_content(result: Any) -> str | list[Any]:
    """What the model reads: a string as is, content parts as parts, anything else as JSON."""
    if isinstance(result, str):
        return result
    if (
        isinstance(result, list)
        and result
        and all(isinstance(part, _CONTENT_PARTS) for part in result)
    ):
        return result
    return json.dumps(to_jsonable_python(result, fallback=str), ensure_ascii=False)


async def _in_place(call: Callable[[], Any]) -> Any:
    """A sync tool's call on the run's own thread: nothing to overlap it with, and no
    other run waits on this event loop (see `ToolNode.__call__`)."""
    return call()


def _in_worker(call: Callable[[], Any]) -> Awaitable[Any]:
    """A sync tool's call on one of the engine's worker threads (`graph._core.pool`)."""
    return run_in_thread(_called, call)


def _called(call: Callable[[], Any]) -> Any:
    return call()


class ToolNode:
    """A graph node that runs the tool calls of the last AIMessage.

    `ToolNode([get_weather, search])`: plain functions are wrapped with
    `tool()`. Calls run concurrently (sync tools in worker threads, except
    a step's lone call under the sync `invoke`, which runs in place when no
    `timeout` is set: docs/prebuilt-nodes.md); the result keeps call
    order. `timeout` bounds each call, in seconds (a sync tool's thread
    cannot be stopped and finishes in the background; its result is
    discarded). Before anything runs, the calls are charged to
    the run's `Budget(max_tool_calls=...)`.
    """

    node_kind = "tool"

    def __init__(
        self,
        tools: Sequence[Tool | Callable[..., Any]],
        *,
        handle_errors: ErrorHandler = True,
        timeout: float | None = None,
        messages_key: str = "messages",
    ) -> None:
        self.tools: dict[str, Tool] = {}
        for item in tools:
            wrapped = item if isinstance(item, Tool) else Tool(item)
            if wrapped.name in self.tools:
                raise ValueError(
                    f"Two tools are named '{wrapped.name}'; tool names must be unique "
                    "(rename one with @tool('other_name'))"
                )
            self.tools[wrapped.name] = wrapped
        if timeout is not None and timeout <= 0:
            raise ValueError(
                f"ToolNode timeout must be a positive number of seconds, not {timeout}"
            )
        self.handle_errors = handle_errors
        self.timeout = timeout
        self.messages_key = messages_key

    def __repr__(self) -> str:
        return f"ToolNode([{', '.join(self.tools)}])"

    @property
    def runs_without_task(self) -> bool:
        """Whether a sync `invoke` may step this node without an asyncio Task (see
        `flowgraph.graph._engine.bridge.run_sync`): only flowgraph's code awaits in it, since
        no tool is async and there is no timeout (`asyncio.timeout` needs a Task)."""
        return self.timeout is None and not any(tool.is_async for tool in self.tools.values())

    # -- running --------------------------------------------------------------

    async def __call__(self, state: Any) -> dict[str, list[ToolMessage]] | Command[Any]:
        """Answer the pending calls: `{"messages": [ToolMessage, ...]}` in call order.

        When a tool returned a Command, the answer is one Command: every
        call's messages and updates in call order, and the tools' gotos.
        """
        messages = messages_of(state, self.messages_key, who="ToolNode")
        message, calls = pending_tool_calls(messages)
        if message is None:
            raise ValueError(
                f"ToolNode found no AIMessage in state field '{self.messages_key}'; it answers "
                "the tool calls of the last AIMessage, so route to it after a model node "
                "(add_conditional_edges('agent', tools_condition))"
            )
        if not calls:
            return {self.messages_key: []}
        scope = current_task.get()
        # on a branch of a thread, a call another branch already ran takes its stored result
        stored = _from_origin(calls) if scope is not None and scope.reuse is not None else []
        charge_tool_calls(stored.count(None) if stored else len(calls))  # reused: not charged
        answers: list[Any] = stored or [None] * len(calls)
        keys = _once_keys(calls)
        waiting = [i for i, answer in enumerate(answers) if answer is None]
        if len(waiting) == 1:  # nothing to overlap: no gather, and perhaps no thread
            here = scope is not None and scope.inline and self.timeout is None
            i = waiting[0]
            answers[i] = await self._answer(calls[i], keys[i], state, here)
        elif waiting:
            outcomes = await asyncio.gather(
                *(self._answer(calls[i], keys[i], state, False) for i in waiting),
                return_exceptions=True,
            )
            for i, outcome in zip(waiting, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    raise outcome
                answers[i] = outcome
        for answer in answers:
            if isinstance(answer, Command):
                return _combined(self.messages_key, calls, answers)
        return {self.messages_key: answers}  # no Command among them

    async def ainvoke(self, state: Any) -> dict[str, list[ToolMessage]] | Command[Any]:
        """The node, called from async code (the same as awaiting the node itself)."""
        return await self(state)

    def invoke(self, state: Any) -> dict[str, list[ToolMessage]] | Command[Any]:
        """The node, called from sync code outside a graph."""
        return run_sync(self(state))

    async def _answer(
        self, call: ToolCall | InvalidToolCall, key: str, state: Any, here: bool
    ) -> ToolMessage | Command[Any]:
        call_id = call.id or ""
        name = call.name or ""
        try:
            if isinstance(call, InvalidToolCall):
                raise _Failure(
                    f"Error: the arguments of your call to `{name}` are not valid JSON "
                    f"({call.error or 'could not parse'}). Call `{name}` again with a JSON "
                    "object of arguments."
                )
            message = await aonce(key, self._run, call, state, here)
        except _Failure as failure:
            if self.handle_errors is False:
                raise ToolError(failure.text, tool_name=name, tool_call_id=call_id) from (
                    failure.cause
                )
            return ToolMessage(
                content=failure.text, tool_call_id=call_id, name=name, status="error"
            )
        return message

    async def _run(self, call: ToolCall, state: Any, here: bool) -> ToolMessage | Command[Any]:
        """The call, watched by the observer (tracing) when one is set."""
        observer = _hooks.observer
        if observer is None:
            return await self._execute(call, state, here)
        seen = observer.tool_started(call, self.tools.get(call.name))
        try:
            message = await self._execute(call, state, here)
        except _Failure as failure:
            seen.end(error=failure.cause or ToolError(failure.text, tool_name=call.name))
            raise
        except BaseException as exc:
            seen.end(error=exc)
            raise
        seen.end(message if isinstance(message, ToolMessage) else self._reply_in(message, call))
        return message

    def _reply_in(self, command: Command[Any], call: ToolCall) -> ToolMessage:
        """A tool's Command as its call's result for an observer: the ToolMessage in its
        update that answers the call (a handoff may have none: then a note of the Command)."""
        try:
            for key, value in _pairs(command.update, call.name):
                if key == self.messages_key:
                    for message in coerce_messages(value):
                        if isinstance(message, ToolMessage) and message.tool_call_id == call.id:
                            return message
        except (InvalidUpdateError, ValueError):
            pass  # a malformed update fails the node after this, with its own error
        return ToolMessage(
            content=f"Command(goto={command.goto!r})", tool_call_id=call.id, name=call.name
        )

    async def _execute(self, call: ToolCall, state: Any, here: bool) -> ToolMessage | Command[Any]:
        """Run one call: a sync tool in place when `here` (see `__call__`), else in a thread."""
        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "none"
            raise _Failure(f"`{call.name}` is not a tool; available: {available}")
        try:
            kwargs = tool.parse_args(call.args)
        except ToolError as exc:
            raise _Failure(str(exc), exc) from None
        offload = _in_place if here else _in_worker
        if self.timeout is None:
            try:
                result = await tool.arun_validated(
                    kwargs, state=state, tool_call_id=call.id, offload=offload
                )
            except BudgetExceededError:
                raise  # the run stops: a tool's own model calls used up the budget
            except Exception as exc:
                raise _Failure(self._error_text(call.name, exc), exc) from None
            return self._message(tool, call, result)
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                result = await tool.arun_validated(
                    kwargs, state=state, tool_call_id=call.id, offload=offload
                )
        except BudgetExceededError:
            raise  # the run stops: a tool's own model calls used up the budget
        except TimeoutError as exc:
            if not deadline.expired():  # the tool's own TimeoutError, not our deadline
                raise _Failure(self._error_text(call.name, exc), exc) from None
            raise _Failure(
                f"Error: tool `{call.name}` did not finish within {self.timeout:g} s. "
                "Try again, perhaps with a smaller request.",
                exc,
            ) from None
        except Exception as exc:
            raise _Failure(self._error_text(call.name, exc), exc) from None
        return self._message(tool, call, result)

    def _error_text(self, name: str, exc: Exception) -> str:
        handler = self.handle_errors
        if isinstance(handler, str):
            return handler
        if callable(handler):
            return handler(exc)
        return f"Error: tool `{name}` raised {type(exc).__name__}: {exc}"

    def _message(self, tool: Tool, call: ToolCall, result: Any) -> ToolMessage | Command[Any]:
        if isinstance(result, Command):  # applied with the other answers (see `_combined`)
            return result
        if isinstance(result, ToolMessage):
            return result.model_copy(
                update={"tool_call_id": call.id, "name": result.name or call.name}
            )
        if tool.response_format == "content_and_artifact":
            result, artifact = result
            return ToolMessage(
                content=_as_content(result),
                tool_call_id=call.id,
                name=call.name,
                artifact=artifact,
            )
        # no artifact argument: plain strings take the message's unvalidated fast path
        return ToolMessage(content=_as_content(result), tool_call_id=call.id, name=call.name)


# -- tools that return a Command ----------------------------------------------------


def _pairs(update: Any, tool: str) -> list[tuple[str, Any]]:
    """A tool's Command update as (field, value) pairs in order."""
    if update is None:
        return []
    if isinstance(update, Mapping):
        return list(update.items())
    if isinstance(update, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str) for p in update
    ):
        return [(key, value) for key, value in update]
    raise InvalidUpdateError(
        f"Tool `{tool}` returned Command(update=...) with a {type(update).__name__}; update "
        "is a dict of state fields (or a list of (field, value) pairs)"
    )


def _answering(
    messages_key: str, call: ToolCall | InvalidToolCall, pairs: list[tuple[str, Any]]
) -> tuple[list[tuple[str, Any]], bool]:
    """The pairs with the call's ToolMessage named after its tool; and whether there is one."""
    answered = False
    out = []
    for key, value in pairs:
        if key == messages_key:
            messages = coerce_messages(value)
            for i, message in enumerate(messages):
                if isinstance(message, ToolMessage) and message.tool_call_id == call.id:
                    answered = True
                    if message.name is None:
                        messages[i] = message.model_copy(update={"name": call.name})
            value = messages
        out.append((key, value))
    return out, answered


def _combined(
    messages_key: str,
    calls: Sequence[ToolCall | InvalidToolCall],
    answers: Sequence[ToolMessage | Command[Any]],
) -> Command[Any]:
    """Every call's answer as one Command: messages and updates in call order, all gotos.

    A tool's Command for this graph must answer its call with a ToolMessage
    (a provider rejects a call left without one). If any tool hands off to
    the parent graph, the answer is that handoff: the subgraph stops there,
    so only the handoffs' updates and gotos go up, as in LangGraph.
    """
    writes: list[tuple[str, Any]] = []
    goto: list[Any] = []
    parent_writes: list[tuple[str, Any]] = []
    parent_goto: list[Any] = []
    for call, answer in zip(calls, answers, strict=True):
        if isinstance(answer, ToolMessage):
            writes.append((messages_key, [answer]))
            continue
        name = call.name or ""
        if answer.has_resume:
            raise InvalidUpdateError(
                f"Tool `{name}` returned Command(resume=...); resume is given to invoke()"
            )
        pairs, answered = _answering(messages_key, call, _pairs(answer.update, name))
        if answer.graph == Command.PARENT:
            parent_writes.extend(pairs)
            parent_goto.extend(answer.goto_targets())
            continue
        if answer.graph is not None:
            raise InvalidUpdateError(
                f"Tool `{name}` returned Command(graph={answer.graph!r}); graph is None or "
                "Command.PARENT"
            )
        if not answered:
            raise InvalidUpdateError(
                f"Tool `{name}` returned a Command whose update does not answer its call "
                f"{call.id!r}: every tool call needs a ToolMessage with its tool_call_id. "
                "Return Command(update={'"
                + messages_key
                + "': [ToolMessage('...', tool_call_id=tool_call_id)], ...}), with the id "
                "from an InjectedToolCallId parameter"
            )
        writes.extend(pairs)
        goto.extend(answer.goto_targets())
    if parent_writes or parent_goto:
        return Command(update=parent_writes, goto=parent_goto, graph=Command.PARENT)
    return Command(update=writes, goto=goto)
