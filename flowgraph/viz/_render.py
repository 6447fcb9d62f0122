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

import os
import shutil
import subprocess
from pathlib import Path

from flowgraph.errors import DiagramError
from flowgraph.viz._dot import diagram_to_dot
from flowgraph.viz._html import html_page
from flowgraph.viz._mermaid import diagram_to_mermaid
from flowgraph.viz._model import Diagram
from flowgraph.viz._names import diagram_identifiers
from flowgraph.viz._svg import diagram_svg

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


def png_bytes(diagram: Diagram) -> bytes:
    """The diagram as PNG, laid out by Graphviz on this machine (`dot` must be on PATH)."""
    return _run_dot(diagram, "png", "Drawing a PNG")


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
