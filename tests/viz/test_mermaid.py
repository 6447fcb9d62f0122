"""Mermaid flowcharts: every node and edge, dashed labelled branches, escaping, stability."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flowgraph.viz import build_diagram, to_mermaid
from flowgraph.viz._mermaid import escape
from flowgraph.viz._names import KEYWORDS, diagram_identifiers

from .conftest import HARD_LABELS, HARD_NAMES, SAMPLE_BUILDERS, build_react_app, run_react_thread

_NODE = re.compile(
    r"^\s+(\w+)(\(\[|\[\[|\{\{|\[/|\(|\[|\{)\"(.*)\"(\]\)|\]\]|\}\}|\\\]|\)|\]|\}):::(\w+)$"
)
_EDGE = re.compile(r"^\s+(\w+) (-->|-\.->|==>)(?:\|\"(.*)\"\|)? (\w+)$")
_ENTITY = re.compile(r"#(\w+);")
_NAMED = {"quot": '"', "lt": "<", "gt": ">", "amp": "&"}


def unescape(text: str) -> str:
    """What Mermaid shows for a label written with entity codes."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code)) if code.isdigit() else _NAMED[code]

    return _ENTITY.sub(one, text.replace("<br>", "\n"))


def parse(
    text: str,
) -> tuple[dict[str, tuple[str, str, str]], list[tuple[str, str, str, str | None]]]:
    """Nodes {id: (shape, label, class)} and edges [(source, arrow, target, label)]."""
    nodes: dict[str, tuple[str, str, str]] = {}
    edges: list[tuple[str, str, str, str | None]] = []
    for line in text.splitlines():
        if m := _NODE.match(line):
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes[m.group(1)] = (m.group(2), unescape(m.group(3)), m.group(5))
        elif m := _EDGE.match(line):
            label = unescape(m.group(3)) if m.group(3) is not None else None
            edges.append((m.group(1), m.group(2), m.group(4), label))
    return nodes, edges


def test_react_agent_flowchart(react_app):
    text = to_mermaid(react_app)
    assert text.splitlines()[:4] == ["---", 'title: "react_agent"', "---", "flowchart TD"]
    nodes, edges = parse(text)
    assert nodes == {
        "__start__": ("([", "START", "fg_start"),
        "agent": ("(", "agent", "fg_model"),
        "tools": ("[[", "tools", "fg_tool"),
        "__end__": ("([", "END", "fg_end"),
    }
    assert edges == [
        ("__start__", "-->", "agent", None),
        ("agent", "-.->", "tools", "tools"),
        ("agent", "-.->", "__end__", "END"),
        ("tools", "-->", "agent", None),
    ]


def test_every_node_and_edge_of_every_sample(sample_app):
    diagram = build_diagram(sample_app)
    ids, _ = diagram_identifiers(diagram)
    nodes, edges = parse(to_mermaid(sample_app))
    assert {i: n[1] for i, n in nodes.items()} == {ids[n.id]: n.label for n in diagram.nodes}
    arrows = {"direct": "-->", "join": "==>"}
    assert edges == [
        (ids[e.source], arrows.get(e.kind, "-.->"), ids[e.target], e.label) for e in diagram.edges
    ]


def test_kinds_have_their_shapes(persona_app, subgraph_app):
    nodes, edges = parse(to_mermaid(persona_app))
    assert nodes["triage"][:1] == ("{",) and nodes["persona"][:1] == ("{{",)
    assert nodes["audit"][0] == "[" and nodes["agent"][0] == "("
    assert ("audit", "-.->", "triage", None) in edges  # Command destination
    assert ("agent", "-.->", "__end__", "finish") in edges
    text = to_mermaid(subgraph_app)
    assert nodes_in_block(text, "cluster_research") == [
        "research",
        "research_search",
        "research_summarize",
        "research___end",
    ]
    assert parse(text)[0]["research"][0] == "[/"


def nodes_in_block(text: str, cluster: str) -> list[str]:
    lines = text.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.strip().startswith(f"subgraph {cluster}[")
    )
    depth, found = 0, []
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if stripped.startswith("subgraph "):
            depth += 1
        elif stripped == "end":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (m := _NODE.match(line)):
            found.append(m.group(1))
    return found


