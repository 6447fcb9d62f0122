"""`flowgraph run`: loading the app, streaming its steps, the answer, and which store it uses."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import textwrap
from pathlib import Path

from .conftest import Cli, env_for


def _threads_in(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT thread_id FROM threads ORDER BY 1")]


def test_run_streams_each_step_and_prints_the_answer(cli: Cli, workdir: Path) -> None:
    done = cli("run", "weather.py", "Weather in Paris?", "--thread", "t1")

    assert done.code == 0, done.err
    assert done.out == "It is sunny in Paris.\n"  # only the answer on stdout
    lines = done.err_lines
    assert lines[0] == "thread t1 in flowgraph.db"
    step1 = next(line for line in lines if line.strip().startswith("step 1"))
    assert re.fullmatch(
        r"  step 1  agent  \d+\.\d ms  \+1 msg  \d+ tokens  "
        r'calls get_weather\(\{"city": "Paris"\}\)',
        step1,
    )
    step2 = next(line for line in lines if line.strip().startswith("step 2"))
    assert re.fullmatch(r"  step 2  tools  \d+\.\d ms  \+1 msg  get_weather: success", step2)
    # the last model call's tokens stream before its step line
    tokens = lines.index("agent> It is sunny in Paris.")
    assert re.fullmatch(r"  step 3  agent  \d+\.\d ms  \+1 msg  \d+ tokens", lines[tokens + 1])
    assert lines.index(step2) < tokens
    assert _threads_in(workdir / "flowgraph.db") == ["t1"]


def test_the_prompt_may_come_after_options(cli: Cli, workdir: Path) -> None:
    done = cli("run", "weather.py", "--db", "other.db", "--thread", "t9", "Weather in Oslo?")

    assert done.code == 0, done.err
    assert done.out == "It is sunny in Oslo.\n"
    assert _threads_in(workdir / "other.db") == ["t9"]
    extra = cli("run", "weather.py", "--thread", "t9", "Weather in Oslo?", "again")
    assert extra.code == 2
    assert "unrecognized arguments: Weather in Oslo? again" in extra.err


def test_run_again_on_a_thread_continues_the_conversation(cli: Cli) -> None:
    assert cli("run", "weather.py", "Weather in Paris?", "--thread", "t1").code == 0
    again = cli("run", "weather.py", "And in Rome?", "--thread", "t1")

    assert again.out == "It is sunny in Rome.\n"
    shown = cli("show", "t1").out
    assert shown.count("human") == 2 and "#8 ai" in shown


def test_run_without_thread_makes_one_and_says_which(cli: Cli) -> None:
    done = cli("run", "weather.py", "Weather in Oslo?")

    thread = re.fullmatch(r"thread (t-[0-9a-f]{8}) in flowgraph\.db", done.err_lines[0])
    assert thread is not None
    assert cli("threads").out.splitlines()[1].split()[0] == thread.group(1)


def test_prompt_from_stdin_and_quiet(cli: Cli) -> None:
    done = cli("run", "weather.py", "--quiet", "--thread", "s", input="Weather in Lima?\n")

    assert done.code == 0
    assert done.out == "It is sunny in Lima.\n"
    assert done.err == ""  # no progress, not even the thread line


def test_a_factory_a_module_spec_and_an_uncompiled_graph(cli: Cli, workdir: Path) -> None:
    pkg = workdir / "bots"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "approval.py").write_text((workdir / "approve.py").read_text())

    by_factory = cli("run", "approve.py:make_app", "hi", "--thread", "a")
    by_module = cli("run", "bots.approval:make_app", "hi", "--thread", "b")
    uncompiled = cli("run", "approve.py:graph", "hi", "--thread", "c")

    for done in (by_factory, by_module, uncompiled):
        assert done.code == 3, done.err  # each ran and paused on interrupt()
        assert "interrupt from ask_human" in done.err


def test_the_app_runs_on_the_cli_store_whatever_it_was_compiled_with(
    cli: Cli, workdir: Path
) -> None:
    (workdir / "own.py").write_text(
        textwrap.dedent(
            """
            from flowgraph import ScriptedChatModel, create_react_agent
            from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

            app = create_react_agent(
                ScriptedChatModel(lambda messages: "ok"), checkpointer=SQLiteCheckpointer("own.db")
            )
            """
        )
    )
    done = cli("run", "own.py", "hello", "--thread", "x", "--db", "cli.db")

    assert done.code == 0 and done.out == "ok\n"
    assert _threads_in(workdir / "cli.db") == ["x"]
    assert _threads_in(workdir / "own.db") == []


def test_db_option_before_or_after_the_command_and_from_the_environment(
    cli: Cli, workdir: Path
) -> None:
    assert cli("--db", "one.db", "run", "weather.py", "Weather in Rome?", "--thread", "a").code == 0
    assert cli("run", "weather.py", "Weather in Rome?", "--thread", "b", "--db", "two.db").code == 0
    env = {"FLOWGRAPH_DB": str(workdir / "three.db")}
    assert cli("run", "weather.py", "Weather in Rome?", "--thread", "c", env=env).code == 0

    assert _threads_in(workdir / "one.db") == ["a"]
    assert _threads_in(workdir / "two.db") == ["b"]
    assert _threads_in(workdir / "three.db") == ["c"]
    assert not (workdir / "flowgraph.db").exists()
    assert cli("threads", env=env).out.splitlines()[1].split()[0] == "c"


def test_a_graph_without_messages_takes_input_json_and_prints_its_state(
    cli: Cli, workdir: Path
) -> None:
    (workdir / "count.py").write_text(
        textwrap.dedent(
            """
            from typing import TypedDict

            from flowgraph import END, START, StateGraph


            class Counter(TypedDict):
                n: int


            graph = StateGraph(Counter)
            graph.add_node("double", lambda state: {"n": state["n"] * 2})
            graph.add_edge(START, "double")
            graph.add_edge("double", END)
            app = graph.compile()
            """
        )
    )
    done = cli("run", "count.py", "--input", '{"n": 21}', "--thread", "c")

    assert done.code == 0, done.err
    assert done.out == '{"n": 42}\n'
    no_prompt_field = cli("run", "count.py", "hello")
    assert no_prompt_field.code == 2
    assert "--input JSON" in no_prompt_field.err


def test_the_installed_script_is_the_same_command(workdir: Path) -> None:
    script = shutil.which("flowgraph")
    assert script is not None, "pip install -e . installs the `flowgraph` script"
    env = env_for()
    done = subprocess.run(
        [script, "run", "weather.py", "Weather in Kyiv?", "-q"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is sunny in Kyiv.\n"
