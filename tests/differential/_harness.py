"""Run a LangGraph program as written and with only its imports rewritten to flowgraph.

`rewrite(source)` swaps each `from langgraph… import` / `from langchain_core… import`
for flowgraph's public names (aliased to the program's names where flowgraph spells them
otherwise, as the migration table says); nothing else in the program changes. `run()`
runs a program in a subprocess on one library and returns what it printed.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"

REWRITTEN_MODULES = (
    "langgraph.graph",
    "langgraph.graph.message",
    "langgraph.graph.state",
    "langgraph.types",
    "langgraph.prebuilt",
    "langgraph.func",
    "langgraph.config",
    "langgraph.runtime",
    "langgraph.managed",
    "langgraph.errors",
    "langgraph.cache.memory",
    "langgraph.checkpoint.memory",
    "langgraph.store.memory",
    "langgraph.store.base",
    "langchain_core.messages",
    "langchain_core.messages.utils",
    "langchain_core.tools",
    "langchain_core.runnables",
)
"""The modules whose imports become flowgraph's."""

RENAMED = {
    ("langgraph.checkpoint.memory", "InMemorySaver"): (
        "flowgraph.checkpoint",
        "MemoryCheckpointer",
    ),
    ("langgraph.checkpoint.memory", "MemorySaver"): ("flowgraph.checkpoint", "MemoryCheckpointer"),
    ("langgraph.store.memory", "InMemoryStore"): ("flowgraph.store", "InMemoryStore"),
    ("langgraph.store.base", "BaseStore"): ("flowgraph.store", "BaseStore"),
}
"""Names flowgraph keeps elsewhere than its top level, or spells otherwise (the table's rows)."""


def rewrite(source: str) -> str:
    """`source` with every import of `REWRITTEN_MODULES` replaced by flowgraph's names."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.Import) and any(
            alias.name.split(".")[0] in ("langgraph", "langchain_core") for alias in node.names
        ):
            raise ValueError(
                f"line {node.lineno}: `import langgraph…` is not rewritten; use from-imports"
            )
        if not isinstance(node, ast.ImportFrom) or node.module not in REWRITTEN_MODULES:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                "langgraph",
                "langchain_core",
            ):
                raise ValueError(f"line {node.lineno}: no flowgraph home for {node.module}")
            continue
        statements = []
        for alias in node.names:
            home, name = RENAMED.get((node.module, alias.name), ("flowgraph", alias.name))
            local = alias.asname or alias.name
            spelled = name if local == name else f"{name} as {local}"
            statements.append(f"from {home} import {spelled}\n")
        assert node.end_lineno is not None
        edits.append((node.lineno - 1, node.end_lineno, "".join(statements)))
    for start, end, text in reversed(edits):
        lines[start:end] = [text]
    return "".join(lines)


@dataclass(frozen=True)
class Run:
    """What a program printed, and how it ended."""

    stdout: str
    stderr: str
    returncode: int


def run(source: str, library: str, workdir: Path) -> Run:
    """Run `source` in a fresh interpreter with `library`'s model (see fake_chat.py)."""
    script = workdir / f"program_{library}.py"
    script.write_text(source)
    env = {
        **os.environ,
        "DIFFERENTIAL_LIB": library,
        "PYTHONPATH": os.pathsep.join([str(PROGRAMS), os.environ.get("PYTHONPATH", "")]),
        "PYTHONHASHSEED": "0",
        "PYTHONWARNINGS": "ignore",
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Run(done.stdout, done.stderr, done.returncode)


_IDS = (
    # LangChain's random ids: uuids, `lc_run--<uuid>`, `run-<uuid>`
    re.compile(
        r"(?:lc_run--|run-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+)?"
    ),
    # flowgraph's deterministic message ids: <16 hex>-<step>-<node>-<position>
    re.compile(r"\b[0-9a-f]{16}(?:-\d+){3}\b"),
    # an interrupt's id: 32 hex in LangGraph, <16 hex>-<step>-<task>-i<position> in flowgraph
    re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{16}-\d+-\d+-i\d+\b"),
    # a subgraph's namespace entry "node:<task id>": a uuid in LangGraph, 16 hex in flowgraph
    re.compile(r"(?<=:)[0-9a-f]{16}\b"),
)


def normalise(text: str) -> str:
    """`text` with message ids, interrupt ids and uuids replaced: documented differences."""
    for pattern in _IDS:
        text = pattern.sub("<id>", text)
    return text