def test_nested_clusters_nest(nested_app):
    text = to_mermaid(nested_app)
    assert nodes_in_block(text, "cluster_team") == ["team", "team_lead", "team___end"]
    assert nodes_in_block(text, "cluster_team_research")[0] == "team_research"
    lines = [line.strip() for line in text.splitlines()]
    assert lines.index('subgraph cluster_team_research["research"]') > lines.index(
        'subgraph cluster_team["team"]'
    )


def test_send_edge_is_dashed_and_labelled(send_app):
    _, edges = parse(to_mermaid(send_app))
    assert ("plan", "-.->", "write_joke", "Send") in edges


def test_hard_names_are_escaped_and_read_back(hard_names_app):
    text = to_mermaid(hard_names_app)
    nodes, edges = parse(text)
    labels = [n[1] for n in nodes.values()]
    assert labels == ["START", *HARD_NAMES, "END"]
    ids = list(nodes)
    assert len(set(ids)) == len(ids)
    for ident in ids:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident)
        assert ident.lower() not in KEYWORDS
    by_label = {n[1]: i for i, n in nodes.items()}
    conditional = {label: target for _, arrow, target, label in edges if arrow == "-.->"}
    assert conditional == {
        label: by_label[target if target != "__end__" else "END"]
        for label, target in HARD_LABELS.items()
    }
    # nothing Mermaid would interpret is left raw inside a label
    for line in text.splitlines():
        for quoted in re.findall(r'"(.*?)"(?=[\]\)\}\\|])', line):
            assert not set(_ENTITY.sub("", quoted)) & set('"<>&`|;#'), line
    assert 'title: "hard \\"names\\""' in text


def test_escape():
    assert escape('say "hi" <b>&</b> #1 a|b x;y `c`') == (
        "say #quot;hi#quot; #lt;b#gt;#amp;#lt;/b#gt; #35;1 a#124;b x#59;y #96;c#96;"
    )
    assert escape("two\nlines") == "two<br>lines"
    assert unescape(escape('问候 "end" [x] {y}')) == '问候 "end" [x] {y}'


def test_same_graph_same_text(sample_app):
    assert to_mermaid(sample_app) == to_mermaid(sample_app) == sample_app.to_mermaid()


def test_rebuilt_graphs_give_identical_text():
    for build in SAMPLE_BUILDERS.values():
        assert to_mermaid(build()) == to_mermaid(build())


# -- the real Mermaid parser, when the npm package is at hand --------------------------------

_PARSER = """
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import fs from "node:fs";
const dir = process.argv[2];
const require = createRequire(dir + "/package.json");
const { JSDOM } = require("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
const mermaid = (await import(pathToFileURL(require.resolve("mermaid")).href)).default;
mermaid.initialize({ startOnLoad: false });
const results = {};
for (const file of process.argv.slice(3)) {
  try { await mermaid.parse(fs.readFileSync(file, "utf8")); results[file] = "ok"; }
  catch (e) { results[file] = String(e.message || e); }
}
console.log(JSON.stringify(results));
"""


def _mermaid_dir() -> Path | None:
    import os

    configured = os.environ.get("FLOWGRAPH_MERMAID_DIR")
    if not configured or shutil.which("node") is None:
        return None
    path = Path(configured)
    return path if (path / "node_modules" / "mermaid").is_dir() else None


@pytest.mark.skipif(
    _mermaid_dir() is None,
    reason="set FLOWGRAPH_MERMAID_DIR to a folder where `npm install mermaid jsdom` ran "
    "(and have node) to check the output with Mermaid's own parser",
)
def test_mermaid_own_parser_accepts_every_output(tmp_path):
    directory = _mermaid_dir()
    assert directory is not None
    files = {}
    for name, build in SAMPLE_BUILDERS.items():
        files[name] = build()
    app = build_react_app()
    run_react_thread(app, "t1", turns=2)
    texts = {name: to_mermaid(a) for name, a in files.items()}
    texts["overlay"] = to_mermaid(app, thread_id="t1")
    texts["sequence"] = app.to_mermaid_sequence("t1")
    texts["broken"] = "flowchart TD\n    end --> a\n"  # proves the parser does reject
    paths = []
    for name, text in texts.items():
        (tmp_path / f"{name}.mmd").write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / f"{name}.mmd"))
    script = tmp_path / "parse.mjs"
    script.write_text(_PARSER)
    done = subprocess.run(
        ["node", str(script), str(directory), *paths], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    verdicts = {Path(p).stem: v for p, v in results.items()}
    assert verdicts.pop("broken") != "ok"
    assert verdicts == dict.fromkeys(texts.keys() - {"broken"}, "ok")
