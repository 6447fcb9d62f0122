"""User code type-checks: mypy --strict and pyright read the examples and the README as written.

Both checkers run once over a folder holding every example, every python
snippet of the README and of the manual's typing section (extracted as
tests/test_docs.py does) and the programs below: what must pass has no
error at all, and what is wrong (a field's type, a field no schema has, a
misspelled field) is reported by each checker, on its line, naming the
field where the message can. They read the package from this checkout
(MYPYPATH, pyright's extraPaths), as a user's checker reads an installed
wheel; the last test installs it with `pip install -e .` and shows that
both checkers see an editable install too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_docs import README, snippets

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TYPED_STATE = (ROOT / "docs" / "state-and-reducers.md").read_text(encoding="utf-8")
TYPED_STATE = TYPED_STATE[TYPED_STATE.index("## Typed state") :]
"""The manual's section on typing: its code type-checks as it says."""

CORRECT = """\
from typing import TypedDict

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph


class State(MessagesState):
    persona: str = "assistant"


class Out(TypedDict):
    persona: str


def reply(state: State) -> dict[str, list[AIMessage]]:
    return {"messages": [AIMessage("hi " + state.messages[-1].text)]}


graph = StateGraph(State)
graph.add_node("reply", reply)
graph.add_edge(START, "reply").add_edge("reply", END)
app = graph.compile()
state = app.invoke({"messages": [HumanMessage("x")]})
persona: str = state.persona
text: str = state.messages[-1].text
final: State = app.invoke(None, version="v2").value
items: list[object] = app.invoke({}, stream_mode="updates")
for values in app.stream({}, stream_mode="values"):
    shown = values["messages"]  # a State, or the dict a pause yields: both read as mappings

narrow = StateGraph(State, output_schema=Out).compile()
only: str = narrow.invoke({})["persona"]

outer = StateGraph(State)
outer.add_node("inner", app)  # a compiled graph is a node of another graph
"""
"""The issue's program and its neighbours: every line is right, so no checker says a word."""

WRONG = """\
from typing import TypedDict

from flowgraph import MessagesState, StateGraph


class State(MessagesState):
    persona: str = "assistant"


class Out(TypedDict):
    persona: str


app = StateGraph(State).compile()
state = app.invoke({"messages": []})
count: int = state.persona  # wrong: persona
state.personna  # wrong: personna
later: int = app.invoke(None, version="v2").value.persona  # wrong: persona

narrow = StateGraph(State, output_schema=Out).compile()
result = narrow.invoke({})
result["messages"]  # wrong: messages
size: int = result["persona"]  # wrong: persona
"""
"""Each line marked `# wrong: name` misuses invoke's result; each checker must say so."""


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    message: str


def wrong_lines() -> dict[int, str]:
    """The marked lines of WRONG (1-based) and the name each one misuses."""
    return {
        number: mark.group(1)
        for number, line in enumerate(WRONG.splitlines(), start=1)
        if (mark := re.search(r"# wrong: (\w+)", line))
    }


def pyright_command() -> list[str] | None:
    """pyright as the test extra installs it (`pyright[nodejs]`), or one on PATH."""
    if importlib.util.find_spec("pyright") is not None:
        return [sys.executable, "-m", "pyright"]
    found = shutil.which("pyright")
    return [found] if found else None


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of user programs: the examples, the README's snippets, CORRECT and WRONG."""
    folder = tmp_path_factory.mktemp("programs")
    for example in EXAMPLES:
        shutil.copy(example, folder / example.name)
    for number, code in enumerate(snippets(README.read_text(encoding="utf-8")), start=1):
        (folder / f"readme_{number}.py").write_text(code, encoding="utf-8")
    for number, code in enumerate(snippets(TYPED_STATE), start=1):
        (folder / f"typed_state_{number}.py").write_text(code, encoding="utf-8")
    (folder / "correct.py").write_text(CORRECT, encoding="utf-8")
    (folder / "wrong.py").write_text(WRONG, encoding="utf-8")
    return folder


