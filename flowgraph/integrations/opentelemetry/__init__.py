"""OpenTelemetry traces of flowgraph runs, with the GenAI semantic conventions.

    from flowgraph.integrations.opentelemetry import instrument
    instrument()                     # the global TracerProvider, no message text

After `instrument()`, every run is a span `invoke_agent {graph}`; each node
step is a child span `{node}`; model calls (`chat {model}`) and `ToolNode`
tool calls (`execute_tool {name}`) are children of their node. Attributes
follow the GenAI semantic conventions (`gen_ai.operation.name`,
`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`,
`gen_ai.usage.input_tokens` / `output_tokens`,
`gen_ai.response.finish_reasons`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
`gen_ai.conversation.id` = the thread id), plus `flowgraph.step`,
`flowgraph.node` and `flowgraph.checkpoint_id`. A failure sets the span's
status to ERROR and records the exception. Message text (the conventions'
opt-in `gen_ai.input.messages`, `gen_ai.output.messages`,
`gen_ai.tool.call.arguments` and `.result`) is recorded only with
`capture_content=True`.

Needs only `opentelemetry-api` (`pip install 'flowgraph[otel]'`); the SDK
and an exporter are the application's choice. Not instrumented, flowgraph
pays one attribute read per run, node step, model call and tool call.
"""

from __future__ import annotations

try:
    from opentelemetry import trace
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "flowgraph.integrations.opentelemetry needs opentelemetry-api: "
        "pip install 'flowgraph[otel]'"
    ) from exc

import flowgraph._hooks as _hooks
from flowgraph.integrations.opentelemetry._observer import SpanObserver

__all__ = ["SpanObserver", "instrument", "is_instrumented", "uninstrument"]

_SCOPE = "flowgraph"
_SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
"""The semantic conventions version whose GenAI attributes the spans carry."""


def instrument(
    tracer_provider: trace.TracerProvider | None = None, capture_content: bool = False
) -> None:
    """Trace every flowgraph run from now on, in this process.

    `tracer_provider`: where spans go (default: the global one, as set by
    `trace.set_tracer_provider`). `capture_content=True` also records
    messages, tool arguments and results, which may hold personal data.
    Calling it again replaces the earlier settings. Each process traces
    on its own: a Celery worker calls it at start (e.g. on
    `worker_process_init`).
    """
    tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider, schema_url=_SCHEMA_URL)
    _hooks.set_observer(SpanObserver(tracer, capture_content=capture_content))


def uninstrument() -> None:
    """Stop tracing: runs started from now on make no spans (and cost nothing again)."""
    if isinstance(_hooks.observer, SpanObserver):
        _hooks.set_observer(None)


def is_instrumented() -> bool:
    """Whether `instrument()` is in force."""
    return isinstance(_hooks.observer, SpanObserver)
