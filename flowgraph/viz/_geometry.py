"""Sizes and shapes shared by the layout and the SVG writer: boxes, routes, text metrics.

Text is measured without reading any font: a per-character estimate in
ems, generous so labels fit in any common sans-serif, with East Asian wide
characters counted as a full em and combining marks as nothing.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode

__all__ = [
    "ClusterBox",
    "EdgeRoute",
    "Layout",
    "NodeBox",
    "Point",
    "Rect",
    "edge_label",
    "node_lines",
    "node_size",
    "text_width",
]

FONT_SIZE = 14.0
SMALL_FONT_SIZE = 11.0
LINE_HEIGHT = 18.0
NODE_PAD_X = 18.0
NODE_PAD_Y = 11.0
MIN_NODE_WIDTH = 76.0
MIN_ROUTER_WIDTH = 104.0
NODE_GAP = 36.0
DUMMY_GAP = 14.0
RANK_GAP = 62.0
CLUSTER_PAD = 14.0
CLUSTER_LABEL = 20.0
LANE_GAP = 26.0
LANE_STEP = 16.0
LOOP_REACH = 22.0
LABEL_PAD_X = 5.0
LABEL_HEIGHT = 17.0
_STEP_LIMIT = 8
TIMES = "\u00d7"
"""The multiplication sign written after a visit or traversal count."""
END_ID = "__end__"
START_ID = "__start__"

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned box by its top-left corner."""

    x: float
    y: float
    width: float
    height: float

    def overlaps(self, other: Rect, margin: float = 0.0) -> bool:
        return not (
            self.x + self.width + margin <= other.x
            or other.x + other.width + margin <= self.x
            or self.y + self.height + margin <= other.y
            or other.y + other.height + margin <= self.y
        )


@dataclass(frozen=True, slots=True)
class NodeBox:
    """Where a node is drawn: its center, size and rank."""

    node: DiagramNode
    x: float
    y: float
    width: float
    height: float
    rank: int

    @property
    def rect(self) -> Rect:
        return Rect(self.x - self.width / 2, self.y - self.height / 2, self.width, self.height)


@dataclass(frozen=True, slots=True)
class EdgeRoute:
    """How an edge is drawn.

    `shape` is "curve" (vertical S-curves through the points: forward edges)
    or "lane" (straight legs with rounded corners: back edges, self loops).
    """

    edge: DiagramEdge
    points: tuple[Point, ...]
    shape: str
    is_back: bool
    label: str | None
    label_rect: Rect | None


@dataclass(frozen=True, slots=True)
class ClusterBox:
    """The labelled box around a subgraph's nodes."""

    id: str
    label: str
    rect: Rect
    depth: int


@dataclass(frozen=True, slots=True)
class Layout:
    """A diagram placed on a canvas whose top-left corner is (0, 0)."""

    diagram: Diagram
    width: float
    height: float
    nodes: tuple[NodeBox, ...]
    edges: tuple[EdgeRoute, ...]
    clusters: tuple[ClusterBox, ...]
    rank_count: int


# -- text metrics ---------------------------------------------------------------

_NARROW = set("iljtf.,:;'|!()[]{} `")
_WIDE_LATIN = set("mwMW@%")


def _char_em(char: str) -> float:
    if unicodedata.combining(char):
        return 0.0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 1.0
    if char in _NARROW:
        return 0.32
    if char in _WIDE_LATIN:
        return 0.86
    if char.isupper():
        return 0.68
    if char.isdigit():
        return 0.58
    return 0.56


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """A generous estimate of the width of `text` in a sans-serif font (no font files read)."""
    return sum(_char_em(c) for c in text) * size


def node_lines(node: DiagramNode) -> list[tuple[str, float]]:
    """The lines written in a node's box, with their font size: label lines, then the overlay."""
    lines = [(line, FONT_SIZE) for line in (node.label.splitlines() or [""])]
    if node.visits:
        steps = [str(s) for s in node.steps[:_STEP_LIMIT]]
        if len(node.steps) > _STEP_LIMIT:
            steps.append("…")
        word = "step" if len(node.steps) == 1 else "steps"
        overlay = f"{node.visits}{TIMES}" + (f" · {word} {', '.join(steps)}" if steps else "")
        lines.append((overlay, SMALL_FONT_SIZE))
    return lines


def edge_label(edge: DiagramEdge) -> str | None:
    """The text written on an edge: its label, and how often the thread took it."""
    parts = [edge.label] if edge.label else []
    if edge.taken:
        parts.append(f"{edge.taken}{TIMES}")
    return " ".join(parts) or None


def node_size(node: DiagramNode) -> tuple[float, float]:
    lines = node_lines(node)
    width = max(text_width(text, size) for text, size in lines) + 2 * NODE_PAD_X
    minimum = MIN_ROUTER_WIDTH if node.kind == "router" else MIN_NODE_WIDTH
    if node.kind == "router":
        width += 16.0  # the hexagon's points take room from the text
    height = 2 * NODE_PAD_Y + sum(LINE_HEIGHT if s == FONT_SIZE else s + 4 for _, s in lines)
    # an even number of tenths, so a box's edges land on the same 0.1 grid as its center
    return math.ceil(max(width, minimum) * 5) / 5, height
