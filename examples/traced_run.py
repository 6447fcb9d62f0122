"""A traced run: each run, node step, model call and tool call becomes an OpenTelemetry span.

`instrument()` sends flowgraph's spans to an OpenTelemetry TracerProvider;
here the SDK's, with two exporters: one prints each trace as a tree when
its run ends, the other (the SDK's ConsoleSpanExporter) writes every span
as JSON, as an OTLP backend would receive it. In production you would add
`BatchSpanProcessor(OTLPSpanExporter())` instead and look at the traces in
Jaeger, Grafana Tempo, Honeycomb or any other OTLP backend.

    python examples/traced_run.py [path/to/checkpoints.db]   # the tree, then one span as JSON
    flowgraph run examples/traced_run.py "Weather in Paris and in Atlantis?"  # tree on stderr

Needs the OpenTelemetry SDK: `pip install 'flowgraph[otel]' opentelemetry-sdk`
(flowgraph itself needs only opentelemetry-api). `app` is a factory: the CLI
calls it, which turns tracing on for its process; importing this file runs nothing.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import StatusCode

from flowgraph import CompiledGraph, HumanMessage, create_react_agent, tool
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.integrations.opentelemetry import instrument
from flowgraph.models import ScriptedChatModel, init_chat_model

FORECASTS = {"paris": "sunny, 24°C", "rome": "cloudy, 19°C"}


@tool
def get_weather(city: str) -> str:
    """Look up today's weather in a city."""
    if city.lower() not in FORECASTS:
        raise LookupError(f"no weather station in {city}")
    return FORECASTS[city.lower()]


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: looks up every city named, then sums up what it found."""
    last = messages[-1]
    if last.type == "tool":
        results = [m for m in messages if m.type == "tool"]
        found = [m.text for m in results if m.status == "success"]
        missing = len(results) - len(found)
        return f"Found: {'; '.join(found) or 'nothing'}. Unknown cities: {missing}."
    cities = re.findall(r"\b(?:in|and) ([A-Z][a-z]+)", last.text)
    if not cities:
        return "Ask me about the weather in a city, e.g. 'Weather in Paris?'."
    return {"tool_calls": [{"name": "get_weather", "args": {"city": c}} for c in cities]}


def model() -> Any:
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


class TreePrinter(SpanExporter):
    """Prints each trace as an indented tree of spans once its root span has ended."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.traces: dict[int, list[ReadableSpan]] = {}

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            assert span.context is not None
            found = self.traces.setdefault(span.context.trace_id, [])
            found.append(span)
            if span.parent is None:  # the root ended: the whole trace is here
                del self.traces[span.context.trace_id]
                print(f"trace {span.context.trace_id:032x}", file=self.out)
                self._print(found, None, 0)
        return SpanExportResult.SUCCESS

    def _print(self, spans: list[ReadableSpan], parent: int | None, depth: int) -> None:
        for span in sorted(spans, key=lambda s: s.start_time or 0):
            if (span.parent.span_id if span.parent else None) != parent:
                continue
            ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
            print(f"{'  ' * depth}{span.name}  {_summary(span)}  ({ms:.1f} ms)", file=self.out)
            assert span.context is not None
            self._print(spans, span.context.span_id, depth + 1)


def _summary(span: ReadableSpan) -> str:
    """The attributes worth a glance, per kind of span."""
    a = dict(span.attributes or {})
    operation = a.get("gen_ai.operation.name")
    tokens = f"tokens={a.get('gen_ai.usage.input_tokens')}+{a.get('gen_ai.usage.output_tokens')}"
    if operation == "invoke_agent":
        text = f"thread={a.get('gen_ai.conversation.id')} steps={a.get('flowgraph.step')} {tokens}"
    elif operation == "chat":
        reasons = ",".join(a.get("gen_ai.response.finish_reasons", ()))  # type: ignore[arg-type]
        text = f"{a.get('gen_ai.response.model')} finish={reasons} {tokens}"
    elif operation == "execute_tool":
        text = f"{a.get('gen_ai.tool.call.id')}"
    else:
        text = f"step {a.get('flowgraph.step')}"
    if span.status.status_code is StatusCode.ERROR:
        text += f"  ERROR {span.status.description}"
    return text


def traced(out: TextIO, json_out: TextIO | None = None) -> TracerProvider:
    """A TracerProvider printing trees to `out` (and every span as JSON to `json_out`)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(TreePrinter(out)))
    if json_out is not None:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=json_out)))
    instrument(provider)  # capture_content=True would also record the messages' text
    return provider


def agent() -> CompiledGraph:
    return create_react_agent(model(), [get_weather], name="weather_agent")


def app() -> CompiledGraph:
    """What `flowgraph run` loads: the agent, with this process's runs traced to stderr."""
    traced(sys.stderr)
    return agent()


def main(db: Path) -> None:
    spans_json = io.StringIO()
    traced(sys.stdout, spans_json)
    graph = agent().with_checkpointer(SQLiteCheckpointer(db))
    question = "Weather in Paris and in Atlantis?"
    print(f"user  > {question}")
    out = graph.invoke({"messages": [HumanMessage(question)]}, thread_id="trip")
    print(f"agent > {out.messages[-1].text}")

    head = graph.get_state("trip").checkpoint_id
    recorded = f'"flowgraph.checkpoint_id": "{head}"' in spans_json.getvalue()
    print(f"\nThe run span names the thread's head checkpoint ({head}): {recorded}")
    chat = spans_json.getvalue().split("\n}\n")[0] + "\n}"
    print("\nThe first span as the console exporter writes it (one JSON object per span):")
    print(chat)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder) / "traced.db")
