"""Human in the loop from the shell: pausing, the resume command, answering at a terminal, forks."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT, Cli, env_for, in_pty


def test_a_paused_run_prints_the_command_that_resumes_it(cli: Cli) -> None:
    paused = cli("run", "approve.py:make_app", "Plan a trip", "--thread", "h1", "--db", "hitl.db")

    assert paused.code == 3
    assert paused.out == ""
    assert re.search(
        r'interrupt from ask_human \[\S+\]: \{"question": "Approve the plan\?"\}', paused.err
    )
    command = next(line.strip() for line in paused.err_lines if "resume h1" in line)
    assert command == "flowgraph --db hitl.db resume h1 --value JSON"

    words = shlex.split(command.replace("JSON", "'\"yes\"'"))
    done = cli(*words[1:])
    assert done.code == 0, done.err
    assert done.out == "The human said: yes\n"
    assert cli("--db", "hitl.db", "show", "h1").out.splitlines()[-1] == (
        "#2 ai     The human said: yes"
    )


def test_resume_needs_a_value_for_an_interrupt_and_valid_json(cli: Cli) -> None:
    assert cli("run", "approve.py:make_app", "Plan", "--thread", "h1").code == 3

    missing = cli("resume", "h1")
    bad = cli("resume", "h1", "--value", "{yes")

    assert missing.code == 2
    assert missing.err == (
        'flowgraph: error: Thread h1 is waiting for a value: {"question": "Approve the plan?"}; '
        "give it with `flowgraph resume h1 --value JSON`\n"
    )
    assert bad.code == 2 and len(bad.err_lines) == 1
    assert bad.err.startswith("flowgraph: error: --value is not valid JSON")
    assert cli("resume", "h1", "--value", '{"approved": true}').out == (
        "The human said: {'approved': True}\n"
    )
    finished = cli("resume", "h1")
    assert finished.code == 1 and "has finished; nothing to resume" in finished.err


def test_answering_the_interrupt_at_a_terminal(cli: Cli, workdir: Path) -> None:
    code, shown = in_pty(
        ["run", "approve.py:make_app", "Plan a trip", "--thread", "tty"],
        workdir,
        answers=[("resume value (JSON or text)> ", "sure thing")],
    )

    assert code == 0, shown
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown).replace("\r\n", "\n")
    assert "interrupt from ask_human" in plain and '{"question": "Approve the plan?"}' in plain
    assert plain.rstrip().endswith("The human said: sure thing")
    assert cli("show", "tty").out.splitlines()[-1] == "#2 ai     The human said: sure thing"


def test_a_breakpoint_stops_and_resume_continues_without_a_value(cli: Cli, workdir: Path) -> None:
    (workdir / "gated.py").write_text(
        textwrap.dedent(
            """
            from flowgraph import ScriptedChatModel, create_react_agent
            from weather import get_weather, reply

            agent = create_react_agent(ScriptedChatModel(reply), [get_weather])
            app = agent.builder.compile(interrupt_before=["tools"])
            """
        )
    )
    stopped = cli("run", "gated.py", "Weather in Bern?", "--thread", "g")

    assert stopped.code == 3
    assert "Thread g stopped before tools. Continue it with:\n  flowgraph resume g\n" in (
        stopped.err
    )
    assert "stopped before tools" in cli("threads").out
    done = cli("resume", "g")
    assert done.code == 0, done.err
    assert done.out == "It is sunny in Bern.\n"


def test_resume_finds_the_app_run_used_or_takes_app(cli: Cli, workdir: Path) -> None:
    (workdir / "script.py").write_text(
        textwrap.dedent(
            """
            from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
            from approve import graph

            app = graph.compile(checkpointer=SQLiteCheckpointer("flowgraph.db"))
            app.invoke({"messages": [("user", "Plan")]}, thread_id="py")
            """
        )
    )
    subprocess.run([sys.executable, "script.py"], cwd=workdir, env=env_for(), check=True)

    unknown = cli("resume", "py", "--value", '"ok"')
    assert unknown.code == 1
    assert "Which app runs thread 'py'? Pass --app FILE[:NAME]" in unknown.err
    done = cli("resume", "py", "--value", '"ok"', "--app", "approve.py:make_app")
    assert done.out == "The human said: ok\n"


def test_fork_answers_an_old_interrupt_again_on_a_new_branch(cli: Cli) -> None:
    assert cli("run", "approve.py:make_app", "Plan", "--thread", "f").code == 3
    assert cli("resume", "f", "--value", '"yes"').code == 0
    first = cli("history", "f").out.splitlines()[1].split()[2]  # the input checkpoint

    forked = cli("fork", "f", "--checkpoint", first[:20], "--value", '"no"')

    assert forked.code == 0, forked.err
    assert forked.out == "The human said: no\n"
    assert f"forking thread f at step 0 ({first})" in forked.err
    rows = cli("history", "f").out.splitlines()[1:-1]
    assert [r.split()[7] for r in rows] == ["input", "loop", "fork"]
    assert cli("show", "f").out.splitlines()[-1] == "#2 ai     The human said: no"


def test_fork_with_a_new_prompt(cli: Cli) -> None:
    assert cli("run", "weather.py", "Weather in Paris?", "--thread", "w").code == 0
    first = cli("history", "w").out.splitlines()[1].split()[2]

    forked = cli("fork", "w", "Weather in Tokyo?", "--checkpoint", first)

    assert forked.out == "It is sunny in Tokyo.\n"
    lines = cli("show", "w").out.splitlines()[1:]
    assert lines[:2] == ["#1 human  Weather in Paris?", "#2 human  Weather in Tokyo?"]
    assert lines[-1] == "#5 ai     It is sunny in Tokyo."


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("yes", "Done: Booked Chez Paul for 2 at 20:00 (confirmation FG-1)."),
        ("no, too pricey", "Understood, I did not book anything."),
    ],
)
def test_on_a_terminal_you_are_the_human_of_the_example(
    workdir: Path, cli: Cli, typed: str, answer: str
) -> None:
    (workdir / "examples").symlink_to(ROOT / "examples")

    code, shown = in_pty(
        ["run", "examples/human_in_the_loop.py", "Book a table for two at 20:00.", "--thread", "d"],
        workdir,
        answers=[("resume value (JSON or text)> ", typed)],
    )

    assert code == 0, shown
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown).replace("\r\n", "\n")
    assert '"tool_calls": [{"name": "book_table", "args": {"restaurant": "Chez Paul"' in plain
    assert plain.rstrip().endswith(answer)
    if typed != "yes":  # the refusal, with the words typed, is what the model read
        assert f"The user declined this call: {typed}" in cli("show", "d").out
