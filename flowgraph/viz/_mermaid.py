"""Mermaid flowchart text for a diagram.

Identifiers are safe slugs of the node names (see `_names`); what the
reader sees is the quoted label, with every character Mermaid would
interpret (quotes, `#`, `<`, `>`, `&`, backticks) written as an entity, so
`end`, `say "hi"`, `[draft]`, `a|b` or `问候` draw as they are spelled.

Shapes: START/END stadiums, model rounded, tool a subroutine box, router a
rhombus, persona a hexagon, function a rectangle, a subgraph's entry a
trapezoid inside its cluster. Edges: `-->` plain, `-.->` conditional,
Command and Send (with their labels), `==>` a join. Under a path overlay
the visited nodes and taken edges are highlighted and the rest faded.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from flowgraph.errors import DiagramError
from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode
from flowgraph.viz._names import diagram_identifiers, edge_caption, visit_caption

__all__ = ["diagram_to_mermaid", "escape", "langgraph_mermaid", "safe_id", "yaml_block"]

_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "`": "#96;",
    "|": "#124;",
    ";": "#59;",
}

_SHAPES = {
    "start": ('(["', '"])'),
    "end": ('(["', '"])'),
    "model": ('("', '")'),
    "tool": ('[["', '"]]'),
    "router": ('{"', '"}'),
    "persona": ('{{"', '"}}'),
    "function": ('["', '"]'),
    "subgraph": ('[/"', '"\\]'),
}

_ARROWS = {
    "direct": "-->",
    "conditional": "-.->",
    "command": "-.->",
    "send": "-.->",
    "join": "==>",
}

_CLASSES = (
    ("fg_start", "fill:#212529,color:#ffffff,stroke:#212529"),
    ("fg_end", "fill:#212529,color:#ffffff,stroke:#212529"),
    ("fg_model", "fill:#e7f5ff,stroke:#1c7ed6"),
    ("fg_tool", "fill:#fff4e6,stroke:#e8590c"),
    ("fg_router", "fill:#f3f0ff,stroke:#7048e8"),
    ("fg_persona", "fill:#e6fcf5,stroke:#0ca678"),
    ("fg_function", "fill:#f8f9fa,stroke:#495057"),
    ("fg_subgraph", "fill:#fff9db,stroke:#f08c00"),
)
_VISITED = ("fg_visited", "stroke:#d9480f,stroke-width:3px")
_FADED = ("fg_faded", "opacity:0.45")
_TAKEN_STYLE = "stroke:#d9480f,stroke-width:3px"


def escape(text: str) -> str:
    """`text` safe inside a double-quoted Mermaid label; newlines become line breaks."""
    out = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return out.replace("\r\n", "<br>").replace("\n", "<br>")


def _node_line(node: DiagramNode, ident: str) -> str:
    opening, closing = _SHAPES.get(node.kind, _SHAPES["function"])
    label = escape(node.label)
    caption = visit_caption(node)
    if caption:
        label = f"{label}<br>{escape(caption)}"
    kind = node.kind if f"fg_{node.kind}" in dict(_CLASSES) else "function"
    return f"{ident}{opening}{label}{closing}:::fg_{kind}"


def _edge_line(edge: DiagramEdge, ids: dict[str, str], overlay: bool) -> str:
    arrow = _ARROWS.get(edge.kind, "-->")
    caption = edge_caption(edge, overlay=overlay)
    text = f'|"{escape(caption)}"|' if caption else ""
    return f"{ids[edge.source]} {arrow}{text} {ids[edge.target]}"


def diagram_to_mermaid(diagram: Diagram) -> str:
    """The diagram as a Mermaid flowchart (top to bottom), ending with a newline."""
    node_ids, cluster_ids = diagram_identifiers(diagram)
    overlay = diagram.has_overlay
    title = diagram.caption
    lines = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---", "flowchart TD"]

    members: dict[str | None, list[DiagramNode]] = {}
    for node in diagram.nodes:
        members.setdefault(node.cluster, []).append(node)
    children: dict[str | None, list[tuple[str, str]]] = {}
    for cluster, label in diagram.clusters:
        children.setdefault(diagram.cluster_parent(cluster), []).append((cluster, label))

    def emit(cluster: str | None, depth: int) -> None:
        pad = "    " * depth
        for node in members.get(cluster, []):
            lines.append(pad + _node_line(node, node_ids[node.id]))
        for child, label in children.get(cluster, []):
            lines.append(f'{pad}subgraph {cluster_ids[child]}["{escape(label)}"]')
            lines.append(f"{pad}    direction TB")
            emit(child, depth + 1)
            lines.append(f"{pad}end")

    emit(None, 1)
    taken: list[int] = []
    for index, edge in enumerate(diagram.edges):
        lines.append("    " + _edge_line(edge, node_ids, overlay))
        if overlay and edge.taken:
            taken.append(index)
    used = {f"fg_{n.kind}" for n in diagram.nodes}
    for name, style in (*_CLASSES, *((_VISITED, _FADED) if overlay else ())):
        if name in used or (overlay and name in (_VISITED[0], _FADED[0])):
            lines.append(f"    classDef {name} {style}")
    if overlay:
        for name, wanted in ((_VISITED[0], True), (_FADED[0], False)):
            chosen = [node_ids[n.id] for n in diagram.nodes if bool(n.visits) is wanted]
            if chosen:
                lines.append(f"    class {','.join(chosen)} {name}")
    if taken:
        lines.append(f"    linkStyle {','.join(map(str, taken))} {_TAKEN_STYLE}")
    return "\n".join(lines) + "\n"


# -- LangGraph's flowchart text (`app.get_graph().draw_mermaid()`) -------------------------

_ID_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_-")
_MARKDOWN_MARKS = ("*", "_", "`")
_METADATA_ENTITIES = {
    "#": "#35;",
    "[": "#91;",
    "]": "#93;",
    "(": "#40;",
    ")": "#41;",
    "{": "#123;",
    "}": "#125;",
    '"': "#quot;",
    "<": "#60;",
    ">": "#62;",
    "|": "#124;",
}
_YAML_WORDS = frozenset(
    form
    for word in ("yes", "no", "true", "false", "on", "off", "null")
    for form in (word, word.capitalize(), word.upper())
) | {"~", ""}
"""Plain words YAML 1.1 reads as a bool or null: such a string is quoted."""
_YAML_NUMBER = re.compile(
    r"[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(:[0-5]?[0-9])*(\.[0-9_]*)?"
    r"([eE][-+][0-9]+)?|\.[0-9][0-9_]*([eE][-+][0-9]+)?|\.(inf|Inf|INF))|\.(nan|NaN|NAN)"
)
"""Plain text YAML 1.1 reads as a number: such a string is quoted."""
_YAML_ESCAPES = {
    ch: "\\" + code
    for ch, code in zip(
        '\0\a\b\t\n\v\f\r\x1b\x85\xa0\u2028\u2029"\\', '0abtnvfreN_LP"\\', strict=True
    )
}
"""Characters YAML writes as a backslash escape inside double quotes."""


class DrawnNodeLike(Protocol):
    """What the flowchart reads of a drawn node."""

    @property
    def name(self) -> str: ...
    @property
    def metadata(self) -> dict[str, Any] | None: ...


class DrawnEdgeLike(Protocol):
    """What the flowchart reads of a drawn edge."""

    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def data(self) -> object: ...
    @property
    def conditional(self) -> bool: ...


def safe_id(node_id: str) -> str:
    """LangGraph's node identifier: letters, digits, `_` and `-` kept, others `\\<hex>`."""
    return "".join(ch if ch in _ID_CHARACTERS else f"\\{ord(ch):x}" for ch in node_id)


