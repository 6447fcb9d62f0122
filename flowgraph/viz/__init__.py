"""Diagrams of a compiled graph: Mermaid, DOT, ASCII, SVG, HTML, and the path a thread took.

Every format draws the same neutral `Diagram` (`build_diagram`), so they
agree on what is shown: START and END, dashed labelled conditional edges,
Command destinations, Send fan-out, subgraphs as clusters, and with
`thread_id=...` the nodes and edges that thread actually took. The compiled
graph's `to_mermaid()`, `to_dot()`, `to_ascii()`, `to_mermaid_sequence()`
and `render()` call these functions through a hook this module installs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from flowgraph.graph._diagrams import DiagramFunctions, register_diagram_functions
from flowgraph.viz._ascii import diagram_to_ascii
from flowgraph.viz._dot import diagram_to_dot
from flowgraph.viz._drawable import CurveStyle as CurveStyle
from flowgraph.viz._drawable import DrawableGraph as DrawableGraph
from flowgraph.viz._drawable import NodeStyles as NodeStyles
from flowgraph.viz._drawable import drawable_graph
from flowgraph.viz._mermaid import diagram_to_mermaid
from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode, build_diagram
from flowgraph.viz._render import render_diagram
from flowgraph.viz._render import to_html as _diagram_to_html
from flowgraph.viz._render import to_svg as _diagram_to_svg
from flowgraph.viz._sequence import to_mermaid_sequence

if TYPE_CHECKING:
    from flowgraph.graph import CompiledGraph

__all__ = [
    "Diagram",
    "DiagramEdge",
    "DiagramNode",
    "build_diagram",
    "render",
    "to_ascii",
    "to_dot",
    "to_html",
    "to_mermaid",
    "to_mermaid_sequence",
    "to_svg",
]


def to_mermaid(app: CompiledGraph, *, thread_id: str | None = None) -> str:
    """A Mermaid flowchart of `app`; with `thread_id`, that thread's path highlighted."""
    return diagram_to_mermaid(build_diagram(app, thread_id=thread_id))


def to_dot(app: CompiledGraph, *, thread_id: str | None = None) -> str:
    """Graphviz DOT source of `app`; with `thread_id`, that thread's path highlighted."""
    return diagram_to_dot(build_diagram(app, thread_id=thread_id))


def to_ascii(app: CompiledGraph) -> str:
    """`app` as boxes and arrows for an 80-column terminal."""
    return diagram_to_ascii(build_diagram(app))


def to_svg(app: CompiledGraph, *, thread_id: str | None = None, engine: str = "auto") -> str:
    """`app` as an SVG document (our own layout, or Graphviz with engine="graphviz")."""
    return _diagram_to_svg(build_diagram(app, thread_id=thread_id), engine=engine)


def to_html(app: CompiledGraph, *, thread_id: str | None = None, engine: str = "auto") -> str:
    """`app` as one self-contained HTML page (its SVG drawn by `engine`)."""
    return _diagram_to_html(build_diagram(app, thread_id=thread_id), engine=engine)


def render(
    app: CompiledGraph,
    path: str | os.PathLike[str],
    *,
    thread_id: str | None = None,
    engine: str = "auto",
) -> Path:
    """Write `app`'s diagram to `path`; the suffix picks the format (.svg .png .html .mmd .dot)."""
    return render_diagram(build_diagram(app, thread_id=thread_id), path, engine=engine)


register_diagram_functions(
    DiagramFunctions(
        to_mermaid=lambda app, thread_id: to_mermaid(app, thread_id=thread_id),
        to_dot=lambda app, thread_id: to_dot(app, thread_id=thread_id),
        to_ascii=to_ascii,
        to_mermaid_sequence=to_mermaid_sequence,
        render=lambda app, path, thread_id, engine: render(
            app, path, thread_id=thread_id, engine=engine
        ),
        get_graph=lambda app, xray: drawable_graph(app, xray=xray),
    )
)
