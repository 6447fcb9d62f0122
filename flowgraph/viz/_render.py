"""Write a diagram to a file whose suffix names the format: .svg .html .png .mmd .dot.

Engines:

- "auto" (the default): `.svg` and `.html` from our own layered layout,
  which needs nothing native; `.png` through Graphviz, the one format that
  needs it.
- "builtin": our layout only; asking it for `.png` is an error.
- "graphviz": Graphviz's `dot` program lays out `.svg`, `.html` and `.png`.

A missing `dot` is a `DiagramError` saying what to install, raised before
anything is written, so a failed render never leaves half a file.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import struct
import subprocess
import zlib
from collections.abc import Sequence
from pathlib import Path

from flowgraph.errors import DiagramError
from flowgraph.viz._dot import diagram_to_dot
from flowgraph.viz._html import html_page
from flowgraph.viz._layout import layout_diagram
from flowgraph.viz._mermaid import diagram_to_mermaid
from flowgraph.viz._model import Diagram
from flowgraph.viz._names import diagram_identifiers
from flowgraph.viz._svg import KIND_STYLE, diagram_svg

__all__ = [
    "ENGINES",
    "SUFFIXES",
    "graphviz_available",
    "png_bytes",
    "render_diagram",
    "to_html",
    "to_svg",
]

ENGINES = ("auto", "builtin", "graphviz")
SUFFIXES = (".svg", ".html", ".png", ".mmd", ".dot")
_ALIASES = {".htm": ".html", ".gv": ".dot", ".mermaid": ".mmd"}
_DOT_TIMEOUT = 120.0
INSTALL_GRAPHVIZ = (
    "install Graphviz so that `dot` is on PATH (Debian/Ubuntu: apt install graphviz; "
    "macOS: brew install graphviz; Windows: winget install graphviz)"
)


def graphviz_available() -> bool:
    """True when Graphviz's `dot` program is on PATH."""
    return shutil.which("dot") is not None


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise DiagramError(
            f"Unknown diagram engine {engine!r}; use 'auto' (our own layout, no native "
            "dependency), 'builtin' (the same, never Graphviz) or 'graphviz' (runs `dot`)"
        )


def _run_dot(diagram: Diagram, fmt: str, purpose: str) -> bytes:
    """Graphviz's output for the diagram in format `fmt`; `purpose` says why dot was needed."""
    program = shutil.which("dot")
    if program is None:
        raise DiagramError(
            f"{purpose} needs Graphviz, whose `dot` program was not found on PATH: "
            f"{INSTALL_GRAPHVIZ}. Without it, write .svg or .html (engine='auto'), "
            "which need nothing native."
        )
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"],
            input=diagram_to_dot(diagram).encode("utf-8"),
            capture_output=True,
            timeout=_DOT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DiagramError(
            f"Graphviz's dot ({program}) failed to run for {purpose}: {exc}"
        ) from exc
    if done.returncode != 0 or not done.stdout:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        raise DiagramError(
            f"Graphviz's dot ({program}) could not draw {diagram.title!r} as {fmt}: {reason}"
        )
    return done.stdout


def to_svg(diagram: Diagram, *, engine: str = "auto") -> str:
    """The diagram as an SVG document: our layout, or Graphviz's with engine="graphviz"."""
    _check_engine(engine)
    if engine == "graphviz":
        return _run_dot(diagram, "svg", "engine='graphviz'").decode("utf-8")
    return diagram_svg(diagram)


def to_html(diagram: Diagram, *, engine: str = "auto") -> str:
    """One self-contained HTML page: the SVG inline, pan/zoom, node details on hover."""
    _check_engine(engine)
    if engine == "graphviz":
        svg = _run_dot(diagram, "svg", "engine='graphviz'").decode("utf-8")
        return html_page(diagram, svg, keys=diagram_identifiers(diagram)[0])
    return html_page(diagram, diagram_svg(diagram, standalone=False))


def _content(diagram: Diagram, suffix: str, engine: str, name: str) -> bytes:
    if suffix == ".svg":
        return to_svg(diagram, engine=engine).encode("utf-8")
    if suffix == ".html":
        return to_html(diagram, engine=engine).encode("utf-8")
    if suffix == ".png":
        if engine == "builtin":
            raise DiagramError(
                f"Cannot write {name!r} with engine='builtin': PNG is drawn by Graphviz; "
                "use engine='auto' or 'graphviz', or write .svg/.html instead"
            )
        return _run_dot(diagram, "png", f"Writing {name!r} (PNG)")
    if suffix == ".mmd":
        return diagram_to_mermaid(diagram).encode("utf-8")
    return diagram_to_dot(diagram).encode("utf-8")


