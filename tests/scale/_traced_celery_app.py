"""A Celery app whose worker processes trace their runs: `celery -A scale._traced_celery_app`.

Each pool process calls `instrument()` when it starts, with the real SDK
writing every finished span as one JSON line to
$FLOWGRAPH_TRACE_SPANS.<pid>, so the test (another process) reads them.
The broker and the store come from $FLOWGRAPH_TRACE_BROKER and
$FLOWGRAPH_TRACE_STORE.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

from flowgraph import END, START, AIMessage, MessagesState, StateGraph
from flowgraph.integrations.celery import make_thread_task


def answer(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"you said: {state.messages[-1].text}")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)


def make_app(broker: str, store: str) -> tuple[Any, Any]:
    """The Celery app and its one task (the same in the test and in the workers)."""
    app = Celery("flowgraph_trace_tests", broker=broker)
    app.conf.update(
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    task = make_thread_task(app, "scale._traced_celery_app:builder", store=store, name="trace.run")
    return app, task


@worker_process_init.connect
def _trace_this_process(**_: Any) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    from flowgraph.integrations.opentelemetry import instrument

    # open for the life of the pool process, which writes a line per span
    out = open(f"{os.environ['FLOWGRAPH_TRACE_SPANS']}.{os.getpid()}", "a")
    exporter = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider)


app, task = make_app(
    os.environ.get("FLOWGRAPH_TRACE_BROKER", "memory://"),
    os.environ.get("FLOWGRAPH_TRACE_STORE", ":memory:"),
)
