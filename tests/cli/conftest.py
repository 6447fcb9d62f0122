"""The CLI driven as a user drives it: a subprocess in a scratch directory, real SQLite files.

Agent files are written into the test's directory and use `ScriptedChatModel`
with a function of the messages (not a list), so every new process answers
the same way. `cli(...)` runs `python -m flowgraph.cli`; `in_pty(...)` runs it
on a pseudo-terminal, for colours and for answering prompts.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WEATHER = '''
from flowgraph import ScriptedChatModel, create_react_agent, tool


@tool
def get_weather(city: str) -> str:
    """Look up today's weather.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def reply(messages):
    last = messages[-1]
    if last.type == "human":
        city = last.text.rstrip("?").split()[-1]
        return {"tool_calls": [{"name": "get_weather", "args": {"city": city}}]}
    return f"It is {last.text}."


app = create_react_agent(ScriptedChatModel(reply), [get_weather])
'''

APPROVE = """
from flowgraph import END, START, MessagesState, StateGraph, interrupt


def ask_human(state: MessagesState) -> dict:
    answer = interrupt({"question": "Approve the plan?"})
    return {"messages": [("ai", f"The human said: {answer}")]}


graph = StateGraph(MessagesState)
graph.add_node("ask_human", ask_human)
graph.add_edge(START, "ask_human")
graph.add_edge("ask_human", END)


def make_app():
    return graph.compile()
"""


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def env_for(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "PYTHONIOENCODING": "utf-8",
        "HOME": os.environ.get("HOME", "/tmp"),
        "TERM": "xterm",
    }
    env.update(extra or {})
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "weather.py").write_text(textwrap.dedent(WEATHER))
    (tmp_path / "approve.py").write_text(textwrap.dedent(APPROVE))
    return tmp_path


Cli = Callable[..., Result]


@pytest.fixture
def cli(workdir: Path) -> Cli:
    """Run `python -m flowgraph.cli *args` in the work directory (stdin: `input` or nothing)."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
        done = subprocess.run(
            [sys.executable, "-m", "flowgraph.cli", *args],
            cwd=workdir,
            env=env_for(env),
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    return run


def in_pty(
    args: Sequence[str], cwd: Path, answers: Sequence[tuple[str, str]] = ()
) -> tuple[int, str]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal; type each answer
    once its prompt has appeared. Returns the exit status and everything shown."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph.cli", *args],
        cwd=cwd,
        env=env_for(),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    shown = b""
    pending = list(answers)
    answered_at = 0
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                raise AssertionError(f"the CLI said nothing for a minute; so far: {shown!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if pending and pending[0][0].encode() in shown[answered_at:]:
                os.write(master, pending.pop(0)[1].encode() + b"\n")
                answered_at = len(shown)
    finally:
        os.close(master)
    return proc.wait(timeout=60), shown.decode("utf-8", "replace")
