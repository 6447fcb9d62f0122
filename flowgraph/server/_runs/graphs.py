"""The graphs a server serves, as LangGraph Server's assistants.

Each graph id is one assistant whose `assistant_id` is the UUID LangGraph
derives from the graph id (uuid5 of the URL namespace), so a client that
stored an assistant id from LangGraph Server finds the same one here; every
endpoint accepts the graph id too.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter

from flowgraph.graph import CompiledGraph, Entrypoint
from flowgraph.server._wire.convert import iso
from flowgraph.server._wire.responses import ApiError

__all__ = ["GraphEntry", "Graphs", "assistant_uuid"]

ASSISTANT_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""The namespace LangGraph Server derives a graph's system assistant id from."""


def assistant_uuid(graph_id: str) -> str:
    return str(uuid.uuid5(ASSISTANT_NAMESPACE, graph_id))


@dataclass(slots=True)
class GraphEntry:
    """One served graph: its id, its app (bound to the server's store) and its assistant."""

    graph_id: str
    app: CompiledGraph
    assistant_id: str
    created_at: float = field(default_factory=time.time)

    @property
    def message_fields(self) -> frozenset[str]:
        return self.app.engine.state.message_fields

    @property
    def any_input(self) -> bool:
        """An `@entrypoint` takes any JSON value as its input, not only an object of fields."""
        return isinstance(self.app, Entrypoint)

    def assistant(self) -> dict[str, Any]:
        when = iso(self.created_at)
        return {
            "assistant_id": self.assistant_id,
            "graph_id": self.graph_id,
            "config": {},
            "context": {},
            "metadata": {"created_by": "system"},
            "name": self.graph_id,
            "created_at": when,
            "updated_at": when,
            "version": 1,
            "description": None,
        }

    def graph_json(self, *, xray: bool = False) -> dict[str, Any]:
        """Nodes and edges in LangGraph's drawable-graph JSON (subgraphs inlined with xray)."""
        from flowgraph.viz import build_diagram

        diagram = build_diagram(self.app)
        inner = {n.id for n in diagram.nodes if n.cluster is not None}
        nodes = []
        for node in diagram.nodes:
            if node.id in inner and not xray:
                continue
            if node.kind == "end" and node.cluster is None:
                nodes.append({"id": node.id})
                continue
            entry: dict[str, Any] = {
                "id": node.id,
                "type": "runnable",
                "data": {"name": node.id},
                "metadata": {"kind": node.kind},
            }
            nodes.append(entry)
        edges = []
        for edge in diagram.edges:
            source, target = edge.source, edge.target
            if not xray:
                source = source.split(":", 1)[0] if source in inner else source
                target = target.split(":", 1)[0] if target in inner else target
                if source == target and edge.source in inner:
                    continue
            item: dict[str, Any] = {"source": source, "target": target}
            if edge.is_dashed:
                item["conditional"] = True
            if edge.label:
                item["data"] = edge.label
            if item not in edges:
                edges.append(item)
        return {"nodes": nodes, "edges": edges}

    def schemas(self) -> dict[str, Any]:
        schema = self.app.schema
        state_schema: dict[str, Any] | None
        try:
            if isinstance(schema, type) and issubclass(schema, BaseModel):
                state_schema = schema.model_json_schema()
            else:
                state_schema = TypeAdapter(schema).json_schema()
        except Exception:  # a field type pydantic cannot describe: say so, as LangGraph does
            state_schema = None
        return {
            "graph_id": self.graph_id,
            "input_schema": state_schema,
            "output_schema": state_schema,
            "state_schema": state_schema,
            "config_schema": None,
            "context_schema": None,
        }


class Graphs:
    """The served graphs, found by graph id or assistant id."""

    def __init__(self, entries: list[GraphEntry]) -> None:
        self.entries = entries
        self._by_key: dict[str, GraphEntry] = {}
        for entry in entries:
            self._by_key[entry.graph_id] = entry
            self._by_key[entry.assistant_id] = entry

    def find(self, key: str) -> GraphEntry | None:
        return self._by_key.get(key)

    def get(self, key: str) -> GraphEntry:
        """The graph an assistant id or graph id names; 404 naming the known ones."""
        entry = self._by_key.get(key)
        if entry is None:
            known = ", ".join(e.graph_id for e in self.entries)
            raise ApiError(404, f"Assistant '{key}' not found; this server serves: {known}")
        return entry

    def only(self) -> GraphEntry | None:
        return self.entries[0] if len(self.entries) == 1 else None