def _plain(text: str) -> bool:
    """Whether YAML reads `text` back as the same string when written unquoted."""
    if text in _YAML_WORDS or _YAML_NUMBER.fullmatch(text) or text != text.strip():
        return False
    if text[0] in "#,[]{}&*!|>'\"%@`" or (text[0] in "?:-" and text[1:2] in ("", " ")):
        return False
    if ": " in text or " #" in text or text.endswith(":"):
        return False
    return all(" " <= ch <= "~" for ch in text)


def _yaml_scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if any(not " " <= ch <= "~" for ch in text):  # YAML's escapes, in double quotes
        return '"' + "".join(_YAML_ESCAPES.get(ch) or _yaml_escape(ch) for ch in text) + '"'
    return text if _plain(text) else "'" + text.replace("'", "''") + "'"


def _yaml_escape(ch: str) -> str:
    code = ord(ch)
    if " " <= ch <= "~":
        return ch
    if code <= 0xFF:
        return f"\\x{code:02X}"
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def yaml_block(value: Mapping[str, Any], indent: int = 0) -> str:
    """A mapping as block-style YAML, keys sorted (what PyYAML's `dump` writes for config)."""
    pad = " " * indent
    lines: list[str] = []
    for key in sorted(value, key=str):
        item = value[key]
        if isinstance(item, Mapping) and item:
            lines.append(f"{pad}{_yaml_scalar(key)}:\n{yaml_block(item, indent + 2)}")
        elif isinstance(item, list | tuple) and item:
            entries = "".join(f"{pad}- {_yaml_scalar(entry)}\n" for entry in item)
            lines.append(f"{pad}{_yaml_scalar(key)}:\n{entries}")
        else:
            empty = "{}" if isinstance(item, Mapping) else "[]"
            shown = empty if isinstance(item, Mapping | list | tuple) else _yaml_scalar(item)
            lines.append(f"{pad}{_yaml_scalar(key)}: {shown}\n")
    return "".join(lines)


