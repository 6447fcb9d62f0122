"""The hook through which the compiled graph's diagram methods reach `flowgraph.viz`.

The graph layer may not import the viz layer (viz builds on graph), so
`flowgraph.viz` registers its functions here when it is imported, and
`CompiledGraph.to_mermaid()` and friends call whatever is registered.
`import flowgraph` names `flowgraph.viz` as the provider of "diagrams"
(`flowgraph._lazy`), so the first diagram call imports it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowgraph._lazy import load_provider
from flowgraph.errors import DiagramError

__all__ = ["DiagramFunctions", "Diagrams", "diagram_functions", "register_diagram_functions"]

App = Any
"""A `CompiledGraph`: not named here, since the compiled graph imports this module."""


@dataclass(frozen=True, slots=True)
class DiagramFunctions:
    """What `flowgraph.viz` provides to the compiled graph's methods."""

    to_mermaid: Callable[[App, str | None], str]
    to_dot: Callable[[App, str | None], str]
    to_ascii: Callable[[App], str]
    to_mermaid_sequence: Callable[[App, str], str]
    render: Callable[[App, str | os.PathLike[str], str | None, str], Path]
    """(app, path, thread_id, engine) -> the written file."""
    get_graph: Callable[[App, bool | int], Any]
    """(app, xray) -> the drawable graph (`flowgraph.viz`'s `DrawableGraph`)."""


_registered: list[DiagramFunctions] = []


def register_diagram_functions(functions: DiagramFunctions) -> None:
    """Install the diagram functions (called by `flowgraph.viz` at import)."""
    _registered[:] = [functions]


def diagram_functions() -> DiagramFunctions:
    """The installed diagram functions (importing `flowgraph.viz` the first time)."""
    if not _registered:
        load_provider("diagrams")  # flowgraph.viz registers itself when imported
    if not _registered:
        raise DiagramError(
            "Diagrams are drawn by flowgraph.viz, which has not been imported; "
            "`import flowgraph` (or `import flowgraph.viz`) first"
        )
    return _registered[0]


class Diagrams:
    """The compiled graph's diagram methods (a mixin of `CompiledGraph`), drawn by viz."""

    def to_mermaid(self, *, thread_id: str | None = None) -> str:
        """A Mermaid flowchart; with `thread_id`, the path that thread took is highlighted."""
        return diagram_functions().to_mermaid(self, thread_id)

    def to_dot(self, *, thread_id: str | None = None) -> str:
        """Graphviz DOT source; with `thread_id`, the path that thread took is highlighted."""
        return diagram_functions().to_dot(self, thread_id)

    def to_ascii(self) -> str:
        """Boxes and arrows for a terminal (at most 80 columns where names allow)."""
        return diagram_functions().to_ascii(self)

    def to_mermaid_sequence(self, thread_id: str) -> str:
        """The thread's conversation as a Mermaid sequence diagram (user, model, tools)."""
        return diagram_functions().to_mermaid_sequence(self, thread_id)

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: bool | int = False
    ) -> Any:
        """The graph as LangGraph's drawable graph: `.nodes`, `.edges`, `.draw_mermaid()`...

        Returns a `flowgraph.viz.DrawableGraph` (typed Any here: the graph
        layer cannot name a viz class). `xray=True` draws the nodes of
        subgraphs too (ids `parent:child`), an int only that many levels
        deep. `config` is taken for LangGraph's signature; the drawing does
        not depend on it.
        """
        del config
        return diagram_functions().get_graph(self, xray)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """In a notebook the graph shows as its picture (drawn here, as `draw_mermaid_png`)."""
        del kwargs
        return {"text/plain": repr(self), "image/png": self.get_graph().draw_mermaid_png()}

    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: bool | int = False
    ) -> Any:
        """`get_graph` for async code (drawing does no I/O)."""
        return self.get_graph(config, xray=xray)

    def render(
        self,
        path: str | os.PathLike[str],
        *,
        thread_id: str | None = None,
        engine: str = "auto",
    ) -> Path:
        """Write the diagram to `path` (.svg, .png, .html, .mmd, .dot); returns the path."""
        return diagram_functions().render(self, path, thread_id, engine)
