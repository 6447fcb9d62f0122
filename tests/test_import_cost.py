"""Cold start: what `import flowgraph`, and a few typical programs, load.

Checked as the modules a fresh interpreter ends up with (`sys.modules`),
not as a timing: a module list does not move with the machine's load, and
a new eager import shows up here by name. Each program runs in its own
subprocess with this checkout on `sys.path`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HEAVY = {
    "asyncio", "hashlib", "httpx", "json", "msgpack", "networkx", "pydantic", "pydantic_core",
    "sqlite3", "starlette", "uvicorn",
}  # fmt: skip
"""Third-party and costly standard modules no program should load before it needs them."""


def loaded_by(program: str) -> set[str]:
    """The modules `program` adds to a fresh interpreter's `sys.modules`."""
    code = "\n".join(
        [
            "import sys",
            "before = set(sys.modules)",
            textwrap.dedent(program),
            "loaded = sorted(set(sys.modules) - before)",
            "import json",
            "print(json.dumps(loaded))",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def roots(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_import_flowgraph_loads_only_the_error_classes() -> None:
    loaded = loaded_by("import flowgraph")
    assert {m for m in loaded if m.startswith("flowgraph")} == {
        "flowgraph",
        "flowgraph._lazy",
        "flowgraph.errors",
    }
    assert roots(loaded) & HEAVY == set()


def test_every_public_name_and_subpackage_still_resolves() -> None:
    loaded = loaded_by(
        """
        import flowgraph
        names = [getattr(flowgraph, name) for name in flowgraph.__all__]
        assert flowgraph.checkpoint.serde.loads(flowgraph.checkpoint.serde.dumps([1])) == [1]
        assert set(flowgraph.__all__) <= set(dir(flowgraph))
        """
    )
    assert {"flowgraph.viz", "flowgraph.models.openai"} <= loaded  # the lazy ones did load


def test_a_graph_without_checkpointer_loads_no_codec_models_or_drivers() -> None:
    loaded = loaded_by(
        """
        from flowgraph import END, START, AIMessage, MessagesState, StateGraph

        graph = StateGraph(MessagesState)
        graph.add_node("reply", lambda state: {"messages": [AIMessage("hi")]})
        graph.add_edge(START, "reply")
        graph.add_edge("reply", END)
        assert graph.compile().invoke({"messages": [("user", "hello")]}).messages[-1].text == "hi"
        """
    )
    # third-party libraries by name; of the standard library only what flowgraph's own
    # modules would pull in, asserted through those modules: what a dependency imports
    # (pydantic 2.14 imports hashlib) is its business, not a regression of ours
    assert roots(loaded) & {"httpx", "msgpack", "networkx", "sqlite3"} == set()
    for package in ("models", "nodes", "tools", "prompts", "viz", "store", "server"):
        assert not any(m.startswith(f"flowgraph.{package}") for m in loaded), package
    # the checkpoint protocol (the engine's types) but no codec and no backend
    protocol = {"flowgraph.checkpoint.base", "flowgraph.checkpoint._lease"}
    assert {m for m in loaded if m.startswith("flowgraph.checkpoint.")} == protocol


def test_a_react_graph_loads_tools_but_not_the_model_layer() -> None:
    loaded = loaded_by(
        """
        from flowgraph import (
            START, AIMessage, MessagesState, StateGraph, ToolNode, tool, tools_condition,
        )

        @tool
        def double(x: int) -> int:
            '''Double x.'''
            return 2 * x

        def model(state):
            if len(state.messages) == 1:
                call = {"id": "c1", "name": "double", "args": {"x": 21}}
                return {"messages": [AIMessage("", tool_calls=[call])]}
            return {"messages": [AIMessage(state.messages[-1].text)]}

        graph = StateGraph(MessagesState)
        graph.add_node("model", model)
        graph.add_node("tools", ToolNode([double]))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
        assert graph.compile().invoke({"messages": [("user", "?")]}).messages[-1].text == "42"
        """
    )
    assert "flowgraph.tools._tool" in loaded
    assert not any(m.startswith("flowgraph.models") for m in loaded)
    assert roots(loaded) & {"httpx", "msgpack", "networkx", "sqlite3"} == set()


@pytest.mark.parametrize("method", ["to_mermaid", "to_ascii"])
def test_diagram_methods_load_the_drawing_code_on_first_call(method: str) -> None:
    loaded = loaded_by(
        f"""
        from flowgraph import END, START, MessagesState, StateGraph

        graph = StateGraph(MessagesState)
        graph.add_node("only", lambda state: None)
        graph.add_edge(START, "only")
        graph.add_edge("only", END)
        app = graph.compile()
        import sys
        assert "flowgraph.viz" not in sys.modules
        assert "only" in app.{method}()
        """
    )
    assert "flowgraph.viz" in loaded