def _metadata_lines(metadata: Mapping[str, Any]) -> list[str]:
    lines = []
    for key, value in metadata.items():
        scalars = (str, int, float, bool)
        if isinstance(value, scalars):
            shown = str(value)
        elif isinstance(value, list | tuple | set | frozenset) and all(
            isinstance(item, scalars) for item in value
        ):
            items = [str(item) for item in value]
            shown = ", ".join(sorted(items) if isinstance(value, set | frozenset) else items)
        else:
            continue  # a value with no short text form is left out, as LangGraph does
        line = f"{key} = {shown}"
        lines.append("".join(_METADATA_ENTITIES.get(ch, ch) for ch in line))
    return lines


def _edge_label(data: object, conditional: bool, words_per_line: int) -> str:
    if data is None:
        return " -.-> " if conditional else " --> "
    words = str(data).split()
    text = str(data)
    if len(words) > words_per_line:
        text = "&nbsp<br>&nbsp".join(
            " ".join(words[i : i + words_per_line]) for i in range(0, len(words), words_per_line)
        )
    return f" -. &nbsp;{text}&nbsp; .-> " if conditional else f" -- &nbsp;{text}&nbsp; --> "


def _common_prefix(source: str, target: str) -> str:
    """The path parts two node ids share position by position (LangGraph's grouping)."""
    pairs = zip(source.split(":"), target.split(":"), strict=False)
    return ":".join(a for a, b in pairs if a == b)


def langgraph_mermaid(
    nodes: Mapping[str, DrawnNodeLike],
    edges: Sequence[DrawnEdgeLike],
    *,
    first: str | None,
    last: str | None,
    with_styles: bool,
    curve: str,
    styles: Sequence[tuple[str, str]],
    wrap_label_n_words: int,
    frontmatter_config: Mapping[str, Any] | None,
) -> str:
    """The flowchart LangGraph 1.2's drawable graph writes, line for line.

    Nodes are drawn in order (the first and last as stadiums), those of a
    subgraph (ids `parent:child`) inside a `subgraph parent` block with the
    edges among them; an edge's label is its data, cut into lines of
    `wrap_label_n_words` words.
    """
    config = dict(frontmatter_config or {})
    inner = dict(config.get("config", {}))
    inner["flowchart"] = {**inner.get("flowchart", {}), "curve": curve}
    config["config"] = inner
    out = [f"---\n{yaml_block(config)}---\ngraph TD;\n" if with_styles else "graph TD;\n"]
    top: dict[str, DrawnNodeLike] = {}
    nested: dict[str, dict[str, DrawnNodeLike]] = {}
    for key, node in nodes.items():
        if ":" in key:
            nested.setdefault(key.rsplit(":", 1)[0], {})[key] = node
        else:
            top[key] = node

    def node_line(key: str, node: DrawnNodeLike) -> str:
        name = node.name.split(":")[-1]
        marked = name.startswith(_MARKDOWN_MARKS) and name.endswith(_MARKDOWN_MARKS)
        label = f"<p>{name}</p>" if marked else name
        extra = _metadata_lines(node.metadata or {})
        if extra:
            label += "<hr/><small><em>" + "\n".join(extra) + "</em></small>"
        if key == first:
            return f"\t{safe_id(key)}([{label}]):::first\n"
        if key == last:
            return f"\t{safe_id(key)}([{label}]):::last\n"
        return f"\t{safe_id(key)}({label})\n"

    if with_styles:
        out.extend(node_line(key, node) for key, node in top.items())
    groups: dict[str, list[DrawnEdgeLike]] = {}
    for edge in edges:
        groups.setdefault(_common_prefix(edge.source, edge.target), []).append(edge)
    seen: set[str] = set()

    def block(group: Sequence[DrawnEdgeLike], prefix: str) -> None:
        loop = len(group) == 1 and group[0].source == group[0].target
        if prefix and not loop:
            name = prefix.rsplit(":", 1)[-1]
            if name in seen:
                raise DiagramError(
                    f"Two subgraph nodes are both named {name!r}: Mermaid would draw them as "
                    "one block; give the subgraph nodes distinct names"
                )
            seen.add(name)
            out.append(f"\tsubgraph {name}\n")
            if with_styles:
                out.extend(node_line(key, node) for key, node in nested.get(prefix, {}).items())
        for edge in group:
            label = _edge_label(edge.data, edge.conditional, wrap_label_n_words)
            out.append(f"\t{safe_id(edge.source)}{label}{safe_id(edge.target)};\n")
        for deeper, members in groups.items():
            rest = deeper[len(prefix) + 1 :]
            if deeper.startswith(prefix + ":") and deeper != prefix and ":" not in rest:
                block(members, deeper)
        if prefix and not loop:
            out.append("\tend\n")

    block(groups.get("", []), "")
    for prefix, members in groups.items():
        if prefix and ":" not in prefix:
            block(members, prefix)
            seen.add(prefix)
    if with_styles:
        for prefix, members_of in nested.items():
            if ":" not in prefix and prefix not in seen:
                out.append(f"\tsubgraph {prefix}\n")
                out.extend(node_line(key, node) for key, node in members_of.items())
                out.append("\tend\n")
                seen.add(prefix)
        out.extend(f"\tclassDef {name} {style}\n" for name, style in styles)
    return "".join(out)
