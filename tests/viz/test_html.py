"""The HTML page: one file that loads nothing, carries the SVG inline and the node details."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser

import pytest

from flowgraph import CompiledGraph
from flowgraph.viz import Diagram, DiagramEdge, DiagramNode, build_diagram, to_html
from flowgraph.viz._html import inline_svg
from flowgraph.viz._render import to_html as diagram_to_html

from .conftest import HARD_NAMES, build_react_app, run_react_thread


class Page(HTMLParser):
    """Collects what a browser would fetch, the scripts, and the text of SVG <text> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.fetches: list[str] = []
        self.tags: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.svg_texts: list[str] = []
        self.meta: list[dict[str, str | None]] = []
        self._in: str | None = None
        self._attrs: dict[str, str | None] = {}
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        for name in ("src", "href", "xlink:href", "srcset", "poster", "data", "action"):
            if values.get(name) and not str(values[name]).startswith("#"):
                self.fetches.append(f"{tag} {name}={values[name]}")
        style = values.get("style") or ""
        if "url(" in style:
            self.fetches.append(f"{tag} style={style}")
        if tag == "meta":
            self.meta.append(values)
        if tag in ("script", "text"):
            self._in, self._attrs, self._buffer = tag, values, []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in == "script":
            self.scripts.append((self._attrs, "".join(self._buffer)))
        elif tag == self._in == "text":
            self.svg_texts.append("".join(self._buffer))
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._buffer.append(data)


def read(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


EXTERNAL = re.compile(r"(?i)\b(?:https?|ftp|wss?):|//[a-z0-9.-]+\.[a-z]{2,}|@import|<link\b")


def test_the_page_loads_nothing_from_anywhere(sample_app: CompiledGraph) -> None:
    html = to_html(sample_app)
    assert EXTERNAL.search(html) is None, EXTERNAL.search(html)
    page = read(html)
    assert page.fetches == []
    assert "link" not in page.tags and "iframe" not in page.tags and "img" not in page.tags
    assert all(attrs.get("src") is None for attrs, _ in page.scripts)
    csp = [m for m in page.meta if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in str(csp[0]["content"])
    # url(...) appears only as a reference to a marker inside the page
    assert set(re.findall(r"url\(([^)]*)\)", html)) <= {
        f"#fg-arrow-{k}" for k in ("direct", "conditional", "command", "join", "send", "taken")
    }


def test_inline_svg_and_data_carry_every_node(sample_app: CompiledGraph) -> None:
    diagram = build_diagram(sample_app)
    page = read(to_html(sample_app))
    labels = [n.label for n in diagram.nodes]
    assert set(labels) <= set(page.svg_texts)
    (data_attrs, data_text) = next(s for s in page.scripts if s[0].get("type"))
    assert data_attrs == {"type": "application/json", "id": "fg-data"}
    data = json.loads(data_text)
    assert [n["id"] for n in data["nodes"]] == [n.id for n in diagram.nodes]
    assert [n["details"] for n in data["nodes"]] == [
        [list(pair) for pair in n.details] for n in diagram.nodes
    ]
    assert len(data["edges"]) == len(diagram.edges)
    assert sum(1 for attrs, _ in page.scripts if not attrs) == 1  # the pan/zoom/hover code


def test_hard_names_cannot_break_out(hard_names_app: CompiledGraph) -> None:
    page = read(to_html(hard_names_app))
    assert set(HARD_NAMES) <= set(page.svg_texts)
    hostile = "</script><script>alert(1)</script><!--"
    diagram = Diagram(
        "</title><b>x",
        (
            DiagramNode("__start__", "START", "start"),
            DiagramNode(hostile, hostile, "function", details=(("note", hostile),)),
            DiagramNode("__end__", "END", "end"),
        ),
        (
            DiagramEdge("__start__", hostile, "conditional", label=hostile),
            DiagramEdge(hostile, "__end__", "direct"),
        ),
    )
    html = diagram_to_html(diagram)
    page = read(html)
    assert len(page.scripts) == 2
    data = json.loads(next(text for attrs, text in page.scripts if attrs.get("id") == "fg-data"))
    assert data["nodes"][1]["label"] == hostile
    assert data["nodes"][1]["details"] == [["note", hostile]]
    assert data["title"] == "</title><b>x"
    assert hostile in page.svg_texts
    assert "alert(1)" not in "".join(text for attrs, text in page.scripts if not attrs)
    assert "<b>" not in html


def test_overlay_page_names_the_thread() -> None:
    app = build_react_app()
    run_react_thread(app, "t-42")
    page = read(to_html(app, thread_id="t-42"))
    data = json.loads(next(text for attrs, text in page.scripts if attrs.get("id") == "fg-data"))
    assert data["thread"] == "t-42"
    agent = next(n for n in data["nodes"] if n["id"] == "agent")
    assert (agent["visits"], agent["steps"]) == (2, [1, 3])
    assert "path of thread t-42" in page.svg_texts


def test_inline_svg_drops_namespaces_and_prolog() -> None:
    svg = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n'
        ' "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<!-- made by x -->\n'
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="#n"><text>a</text></a></svg>'
    )
    assert inline_svg(svg) == '<svg><a href="#n"><text>a</text></a></svg>'


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_graphviz_engine_page_is_offline_too() -> None:
    app = build_react_app()
    html = diagram_to_html(build_diagram(app), engine="graphviz")
    assert EXTERNAL.search(html) is None
    page = read(html)
    assert page.fetches == []
    assert {"START", "agent", "tools", "END"} <= set(page.svg_texts)
    data = json.loads(next(text for attrs, text in page.scripts if attrs.get("id") == "fg-data"))
    # the hover code finds Graphviz's nodes by their <title>, which is the DOT id
    assert {n["key"] for n in data["nodes"]} <= set(re.findall(r"<title>([^<]*)</title>", html))
