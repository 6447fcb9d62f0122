"""Safe identifiers for node names in diagram languages, and overlay captions.

Node names are arbitrary strings (spaces, quotes, Chinese, `end`); Mermaid
and DOT need identifiers. Every name gets a readable identifier derived
from it (`my node` -> `my_node`), prefixed when it would be a keyword or
start with a digit, and numbered when two names would collide. The
assignment follows diagram order, so it is the same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode

__all__ = ["diagram_identifiers", "edge_caption", "identifiers", "visit_caption"]

_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_]+")
KEYWORDS = frozenset(
    {
        # Mermaid flowchart words that end or change a statement
        "end",
        "graph",
        "flowchart",
        "subgraph",
        "direction",
        "class",
        "classdef",
        "style",
        "linkstyle",
        "click",
        "call",
        "href",
        "default",
        "interpolate",
        # DOT keywords
        "node",
        "edge",
        "digraph",
        "strict",
    }
)


def _slug(name: str) -> str:
    if _SAFE.fullmatch(name) and name.lower() not in KEYWORDS:
        return name
    slug = _UNSAFE_RUN.sub("_", name).strip("_")
    if not slug:
        return "n"
    if slug[0].isdigit() or slug.lower() in KEYWORDS:
        return "n_" + slug
    return slug


def identifiers(names: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A distinct safe identifier for each (key, name), in the order given, keyed by key."""
    taken: set[str] = set()
    result: dict[str, str] = {}
    for key, name in names:
        if key in result:
            continue
        base = _slug(name)
        candidate, n = base, 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate.lower())
        result[key] = candidate
    return result


def diagram_identifiers(diagram: Diagram) -> tuple[dict[str, str], dict[str, str]]:
    """Identifiers for the nodes and the clusters, all distinct from each other."""
    ids = identifiers(
        [("n\0" + n.id, n.id) for n in diagram.nodes]
        + [("c\0" + c, f"cluster_{c}") for c, _ in diagram.clusters]
    )
    nodes = {n.id: ids["n\0" + n.id] for n in diagram.nodes}
    clusters = {c: ids["c\0" + c] for c, _ in diagram.clusters}
    return nodes, clusters


def visit_caption(node: DiagramNode) -> str:
    """'2x · steps 1, 3' for a visited node, '' otherwise."""
    if not node.visits:
        return ""
    steps = ", ".join(str(s) for s in node.steps)
    word = "step" if len(node.steps) == 1 else "steps"
    return f"{node.visits}x · {word} {steps}"


def edge_caption(edge: DiagramEdge, *, overlay: bool) -> str | None:
    """The edge's label, with the times taken appended under an overlay."""
    if overlay and edge.taken:
        count = f"{edge.taken}x"
        return f"{edge.label} ({count})" if edge.label else count
    return edge.label
