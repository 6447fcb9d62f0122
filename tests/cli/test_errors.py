"""Mistakes a user makes: one clear line on stderr, status 1 (or 2 for a wrong command line)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .conftest import Cli


@pytest.fixture
def with_thread(cli: Cli) -> Cli:
    assert cli("run", "weather.py", "Weather in Paris?", "--thread", "t1", "-q").code == 0
    return cli


def test_a_missing_file(cli: Cli, workdir: Path) -> None:
    done = cli("run", "nowhere.py", "hi")

    assert (done.code, done.out) == (1, "")
    assert done.err == f"flowgraph: error: No such file: {workdir / 'nowhere.py'}\n"


def test_a_missing_attribute_names_the_graphs_the_file_has(cli: Cli) -> None:
    done = cli("run", "approve.py:nope", "hi")

    assert done.code == 1
    assert done.err == (
        "flowgraph: error: approve.py has no attribute 'nope'; "
        "it has: graph (a StateGraph); name one: approve.py:graph\n"
    )


SEVERAL = """
from __future__ import annotations

from typing import TYPE_CHECKING

from flowgraph import END, START, CompiledGraph, MessagesState, StateGraph, create_react_agent

if TYPE_CHECKING:  # at run time the annotation below is only text
    import flowgraph.graph


def build(db: str, *, debug: bool = False) -> CompiledGraph[MessagesState]:
    return create_react_agent(None, checkpointer=None)


def draft() -> flowgraph.graph.StateGraph[MessagesState]:
    return graph


def helper():
    return 1