def render_diagram(diagram: Diagram, path: str | os.PathLike[str], *, engine: str = "auto") -> Path:
    """Write the diagram to `path` in the format its suffix names, and return the path.

    Missing parent directories are created. The content is produced before
    the file is opened, so an error (an unknown suffix, no Graphviz) leaves
    no file behind.
    """
    _check_engine(engine)
    target = Path(path)
    suffix = target.suffix.lower()
    suffix = _ALIASES.get(suffix, suffix)
    if suffix not in SUFFIXES:
        raise DiagramError(
            f"Cannot render {str(target)!r}: unknown suffix {target.suffix!r}; "
            f"use one of {', '.join(SUFFIXES)}"
        )
    data = _content(diagram, suffix, engine, str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


# -- PNG with no dependency: our layout rasterised, text in a 5x7 pixel font of our own --------

_FONT = (
    "!4444404\"AA00000#AVAAAVA$4FKE5U4%PQ448NJ&CIK8LID'4400000(2488842)8422248*04LEL40"
    "+044V440,0000C48-000V000.00000CC/122488G0EHJLPHE14C4444E2EH1248V3V2421HE426AIV22"
    "5VGU11HE668GUHHE7V1248888EHHEHHE9EHHF12C:0CC0CC0;0CC0C48<248G842=00V0V00>8421248"
    "?EH12404@EH1DLLEAEHHVHHHBUHHUHHUCEHGGGHEDSIHHHISEVGGUGGVFVGGUGGGGEHGNHHFHHHHVHHH"
    "IE44444EJ72222ICKHIKOKIHLGGGGGGVMHRLLHHHNHHPLJHHOEHHHHHEPUHHUGGGQEHHHLIDRUHHUKIH"
    "SFGGE11UTV444444UHHHHHHEVHHHHHA4WHHHLLLAXHHA4AHHYHHA4444ZV1248GV[E88888E\\G884221"
    "]E22222E^4AH0000_000000V`8400000a00E1FHFbGGMPHHUc00EGGHEd11DJHHFe00EHVGEf698S888"
    "g0FHHF1EhGGMPHHHi40C444Ej20622ICkGGIKOKIlC44444Em00QLLHHn00MPHHHo00EHHHEp0UHHUGG"
    "q0FHHF11r00MPGGGs00EGE1Ut88S8896u00HHHJDv00HHHA4w00HHLLAx00HA4AHy0HHHF1Ez00V248V"
    "{2448442|4444444}8442448~008L200"
)
"""Each glyph: the character, then its 7 rows (top first) as base-32 digits of 5 bits."""
_GLYPHS = {
    _FONT[i]: tuple(int(row, 32) for row in _FONT[i + 1 : i + 8]) for i in range(0, len(_FONT), 8)
}
_DESCENDERS = frozenset("gpqy")
"""Drawn one dot lower, their tails below the line."""
_SCALE = 2
"""Pixels per layout unit (and per font dot): sharp text on high-density screens."""
_Colour = tuple[int, int, int]


def _rgb(colour: str) -> _Colour:
    text = colour.lstrip("#")
    if len(text) == 3:
        text = "".join(ch * 2 for ch in text)
    try:
        return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)
    except ValueError:
        return (255, 255, 255) if colour != "black" else (0, 0, 0)


