"""One self-contained HTML page: the SVG inline, pan and zoom, node details on hover.

The page loads nothing: no script, style, font or image from anywhere, and
a Content-Security-Policy says so, so it opens the same on an air-gapped
machine, in a CI artifact or as an email attachment. The diagram's data
(node kinds, details, visits) travels as JSON in a `<script
type="application/json">` block, escaped so no label can close the tag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from flowgraph.viz._model import Diagram
from flowgraph.viz._svg import FONT_FAMILY, escape

__all__ = ["html_page"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)

_STYLE = """
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font-family: FONT; color: #0f172a; background: #f1f5f9; }
body { display: grid; grid-template-rows: auto 1fr; grid-template-columns: 1fr 300px; }
header { grid-column: 1 / 3; display: flex; align-items: center; gap: 12px; padding: 8px 14px;
  background: #ffffff; border-bottom: 1px solid #cbd5e1; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; }
header .thread { color: #be123c; font-size: 13px; }
header .hint { margin-left: auto; color: #64748b; font-size: 12px; }
header button { font: inherit; font-size: 13px; min-width: 32px; padding: 3px 8px;
  border: 1px solid #cbd5e1; border-radius: 6px; background: #f8fafc; cursor: pointer; }
header button:hover { background: #e2e8f0; }
#fg-stage { position: relative; overflow: hidden; cursor: grab; background: #ffffff;
  touch-action: none; }
#fg-stage.dragging { cursor: grabbing; }
#fg-stage > svg { position: absolute; inset: 0; width: 100%; height: 100%; display: block; }
#fg-details { border-left: 1px solid #cbd5e1; background: #f8fafc; padding: 12px 14px;
  overflow: auto; font-size: 13px; }
#fg-details h2 { font-size: 15px; margin: 0 0 4px; word-break: break-word; }
#fg-details .kind { display: inline-block; font-size: 11px; padding: 1px 6px; border-radius: 9px;
  background: #e2e8f0; color: #334155; margin-bottom: 8px; }
#fg-details table { border-collapse: collapse; width: 100%; }
#fg-details th { text-align: left; vertical-align: top; color: #475569; font-weight: 500;
  padding: 3px 8px 3px 0; white-space: nowrap; }
#fg-details td { padding: 3px 0; word-break: break-word; }
#fg-details .muted { color: #64748b; }
#fg-details ul { margin: 4px 0 0; padding-left: 18px; }
.fg-node { cursor: pointer; }
.fg-node:focus { outline: none; }
.fg-node.fg-hot > rect, .fg-node.fg-hot > polygon, .fg-node.fg-hot > path,
.fg-node:focus > rect, .fg-node:focus > polygon {
  stroke-width: 3px; filter: drop-shadow(0 1px 3px rgba(15, 23, 42, 0.35)); }
.fg-edge.fg-hot path, g.edge.fg-hot path { stroke-width: 3px; opacity: 1; }
.fg-edge.fg-hot { opacity: 1; }
""".replace("FONT", FONT_FAMILY)

_SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("fg-data").textContent);
  var stage = document.getElementById("fg-stage");
  var svg = stage.querySelector("svg");
  var panel = document.getElementById("fg-details");
  var box = svg.viewBox.baseVal;
  var home = { x: box.x, y: box.y, w: box.width, h: box.height };
  if (!home.w || !home.h) {
    home.w = parseFloat(svg.getAttribute("width")) || 800;
    home.h = parseFloat(svg.getAttribute("height")) || 600;
  }
  var view = { x: home.x, y: home.y, w: home.w, h: home.h };
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");

  function apply() {
    svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
  }
  function scale() {
    var r = svg.getBoundingClientRect();
    return Math.max(view.w / (r.width || 1), view.h / (r.height || 1));
  }
  function toSvg(cx, cy) {
    var r = svg.getBoundingClientRect(), s = scale();
    var ox = (r.width - view.w / s) / 2, oy = (r.height - view.h / s) / 2;
    return { x: view.x + (cx - r.left - ox) * s, y: view.y + (cy - r.top - oy) * s };
  }
  function zoom(k, cx, cy) {
    var r = svg.getBoundingClientRect();
    if (cx === undefined) { cx = r.left + r.width / 2; cy = r.top + r.height / 2; }
    var w = view.w * k;
    if (w < home.w / 40 || w > home.w * 40) { return; }
    var p = toSvg(cx, cy);
    view.x = p.x - (p.x - view.x) * k;
    view.y = p.y - (p.y - view.y) * k;
    view.w = w;
    view.h = view.h * k;
    apply();
  }
  function fit() { view = { x: home.x, y: home.y, w: home.w, h: home.h }; apply(); }
  function pan(dx, dy) { var s = scale(); view.x -= dx * s; view.y -= dy * s; apply(); }

  stage.addEventListener("wheel", function (e) {
    e.preventDefault();
    zoom(Math.exp(e.deltaY * 0.0015), e.clientX, e.clientY);
  }, { passive: false });
  var drag = null;
  stage.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) { return; }
    drag = { x: e.clientX, y: e.clientY };
    stage.setPointerCapture(e.pointerId);
    stage.classList.add("dragging");
  });
  stage.addEventListener("pointermove", function (e) {
    if (!drag) { return; }
    pan(e.clientX - drag.x, e.clientY - drag.y);
    drag = { x: e.clientX, y: e.clientY };
  });
  function endDrag() { drag = null; stage.classList.remove("dragging"); }
  stage.addEventListener("pointerup", endDrag);
  stage.addEventListener("pointercancel", endDrag);
  stage.addEventListener("dblclick", fit);
  document.querySelectorAll("[data-zoom]").forEach(function (button) {
    button.addEventListener("click", function () {
      var how = button.getAttribute("data-zoom");
      if (how === "in") { zoom(0.8); } else if (how === "out") { zoom(1.25); } else { fit(); }
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "+" || e.key === "=") { zoom(0.8); }
    else if (e.key === "-") { zoom(1.25); }
    else if (e.key === "0") { fit(); }
    else if (e.key === "ArrowLeft") { pan(40, 0); }
    else if (e.key === "ArrowRight") { pan(-40, 0); }
    else if (e.key === "ArrowUp") { pan(0, 40); }
    else if (e.key === "ArrowDown") { pan(0, -40); }
  });

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function show(index) {
    var node = data.nodes[index];
    panel.textContent = "";
    panel.appendChild(el("h2", node.label));
    panel.appendChild(el("span", node.kind, "kind"));
    var table = el("table");
    function row(key, value) {
      var tr = el("tr");
      tr.appendChild(el("th", key));
      tr.appendChild(el("td", value));
      table.appendChild(tr);
    }
    row("id", node.id);
    node.details.forEach(function (pair) { if (pair[0] !== "kind") { row(pair[0], pair[1]); } });
    if (node.cluster) { row("in subgraph", node.cluster); }
    if (data.thread !== null) {
      row("visits", String(node.visits));
      if (node.steps.length) { row("steps", node.steps.join(", ")); }
    }
    panel.appendChild(table);
    [["out", "source", "target", "leads to"], ["in", "target", "source", "reached from"]]
      .forEach(function (spec) {
        var edges = data.edges.filter(function (edge) { return edge[spec[1]] === node.id; });
        if (!edges.length) { return; }
        panel.appendChild(el("p", spec[3] + ":", "muted"));
        var list = el("ul");
        edges.forEach(function (edge) {
          var other = data.labels[edge[spec[2]]] || edge[spec[2]];
          var text = other + " (" + edge.kind + (edge.label ? ": " + edge.label : "") + ")";
          if (edge.taken) { text += " \u00d7" + edge.taken; }
          list.appendChild(el("li", text));
        });
        panel.appendChild(list);
      });
  }
  function light(id, on) {
    svg.querySelectorAll(".fg-edge").forEach(function (edge) {
      if (edge.getAttribute("data-source") === id || edge.getAttribute("data-target") === id) {
        edge.classList.toggle("fg-hot", on);
      }
    });
  }
  var keys = {};
  data.nodes.forEach(function (node, i) { keys[node.key] = i; });
  svg.querySelectorAll("g.fg-node, g.node").forEach(function (group) {
    var index;
    if (group.id.indexOf("fg-node-") === 0) {
      index = parseInt(group.id.slice(8), 10);
    } else {
      var title = group.querySelector("title");
      index = title ? keys[title.textContent] : undefined;
    }
    if (index === undefined || !data.nodes[index]) { return; }
    group.setAttribute("tabindex", "0");
    var id = data.nodes[index].id;
    var enter = function () { group.classList.add("fg-hot"); light(id, true); show(index); };
    var leave = function () { group.classList.remove("fg-hot"); light(id, false); };
    group.addEventListener("pointerenter", enter);
    group.addEventListener("pointerleave", leave);
    group.addEventListener("focus", enter);
    group.addEventListener("blur", leave);
  });
  apply();
})();
"""

_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def inline_svg(svg: str) -> str:
    """An SVG document as an element for an HTML body: no prolog, doctype, comments or xmlns.

    In HTML the SVG namespace is implied; dropping the declarations leaves
    no URL-looking string in the page. `xlink:href` becomes `href`.
    """
    svg = _PROLOG.sub("", svg)
    svg = _NAMESPACES.sub("", svg)
    return svg.replace("xlink:href=", "href=").strip()


def _json_for_script(value: object) -> str:
    """JSON that cannot end its `<script>` block early, whatever the labels say."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, safe)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _data(diagram: Diagram, keys: Mapping[str, str]) -> dict[str, object]:
    return {
        "title": diagram.title,
        "thread": diagram.thread_id,
        "nodes": [
            {
                "id": node.id,
                "key": keys.get(node.id, node.id),
                "label": node.label,
                "kind": node.kind,
                "cluster": node.cluster if node.cluster != node.id else None,
                "details": [list(pair) for pair in node.details],
                "visits": node.visits,
                "steps": list(node.steps),
            }
            for node in diagram.nodes
        ],
        "edges": [
            {
                "source": edge.source,
                "target": edge.target,
                "kind": edge.kind,
                "label": edge.label,
                "taken": edge.taken,
            }
            for edge in diagram.edges
        ],
        "labels": {node.id: node.label for node in diagram.nodes},
    }


def html_page(diagram: Diagram, svg: str, *, keys: Mapping[str, str] | None = None) -> str:
    """The page around `svg` (ours, or Graphviz's with `keys` mapping node id -> its DOT id)."""
    title = escape(diagram.title, quote=False)
    thread = (
        f'<span class="thread">path of thread {escape(diagram.thread_id, quote=False)}</span>'
        if diagram.thread_id is not None
        else ""
    )
    counts = f"{len(diagram.nodes)} nodes · {len(diagram.edges)} edges"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="flowgraph">',
            f"<title>{title}</title>",
            f"<style>{_STYLE}</style>",
            "</head>",
            "<body>",
            "<header>",
            f"<h1>{title}</h1>{thread}",
            '<button type="button" data-zoom="in" title="Zoom in (+)">+</button>',
            '<button type="button" data-zoom="out" title="Zoom out (-)">&minus;</button>',
            '<button type="button" data-zoom="fit" title="Fit (0)">fit</button>',
            '<span class="hint">scroll to zoom · drag to pan · hover a node for details</span>',
            "</header>",
            f'<main id="fg-stage">{inline_svg(svg)}</main>',
            '<aside id="fg-details">',
            f'<p class="muted">{counts}. Hover or focus a node to see its details.</p>',
            "</aside>",
            '<script type="application/json" id="fg-data">'
            f"{_json_for_script(_data(diagram, keys or {}))}</script>",
            f"<script>{_SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