def checked_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.py"))


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def _without_pythonpath() -> dict[str, str]:
    """The environment without PYTHONPATH: the checkers find the package only where told."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def mypy_diagnostics(folder: Path, *options: str, env: dict[str, str]) -> list[Diagnostic]:
    """mypy --strict's errors over the folder's programs (no config but the flags here)."""
    config = folder / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")
    command = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config)]
    command += ["--cache-dir", str(folder / ".mypy_cache"), "--no-error-summary", *options]
    done = _run([*command, *checked_files(folder)], folder, env)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    found = []
    for line in done.stdout.splitlines():
        match = re.match(r"(.+?):(\d+): error: (.*)", line)
        if match:
            found.append(Diagnostic(Path(match[1]).name, int(match[2]), match[3]))
    return found


def pyright_diagnostics(folder: Path, *options: str, env: dict[str, str]) -> list[Diagnostic]:
    """pyright's errors over the folder's programs (`--outputjson`: no version check online)."""
    command = pyright_command()
    assert command is not None
    done = _run([*command, "--outputjson", *options, *checked_files(folder)], folder, env)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads(done.stdout)
    return [
        Diagnostic(Path(d["file"]).name, d["range"]["start"]["line"] + 1, d["message"])
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]


@pytest.fixture(scope="module")
def mypy_found(programs: Path) -> list[Diagnostic]:
    return mypy_diagnostics(programs, env={**_without_pythonpath(), "MYPYPATH": str(ROOT)})


@pytest.fixture(scope="module")
def pyright_found(programs: Path) -> list[Diagnostic]:
    if pyright_command() is None:
        pytest.skip("pyright is not installed: pip install -e '.[test]'")
    (programs / "pyrightconfig.json").write_text(
        json.dumps({"extraPaths": [str(ROOT)], "pythonVersion": "3.11"}), encoding="utf-8"
    )
    return pyright_diagnostics(programs, "--pythonpath", sys.executable, env=_without_pythonpath())


CHECKED = [
    *(path.name for path in EXAMPLES),
    *(f"readme_{n}.py" for n in range(1, len(snippets(README.read_text(encoding="utf-8"))) + 1)),
    *(f"typed_state_{n}.py" for n in range(1, len(snippets(TYPED_STATE)) + 1)),
]


def test_the_programs_are_all_here() -> None:
    assert "quickstart.py" in CHECKED
    assert "readme_1.py" in CHECKED  # the README has python to check
    assert "typed_state_1.py" in CHECKED


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_examples_and_the_readme_type_check(checker: str, request: pytest.FixtureRequest) -> None:
    found: list[Diagnostic] = request.getfixturevalue(f"{checker}_found")
    errors = [d for d in found if d.file in CHECKED or d.file == "correct.py"]
    assert errors == [], "\n".join(f"{d.file}:{d.line}: {d.message}" for d in errors)


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_a_wrong_use_of_invokes_result_is_reported(
    checker: str, request: pytest.FixtureRequest
) -> None:
    found: list[Diagnostic] = request.getfixturevalue(f"{checker}_found")
    reported = {d.line: d.message for d in found if d.file == "wrong.py"}
    assert set(reported) == set(wrong_lines()), reported
    for line, name in wrong_lines().items():
        message = reported[line]
        if "int" in WRONG.splitlines()[line - 1].split("=")[0]:
            # a field read as the wrong type: the message says which types
            assert '"str"' in message and '"int"' in message, message
        else:
            assert f'"{name}"' in message, message  # a field no schema has: named


def test_an_editable_install_is_seen_by_both_checkers(tmp_path: Path) -> None:
    """`pip install -e .` as the README says: mypy and pyright find the package through it.

    setuptools' default editable install is an import hook no checker runs;
    pyproject's `package-dir` makes it a plain path `.pth` they read. The
    program has one error on purpose: reporting it means the package was read.
    """
    if pyright_command() is None:
        pytest.skip("pyright is not installed: pip install -e '.[test]'")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    install += ["--disable-pip-version-check", "--no-deps", "-e", str(ROOT)]
    done = _run(install, tmp_path, _without_pythonpath())
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "user.py").write_text(
        textwrap.dedent(
            """\
            from flowgraph import AIMessage

            text: int = AIMessage("hi").text
            """
        ),
        encoding="utf-8",
    )
    env = _without_pythonpath()
    by_mypy = mypy_diagnostics(folder, "--python-executable", str(python), env=env)
    by_pyright = pyright_diagnostics(folder, "--pythonpath", str(python), env=env)
    for found in (by_mypy, by_pyright):
        messages = [d.message for d in found if d.file == "user.py"]
        assert len(messages) == 1, messages  # not "cannot find flowgraph"
        assert '"str"' in messages[0] and '"int"' in messages[0], messages