graph = StateGraph(MessagesState)
graph.add_node("echo", lambda state: {})
graph.add_edge(START, "echo").add_edge("echo", END)
first = graph.compile()
second = graph.compile()
_private = graph.compile()
"""


def test_without_app_every_graph_and_graph_factory_is_listed(cli: Cli, workdir: Path) -> None:
    (workdir / "several.py").write_text(SEVERAL)

    done = cli("run", "several.py", "hi")

    # not listed: helper (no graph annotation), create_react_agent (imported), _private
    assert done.code == 1
    assert done.err == (
        "flowgraph: error: several.py has no `app` and no single graph to pick; it has: "
        "build(db) (returns CompiledGraph; the CLI passes no arguments), "
        "draft() (returns StateGraph), graph (a StateGraph), first (a compiled graph), "
        "second (a compiled graph); name one: several.py:draft\n"
    )
    assert cli("run", "several.py:draft", "hi", "-q").code == 0  # the advice works


def test_a_file_with_nothing_to_run_shows_the_two_shapes(cli: Cli, workdir: Path) -> None:
    (workdir / "empty.py").write_text("x = 1\n")
    (workdir / "needs.py").write_text(
        "from flowgraph import CompiledGraph\n\n\ndef make(db: str) -> CompiledGraph: ...\n"
    )

    empty = cli("run", "empty.py", "hi")
    needs = cli("draw", "needs.py", "-o", "x.svg")

    shapes = (
        "give it `app = graph.compile()` at module level (run as {0}), or a factory "
        "`def make_app() -> CompiledGraph: ...` (run as {0}:make_app)\n"
    )
    assert empty.code == 1
    assert empty.err == (
        "flowgraph: error: empty.py has no `app`; it defines no compiled graph, StateGraph "
        "or function returning one; " + shapes.format("empty.py")
    )
    assert needs.code == 1
    assert needs.err == (
        "flowgraph: error: needs.py has no `app` and no single graph to pick; it has: "
        "make(db) (returns CompiledGraph; the CLI passes no arguments); none runs without "
        "arguments: " + shapes.format("needs.py")
    )


def test_a_file_that_fails_to_import_and_debug_shows_the_traceback(cli: Cli, workdir: Path) -> None:
    (workdir / "broken.py").write_text(textwrap.dedent("import json\nraise RuntimeError('boom')\n"))

    done = cli("run", "broken.py", "hi")
    debug = cli("run", "broken.py", "hi", "--debug")

    assert done.code == 1
    assert done.err == (
        f"flowgraph: error: Importing {workdir / 'broken.py'} failed: RuntimeError: boom\n"
    )
    assert debug.code == 1
    assert "Traceback (most recent call last)" in debug.err
    assert debug.err_lines[-1] == done.err_lines[0]


def test_a_missing_thread(with_thread: Cli) -> None:
    for command in (["history", "t9"], ["show", "t9"], ["export", "t9"], ["delete", "t9"]):
        done = with_thread(*command)
        assert done.code == 1, command
        assert done.err_lines == [
            "flowgraph: error: There is no thread 't9' in flowgraph.db; "
            "`flowgraph threads` lists the ones there are"
        ]


def test_a_bad_checkpoint_id(with_thread: Cli) -> None:
    done = with_thread("show", "t1", "--checkpoint", "beef")

    assert done.code == 1
    assert done.err == (
        "flowgraph: error: Thread 't1' has no checkpoint 'beef'; "
        "`flowgraph history t1` lists its checkpoints\n"
    )
    ambiguous = with_thread("show", "t1", "--checkpoint", "1")
    assert ambiguous.code == 1 and "is ambiguous" in ambiguous.err


def test_bad_json_and_bad_arguments_are_usage_errors(with_thread: Cli) -> None:
    bad_json = with_thread("run", "weather.py", "hi", "--input", "{nope")
    unknown = with_thread("explode")
    missing = with_thread("prune", "t1")

    assert bad_json.code == unknown.code == missing.code == 2
    assert bad_json.err_lines == [
        "flowgraph: error: --input is not valid JSON (Expecting property name enclosed in "
        "double quotes): '{nope'"
    ]
    assert unknown.err_lines[-1].startswith("flowgraph: error: argument COMMAND: invalid choice")
    assert missing.err_lines[-1] == (
        "flowgraph: error: the following arguments are required: --keep-last "
        "(see `flowgraph prune --help`)"
    )


def test_reading_a_store_that_is_not_there_creates_nothing(cli: Cli, workdir: Path) -> None:
    done = cli("threads", "--db", "missing.db")

    assert done.code == 1
    assert done.err == (
        "flowgraph: error: No checkpoint store at missing.db (check the path; "
        "`flowgraph run` creates one)\n"
    )
    assert not (workdir / "missing.db").exists()


def test_store_urls_of_unknown_or_unreachable_servers(cli: Cli) -> None:
    unknown = cli("threads", "--db", "mysql://localhost/x")
    unreachable = cli("threads", "--db", "redis://127.0.0.1:1/0")

    assert unknown.code == 1
    assert unknown.err_lines == [
        "flowgraph: error: --db 'mysql://localhost/x': No checkpointer for mysql:// "
        "('mysql://localhost/x'); use a SQLite file path, sqlite:///file.db, "
        "postgresql://… or redis://…"
    ]
    # without the redis extra: how to install it; with it: the connection error, on one line
    assert unreachable.code == 1 and len(unreachable.err_lines) == 1
    assert unreachable.err.startswith("flowgraph: error: ")


def test_a_failing_run_keeps_its_last_step_and_says_so(cli: Cli, workdir: Path) -> None:
    (workdir / "fails.py").write_text(
        textwrap.dedent(
            """
            from flowgraph import END, START, MessagesState, StateGraph


            def crash(state):
                raise ValueError("the tool server is down")


            graph = StateGraph(MessagesState)
            graph.add_node("crash", crash)
            graph.add_edge(START, "crash")
            graph.add_edge("crash", END)
            app = graph.compile()
            """
        )
    )
    done = cli("run", "fails.py", "hi", "--thread", "x")

    assert done.code == 1
    assert done.err_lines[-1] == (
        "flowgraph: error: ValueError: the tool server is down (--debug shows the traceback)"
    )
    assert "failed: ValueError: the tool server is down" in done.err
    assert "stopped before crash" in cli("threads").out
