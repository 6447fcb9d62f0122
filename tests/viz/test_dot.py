"""DOT output: accepted by Graphviz, and every node, edge, label and cluster read back from it."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from flowgraph.viz import build_diagram, to_dot
from flowgraph.viz._dot import quote
from flowgraph.viz._names import diagram_identifiers

from .conftest import HARD_NAMES, build_hard_names_app

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(
    DOT is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)"
)


def dot_json(text: str) -> dict[str, Any]:
    """Lay `text` out with Graphviz and return its JSON description; fail on any complaint."""
    assert DOT is not None
    done = subprocess.run([DOT, "-Tjson"], input=text.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b"", done.stderr.decode()
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def drawn_text(obj: dict[str, Any]) -> list[str]:
    """The text Graphviz actually drew for a node or edge label."""
    ops = obj.get("_ldraw_", [])
    return [op["text"] for op in ops if op.get("op") == "T"]


@needs_dot
def test_graphviz_accepts_every_sample(sample_app):
    text = to_dot(sample_app)
    done = subprocess.run([DOT, "-Tsvg"], input=text.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.startswith(b"<?xml") and b"<svg" in done.stdout


@needs_dot
def test_every_node_edge_and_label_reads_back(sample_app):
    diagram = build_diagram(sample_app)
    node_ids, _ = diagram_identifiers(diagram)
    rendered = dot_json(to_dot(sample_app))
    nodes = [o for o in rendered["objects"] if "nodes" not in o]  # clusters list their nodes
    by_gvid = {o["_gvid"]: o for o in nodes}
    assert sorted(o["name"] for o in nodes) == sorted(node_ids.values())
    for node in diagram.nodes:
        obj = next(o for o in nodes if o["name"] == node_ids[node.id])
        assert drawn_text(obj) == [node.label]
    drawn = sorted(
        (
            by_gvid[e["tail"]]["name"],
            by_gvid[e["head"]]["name"],
            e.get("style", "solid"),
            tuple(drawn_text(e)),
        )
        for e in rendered.get("edges", [])
    )
    expected = sorted(
        (
            node_ids[e.source],
            node_ids[e.target],
            {"direct": "solid", "join": "bold"}.get(e.kind, "dashed"),
            (e.label,) if e.label else (),
        )
        for e in diagram.edges
    )
    assert drawn == expected


@needs_dot
def test_hard_names_draw_exactly_as_spelled():
    rendered = dot_json(to_dot(build_hard_names_app()))
    texts = [t for o in rendered["objects"] for t in drawn_text(o)]
    for name in HARD_NAMES:
        assert name in texts, name
    edge_texts = [t for e in rendered["edges"] for t in drawn_text(e)]
    assert sorted(edge_texts) == sorted(['go "back"', "stop | done", "[中文]"])
    assert 'label="hard \\"names\\""' in to_dot(build_hard_names_app())


@needs_dot
def test_subgraphs_are_clusters(nested_app):
    rendered = dot_json(to_dot(nested_app))
    clusters = {o["name"]: o for o in rendered["objects"] if "nodes" in o}
    assert set(clusters) == {"cluster_team", "cluster_team_research"}
    names = {o["_gvid"]: o["name"] for o in rendered["objects"] if "nodes" not in o}
    inner = {names[i] for i in clusters["cluster_team_research"]["nodes"]}
    assert inner == {
        "team_research",
        "team_research_search",
        "team_research_summarize",
        "team_research___end",
    }
    outer = {names[i] for i in clusters["cluster_team"]["nodes"]}
    assert inner < outer and "team_lead" in outer and "__start__" not in outer


def test_conditional_edges_are_dashed_and_labelled(react_app):
    lines = to_dot(react_app).splitlines()
    assert '    agent -> tools [label="tools", style=dashed];' in lines
    assert '    agent -> __end__ [label="END", style=dashed];' in lines
    assert "    tools -> agent;" in lines
    assert '    __start__ [label="START", shape=oval' in "\n".join(lines)


def test_quote_escapes_what_graphviz_would_interpret():
    assert quote('a "b"') == '"a \\"b\\""'
    assert quote("back\\N") == '"back\\\\N"'
    assert quote("a & b") == '"a &amp; b"'
    assert quote("two\nlines") == '"two\\nlines"'


def test_output_is_stable(sample_app):
    assert to_dot(sample_app) == to_dot(sample_app) == sample_app.to_dot()
    assert to_dot(sample_app).endswith("}\n")
