"""The observer that turns runs, node steps, model calls and tool calls into OpenTelemetry spans.

Spans nest as the work does: a run (`invoke_agent {graph}`) is the current
span while its nodes run; each task attempt (`{node}`) is current while its
node runs, so model calls (`chat {model}`) and tool calls
(`execute_tool {name}`) made inside are its children, and so is any span a
node's own code makes (an HTTP client's, a database driver's). OpenTelemetry
keeps the current span in a context variable, and the engine runs each task
in a copy of its caller's context (worker threads for sync nodes included),
so the nesting holds across threads, `Send` branches and subgraphs.

The thread id travels in the same context (under a key of our own), so a
model call knows its conversation without the models layer knowing about
runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from flowgraph._context import TaskScope
from flowgraph.errors import ModelError
from flowgraph.graph._core.interrupt import GraphInterrupt
from flowgraph.integrations.opentelemetry._content import (
    as_json,
    input_messages,
    output_messages,
)
from flowgraph.messages import AIMessage, ToolMessage

__all__ = ["SpanObserver"]

logger = logging.getLogger("flowgraph.integrations.opentelemetry")

_THREAD = otel_context.create_key("flowgraph.thread_id")
"""The context key under which a run leaves its thread id for the model calls inside it."""

_REQUEST_OPTIONS = (
    ("temperature", "gen_ai.request.temperature"),
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("top_p", "gen_ai.request.top_p"),
    ("seed", "gen_ai.request.seed"),
)

_Ended = Callable[[Span, Any], None]


class _Watch:
    """One span from start to `end`: attributes of the result or the error, then closed.

    A span made current at start (`token`) stops being current at the end;
    start and end are called in the same context (see flowgraph._hooks).
    A second `end` is ignored: a stream whose reader leaves after the reply
    is complete reports twice.
    """

    __slots__ = ("done", "on_end", "span", "token")

    def __init__(self, span: Span, token: object | None, on_end: _Ended | None) -> None:
        self.span = span
        self.token = token
        self.on_end = on_end
        self.done = False

    def end(self, result: Any = None, error: BaseException | None = None) -> None:
        if self.done:
            return
        self.done = True
        span = self.span
        try:
            if span.is_recording():
                if error is not None:
                    _record_error(span, error)
                elif result is not None and self.on_end is not None:
                    self.on_end(span, result)
        except Exception:  # tracing must never break the work it watches
            logger.exception("recording the end of span %r failed", span)
        finally:
            span.end()
            if self.token is not None:
                otel_context.detach(self.token)  # type: ignore[arg-type]  # attach()'s token


def _error_type(error: BaseException) -> str:
    """`error.type`: the provider's status code when there is one, else the exception's class."""
    if isinstance(error, ModelError) and error.status_code is not None:
        return str(error.status_code)
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _record_error(span: Span, error: BaseException) -> None:
    if isinstance(error, GraphInterrupt):  # a pause waiting for an answer: not a failure
        span.set_attribute("flowgraph.interrupted", True)
        return
    if isinstance(error, GeneratorExit):  # a stream whose reader stopped early
        span.set_attribute("flowgraph.stream_closed", True)
        return
    span.record_exception(error)
    span.set_attribute("error.type", _error_type(error))
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


# -- what each kind of span records when it ends ----------------------------------


def _run_ended(span: Span, run: Any) -> None:
    saver = run.saver
    if saver is not None:
        span.set_attribute("flowgraph.run_id", saver.run_id)
        if saver.cursor.head is not None:
            span.set_attribute("flowgraph.checkpoint_id", saver.cursor.head)
    span.set_attribute("flowgraph.step", run.step)
    usage = run.usage
    if usage.model_calls:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set_attribute("flowgraph.model_calls", usage.model_calls)
    span.set_attribute("flowgraph.tool_calls", usage.tool_calls)
    if run.interrupts:
        span.set_attribute("flowgraph.interrupted", True)
        span.set_attribute("flowgraph.interrupt_ids", [i.id for i in run.interrupts])


def _node_ended(span: Span, result: Any) -> None:
    keys = sorted({key for key, _ in result.writes})
    if keys:
        span.set_attribute("flowgraph.writes", keys)


class SpanObserver:
    """The `flowgraph._hooks.Observer` that `instrument()` installs."""

    def __init__(self, tracer: Tracer, *, capture_content: bool) -> None:
        self.tracer = tracer
        self.capture_content = capture_content

    # -- runs and node steps

    def run_started(self, graph: str, thread_id: str | None, run_id: str | None) -> _Watch:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": graph,
        }
        if thread_id is not None:
            attributes["gen_ai.conversation.id"] = thread_id
        if run_id is not None:
            attributes["flowgraph.run_id"] = run_id
        span = self.tracer.start_span(
            f"invoke_agent {graph}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        current = trace.set_span_in_context(span)
        if thread_id is not None:
            current = otel_context.set_value(_THREAD, thread_id, current)
        return _Watch(span, otel_context.attach(current), _run_ended)

    def node_started(self, scope: TaskScope, attempt: int, checkpoint_id: str | None) -> _Watch:
        attributes: dict[str, Any] = {
            "flowgraph.node": scope.node,
            "flowgraph.step": scope.step,
            "flowgraph.task": scope.task_index,
            "flowgraph.attempt": attempt,
        }
        if checkpoint_id is not None:
            attributes["flowgraph.checkpoint_id"] = checkpoint_id
        span = self.tracer.start_span(scope.node, kind=SpanKind.INTERNAL, attributes=attributes)
        return _Watch(span, otel_context.attach(trace.set_span_in_context(span)), _node_ended)

    # -- model and tool calls

    def model_started(self, provider: str, call: Any) -> _Watch:
        options = call.options
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": call.model,
        }
        thread_id = otel_context.get_value(_THREAD)
        if thread_id is not None:
            attributes["gen_ai.conversation.id"] = thread_id
        for name, key in _REQUEST_OPTIONS:
            value = getattr(options, name)
            if value is not None:
                attributes[key] = value
        if options.stop:
            attributes["gen_ai.request.stop_sequences"] = list(options.stop)
        if options.response_format is not None:
            attributes["gen_ai.output.type"] = "json"
        span = self.tracer.start_span(
            f"chat {call.model}", kind=SpanKind.CLIENT, attributes=attributes
        )
        if self.capture_content and span.is_recording():
            span.set_attribute("gen_ai.input.messages", input_messages(call.messages))
        return _Watch(span, None, self._model_ended)

    def _model_ended(self, span: Span, message: AIMessage) -> None:
        metadata = message.response_metadata
        if metadata.get("model_name"):
            span.set_attribute("gen_ai.response.model", str(metadata["model_name"]))
        if message.id:
            span.set_attribute("gen_ai.response.id", message.id)
        if metadata.get("finish_reason"):
            span.set_attribute("gen_ai.response.finish_reasons", [str(metadata["finish_reason"])])
        usage = message.usage
        if usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            if usage.cached_tokens is not None:
                span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cached_tokens)
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", output_messages(message))

    def tool_started(self, call: Any, tool: Any) -> _Watch:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if tool is not None and tool.description:
            attributes["gen_ai.tool.description"] = tool.description
        span = self.tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        if self.capture_content and span.is_recording():
            span.set_attribute("gen_ai.tool.call.arguments", as_json(call.args))
        return _Watch(span, otel_context.attach(trace.set_span_in_context(span)), self._tool_ended)

    def _tool_ended(self, span: Span, message: ToolMessage) -> None:
        if message.status == "error":  # a tool's own error reply (an MCP server's isError)
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, message.text))
        if self.capture_content:
            content = message.content
            span.set_attribute(
                "gen_ai.tool.call.result", content if isinstance(content, str) else as_json(content)
            )

    # -- across processes

    def carrier(self) -> dict[str, str]:
        found: dict[str, str] = {}
        propagate.inject(found)
        return found

    @contextmanager
    def continued(self, carrier: Mapping[str, str]) -> Iterator[None]:
        if trace.get_current_span().get_span_context().is_valid:
            yield  # already in a trace (a Celery instrumentation's span): stay in it
            return
        token = otel_context.attach(propagate.extract(carrier))
        try:
            yield
        finally:
            otel_context.detach(token)
