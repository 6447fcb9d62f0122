"""The OpenTelemetry tests' spans: the real SDK, its in-memory exporter, the tree they form."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flowgraph.integrations.opentelemetry import instrument, uninstrument


class Spans:
    """The spans one test made, read back from the SDK's in-memory exporter."""

    def __init__(self, exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
        self.exporter = exporter
        self.provider = provider

    def all(self) -> list[ReadableSpan]:
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.tree()}"
        return found[0]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        for other in self.all():
            if other.context is not None and other.context.span_id == span.parent.span_id:
                return other
        return None

    def tree(self) -> list[str]:
        """Every span as an indented line, children under their parent in start order."""
        spans = self.all()
        ids = {s.context.span_id for s in spans if s.context is not None}
        lines: list[str] = []

        def walk(parent_id: int | None, depth: int) -> None:
            for span in spans:
                mine = span.parent.span_id if span.parent is not None else None
                if mine not in ids:
                    mine = None  # parented outside this test's spans (or a root)
                if mine == parent_id:
                    lines.append("  " * depth + span.name)
                    assert span.context is not None
                    walk(span.context.span_id, depth + 1)

        walk(None, 0)
        return lines

    def clear(self) -> None:
        self.exporter.clear()


def traced(capture_content: bool = False) -> Iterator[Spans]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider, capture_content=capture_content)
    try:
        yield Spans(exporter, provider)
    finally:
        uninstrument()
        provider.shutdown()