class _Canvas:
    """An RGB bitmap with the few primitives a diagram needs."""

    def __init__(self, width: int, height: int, background: _Colour) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def dot(self, x: int, y: int, colour: _Colour) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            at = 3 * (y * self.width + x)
            self.pixels[at : at + 3] = bytes(colour)

    def fill(self, left: float, top: float, right: float, bottom: float, colour: _Colour) -> None:
        row = bytes(colour)
        x0, x1 = max(0, round(left)), min(self.width, round(right))
        if x1 <= x0:
            return
        for y in range(max(0, round(top)), min(self.height, round(bottom))):
            at = 3 * (y * self.width + x0)
            self.pixels[at : at + 3 * (x1 - x0)] = row * (x1 - x0)

    def box(self, rect: tuple[float, float, float, float], fill: _Colour, stroke: _Colour) -> None:
        left, top, right, bottom = rect
        self.fill(left, top, right, bottom, stroke)
        self.fill(left + _SCALE, top + _SCALE, right - _SCALE, bottom - _SCALE, fill)

    def line(self, points: Sequence[tuple[float, float]], colour: _Colour, dashed: bool) -> None:
        """A polyline `_SCALE` pixels wide; dashed: 5 on, 4 off (in layout units)."""
        travelled = 0.0
        for (ax, ay), (bx, by) in itertools.pairwise(points):
            length = math.hypot(bx - ax, by - ay)
            steps = max(1, math.ceil(length * 2))
            for i in range(steps + 1):
                if dashed and (travelled + length * i / steps) % (9 * _SCALE) >= 5 * _SCALE:
                    continue
                x, y = ax + (bx - ax) * i / steps, ay + (by - ay) * i / steps
                self.fill(x - _SCALE / 2, y - _SCALE / 2, x + _SCALE / 2, y + _SCALE / 2, colour)
            travelled += length

    def arrow(self, tail: tuple[float, float], tip: tuple[float, float], colour: _Colour) -> None:
        """A filled arrowhead at `tip`, pointing away from `tail`."""
        dx, dy = tip[0] - tail[0], tip[1] - tail[1]
        norm = math.hypot(dx, dy) or 1.0
        ux, uy = dx / norm, dy / norm
        size = 8 * _SCALE
        left = (tip[0] - ux * size - uy * size / 2, tip[1] - uy * size + ux * size / 2)
        right = (tip[0] - ux * size + uy * size / 2, tip[1] - uy * size - ux * size / 2)
        corners = (tip, left, right)
        xs, ys = [p[0] for p in corners], [p[1] for p in corners]
        for y in range(math.floor(min(ys)), math.ceil(max(ys)) + 1):
            for x in range(math.floor(min(xs)), math.ceil(max(xs)) + 1):
                if _inside(corners, x + 0.5, y + 0.5):
                    self.dot(x, y, colour)

    def text(self, x: float, y: float, text: str, colour: _Colour) -> None:
        """`text` centred on (x, y); a character the font lacks is drawn as an empty box."""
        advance = 6 * _SCALE
        left = round(x - (len(text) * advance - _SCALE) / 2)
        top = round(y - 7 * _SCALE / 2)
        for index, ch in enumerate(text):
            rows = _GLYPHS.get(ch, (31, 17, 17, 17, 17, 17, 31) if ch != " " else (0,) * 7)
            for row, bits in enumerate(rows):
                for col in range(5):
                    if bits >> (4 - col) & 1:
                        drop = row + (ch in _DESCENDERS)
                        gx, gy = left + index * advance + col * _SCALE, top + drop * _SCALE
                        self.fill(gx, gy, gx + _SCALE, gy + _SCALE, colour)

    def png(self) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        stride = 3 * self.width
        raw = b"".join(
            b"\0" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height)
        )
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def _inside(corners: Sequence[tuple[float, float]], x: float, y: float) -> bool:
    signs = []
    for (ax, ay), (bx, by) in zip(corners, [*corners[1:], corners[0]], strict=True):
        signs.append((bx - ax) * (y - ay) - (by - ay) * (x - ax) >= 0)
    return all(signs) or not any(signs)


def _curve(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points along vertical S-curves through `points` (the SVG's forward edges)."""
    out = [points[0]]
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        mid = (ay + by) / 2
        for i in range(1, 17):
            t = i / 16
            u = 1 - t
            x = u**3 * ax + 3 * u * u * t * ax + 3 * u * t * t * bx + t**3 * bx
            y = u**3 * ay + 3 * u * u * t * mid + 3 * u * t * t * mid + t**3 * by
            out.append((x, y))
    return out


def png_bytes(diagram: Diagram, *, background: str = "white") -> bytes:
    """The diagram as PNG bytes, drawn here from our own layout: nothing native, no network.

    Boxes in each node kind's colours, edges (dashed when conditional) with
    arrowheads and their labels, subgraphs as shaded boxes; text in a small
    pixel font (a character outside ASCII shows as a box).
    """
    layout = layout_diagram(diagram)
    s = _SCALE
    canvas = _Canvas(math.ceil(layout.width * s), math.ceil(layout.height * s), _rgb(background))
    for cluster in layout.clusters:
        r = cluster.rect
        shade = _rgb(("#f8fafc", "#f1f5f9", "#e2e8f0")[min(cluster.depth, 2)])
        canvas.box(
            (r.x * s, r.y * s, (r.x + r.width) * s, (r.y + r.height) * s), shade, _rgb("#94a3b8")
        )
        canvas.text(
            (r.x + 8) * s + len(cluster.label) * 3 * s,
            (r.y + 10) * s,
            cluster.label,
            _rgb("#334155"),
        )
    ink = _rgb("#475569")
    for route in layout.edges:
        points = [(x * s, y * s) for x, y in route.points]
        path = _curve(points) if route.shape == "curve" else points
        canvas.line(path, ink, route.edge.is_dashed)
        canvas.arrow(path[-2], path[-1], ink)
        if route.label and route.label_rect is not None:
            r = route.label_rect
            canvas.fill(
                r.x * s, r.y * s, (r.x + r.width) * s, (r.y + r.height) * s, _rgb(background)
            )
            canvas.text((r.x + r.width / 2) * s, (r.y + r.height / 2) * s, route.label, ink)
    for box in layout.nodes:
        fill, stroke, text = KIND_STYLE.get(box.node.kind, KIND_STYLE["function"])
        rect = box.rect
        canvas.box(
            (rect.x * s, rect.y * s, (rect.x + rect.width) * s, (rect.y + rect.height) * s),
            _rgb(fill),
            _rgb(stroke),
        )
        lines = box.node.label.splitlines() or [""]
        for i, line in enumerate(lines):
            offset = (i - (len(lines) - 1) / 2) * 10 * s
            canvas.text(box.x * s, box.y * s + offset, line, _rgb(text))
    return canvas.png()
