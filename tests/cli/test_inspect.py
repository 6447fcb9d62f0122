"""Reading and tidying threads from the store alone: threads, history, show, export, prune."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.messages import messages_to_dicts, to_openai

from .conftest import ROOT, WEATHER, Cli, in_pty


@pytest.fixture(scope="module")
def two_turns_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Thread t1: two questions, each a tool call and an answer (8 checkpoints, 8 messages)."""
    where = tmp_path_factory.mktemp("two_turns")
    (where / "weather.py").write_text(textwrap.dedent(WEATHER))
    for prompt in ("Weather in Paris?", "And in Rome?"):
        done = subprocess.run(
            [sys.executable, "-m", "flowgraph.cli", "run", "weather.py", prompt, "--thread", "t1"],
            cwd=where,
            env={**os.environ, "PYTHONPATH": str(ROOT), "FLOWGRAPH_DB": "flowgraph.db"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    return where / "flowgraph.db"


@pytest.fixture
def two_turns(cli: Cli, workdir: Path, two_turns_db: Path) -> Cli:
    """The work directory with its own copy of thread t1's store."""
    for file in two_turns_db.parent.glob("flowgraph.db*"):
        shutil.copy(file, workdir / file.name)
    return cli


def _app(workdir: Path, db: str = "flowgraph.db"):  # type: ignore[no-untyped-def]
    """The test's own copy of the weather app, on the same file: the library's view."""
    namespace: dict[str, object] = {}
    exec((workdir / "weather.py").read_text(), namespace)
    return namespace["app"].with_checkpointer(SQLiteCheckpointer(workdir / db))  # type: ignore[attr-defined]


def test_history_lists_every_step_with_the_library_s_ids(two_turns: Cli, workdir: Path) -> None:
    done = two_turns("history", "t1")

    assert done.code == 0, done.err
    header, *rows, legend = done.out.splitlines()
    assert header.split() == [
        "step", "node(s)", "checkpoint", "time", "messages", "tokens", "source"
    ]  # fmt: skip
    # the stored steps: not the checkpoints the library derives before each input
    library = list(reversed(list(_app(workdir).get_state_history("t1", before_inputs=False))))
    assert [r.split()[2] for r in rows] == [s.checkpoint_id for s in library]
    assert [r.split()[1] for r in rows] == [
        "(input)", "agent", "tools", "agent", "(input)", "agent", "tools", "agent"
    ]  # fmt: skip
    assert all(r.split()[0] == str(s.step) for r, s in zip(rows, library, strict=True))
    assert [r.split()[5] for r in rows] == ["+1"] * 8
    assert [r.split()[8:] for r in rows] == [[]] * 7 + [["*"]]  # the head is marked
    assert legend == "* the thread's head"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", " ".join(rows[0].split()[3:5]))
    # tokens: what the step's model call reported; tools and inputs spend none
    tokens = [int(r.split()[6]) for r in rows]
    assert tokens[0] == tokens[2] == tokens[4] == tokens[6] == 0
    usage = [m.usage.total_tokens for m in library[-1].values.messages if m.type == "ai"]
    assert [tokens[1], tokens[3], tokens[5], tokens[7]] == usage


def test_threads_lists_status_steps_and_messages(two_turns: Cli) -> None:
    assert two_turns("run", "approve.py:make_app", "Plan", "--thread", "h1").code == 3
    done = two_turns("threads")

    header, *rows = done.out.splitlines()
    assert header.split() == ["thread", "steps", "messages", "updated", "status"]
    cells = {row.split()[0]: row.split() for row in rows}
    assert cells["t1"][1:3] == ["7", "8"] and cells["t1"][-1] == "done"
    assert cells["h1"][1:3] == ["0", "1"]
    assert rows[0].endswith("waiting: interrupt in ask_human")


def test_show_prints_the_conversation_with_calls_linked_to_results(two_turns: Cli) -> None:
    done = two_turns("show", "t1")

    assert done.code == 0
    header, *lines = done.out.splitlines()
    assert re.fullmatch(r"thread t1 · step 7 · checkpoint [0-9a-f]{32} · .* · done", header)
    assert lines == [
        "#1 human  Weather in Paris?",
        '#2 ai     calls get_weather({"city": "Paris"})  [call_1_0 -> #3]',
        "#3 tool   result of get_weather [call_1_0 <- #2] success",
        "          sunny in Paris",
        "#4 ai     It is sunny in Paris.",
        "#5 human  And in Rome?",
        '#6 ai     calls get_weather({"city": "Rome"})  [call_1_0 -> #7]',
        "#7 tool   result of get_weather [call_1_0 <- #6] success",
        "          sunny in Rome",
        "#8 ai     It is sunny in Rome.",
    ]
    assert "\x1b[" not in done.out  # not a terminal: no colours


def test_show_an_earlier_checkpoint_by_a_unique_prefix(two_turns: Cli, workdir: Path) -> None:
    history = _app(workdir).get_state_history("t1", before_inputs=False)
    first_answer = next(s for s in history if s.step == 3)
    prefix = first_answer.checkpoint_id[:24]

    done = two_turns("show", "t1", "--checkpoint", prefix)

    assert f"checkpoint {first_answer.checkpoint_id}" in done.out
    assert done.out.splitlines()[-1] == "#4 ai     It is sunny in Paris."


def test_show_uses_colours_on_a_terminal_unless_no_color(two_turns: Cli, workdir: Path) -> None:
    code, shown = in_pty(["show", "t1"], workdir)

    assert code == 0
    assert "\x1b[32;1mhuman\x1b[0m" in shown and "\x1b[36;1mai   \x1b[0m" in shown
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown).replace("\r\n", "\n")
    assert "#8 ai     It is sunny in Rome." in plain


def test_export_writes_json_lines_in_flowgraph_or_openai_format(
    two_turns: Cli, workdir: Path
) -> None:
    messages = _app(workdir).get_state("t1").values.messages

    native = two_turns("export", "t1")
    openai = two_turns("export", "t1", "--format", "openai")

    assert [json.loads(line) for line in native.out.splitlines()] == json.loads(
        json.dumps(messages_to_dicts(messages))
    )
    assert [json.loads(line) for line in openai.out.splitlines()] == to_openai(messages)


def test_delete_forgets_the_thread(two_turns: Cli) -> None:
    assert two_turns("run", "weather.py", "Weather in Oslo?", "--thread", "keep").code == 0
    done = two_turns("delete", "t1")

    assert done.code == 0 and done.err == "Deleted thread t1\n"
    assert [row.split()[0] for row in two_turns("threads").out.splitlines()[1:]] == ["keep"]
    gone = two_turns("show", "t1")
    assert gone.code == 1
    assert gone.err == (
        "flowgraph: error: There is no thread 't1' in flowgraph.db; "
        "`flowgraph threads` lists the ones there are\n"
    )


def test_prune_keeps_the_newest_checkpoints_and_the_conversation(
    two_turns: Cli, workdir: Path
) -> None:
    before = (workdir / "flowgraph.db").stat().st_size
    done = two_turns("prune", "t1", "--keep-last", "2", "--compact")

    assert done.code == 0, done.err
    counts = re.fullmatch(
        r"Thread t1: removed (\d+) checkpoint\(s\) and (\d+) message version\(s\); "
        r"(\d+) checkpoint\(s\) kept\n",
        done.out,
    )
    assert counts is not None, done.out
    dropped, versions, kept = map(int, counts.groups())
    store = SQLiteCheckpointer(workdir / "flowgraph.db")
    assert kept == len(store.history("t1")) and kept >= 2 and dropped == 8 - kept
    assert versions == 0  # every message is still shown by the head
    assert two_turns("show", "t1").out.splitlines()[-1] == "#8 ai     It is sunny in Rome."
    assert len(two_turns("history", "t1").out.splitlines()) == kept + 2
    assert (workdir / "flowgraph.db").stat().st_size <= before
    assert two_turns("prune", "t1", "--keep-last", "0").code == 2


def test_reading_needs_no_app_even_with_other_fields_and_another_message_field(
    cli: Cli, workdir: Path
) -> None:
    (workdir / "notes.py").write_text(
        textwrap.dedent(
            """
            import operator
            from typing import Annotated

            from pydantic import BaseModel

            from flowgraph import END, START, AnyMessage, StateGraph, add_messages


            class State(BaseModel):
                chat: Annotated[list[AnyMessage], add_messages] = []
                notes: Annotated[list[str], operator.add] = []


            def note(state: State) -> dict:
                return {"chat": [("ai", f"noted {len(state.chat)}")], "notes": ["x#0123456789ab"]}


            graph = StateGraph(State)
            graph.add_node("note", note)
            graph.add_edge(START, "note")
            graph.add_edge("note", END)
            app = graph.compile()
            """
        )
    )
    assert cli("run", "notes.py", "one", "--thread", "n").code == 0
    assert cli("run", "notes.py", "two", "--thread", "n").code == 0

    shown = cli("show", "n").out.splitlines()[1:]
    assert shown == ["#1 human  one", "#2 ai     noted 1", "#3 human  two", "#4 ai     noted 3"]
    pruned = cli("prune", "n", "--keep-last", "1")
    assert pruned.code == 0
    assert cli("show", "n").out.splitlines()[1:] == shown


def test_delete_and_prune_refuse_a_thread_a_run_holds(two_turns: Cli, workdir: Path) -> None:
    """A run of another process holds t1 (a claim from this test process): exit status 4."""
    app = _app(workdir)
    app.claim_thread("t1", run_id="busy-run")
    try:
        deleting = two_turns("delete", "t1")
        pruning = two_turns("prune", "t1", "--keep-last", "1")
    finally:
        app.release_thread("t1", run_id="busy-run")
    untouched = len(SQLiteCheckpointer(workdir / "flowgraph.db").history("t1"))
    deleted = two_turns("delete", "t1")

    assert deleting.code == 4 and pruning.code == 4
    assert deleting.err == (
        "flowgraph: error: Thread 't1' is busy: run 'busy-run' is working on it, so it cannot "
        "be deleted now; try again once the run has ended (or stop the run first).\n"
    )
    assert "so it cannot be pruned now" in pruning.err
    assert untouched == 8
    assert len(SQLiteCheckpointer(workdir / "flowgraph.db").history("t1")) == 0  # now gone
    assert deleted.code == 0
