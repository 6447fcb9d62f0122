"""Every example runs offline, as the manual promises, and says what it should.

Each example runs in a fresh process with a clean environment (no
FLOWGRAPH_MODEL: the scripted model) and this checkout on its path: as a
script (`python examples/NAME.py`), and as an app through the `flowgraph`
command (`run` with docs/examples.md's commands, and `draw`). With
FLOWGRAPH_TEST_OPENAI_URL set, they also run against llama.cpp's server; its
tiny model always says the same sentence, so those checks are on structure
(the run finished, the replies came from the server), not on wording.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from flowgraph import AIMessage, ScriptedChatModel, create_react_agent
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.store import open_store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("[!_]*.py"))
EXPECTED = {
    "quickstart.py": [
        "agent > Paris is sunny (24°C); Rome is cloudy (19°C).",
        "get_weather -> sunny, 24°C",
        "The conversation has 7 messages.",
    ],
    "react_agent.py": [
        "agent > calls get_weather({'city': 'Atlantis'})  [call_1_1]",
        "agent > calls convert({'celsius': 24.0})  [call_2_0]",
        "tool  < get_weather [success]: sunny, 24°C",
        "tool  < get_weather [error]: Error: tool `get_weather` raised LookupError: "
        "no weather station in Atlantis",
        "tool  < convert [success]: 75.2°F",
        "agent > Paris is sunny at 24°C (75.2°F). I could not find any weather for Atlantis.",
        "  step 5: ran agent      next (done)  messages: 7",
        "  step 3: ran agent      next tools   messages: 5",
        "  step 1: ran agent      next tools   messages: 2",
    ],
    "persona_switch.py": [
        "[code_reviewer] messages[0] id=",
        "agent > Bug: division by zero when n == 0. Missing type hints. Rename `f`.",
        "agent > Happy to help! (6 messages so far)",
        "system messages at positions [0] of 7",
        "system message ids over three turns: 1 distinct (replaced in place)",
        "  step  6: code_reviewer 'You are a strict code reviewer: point out every bug, be terse.'",
        "  step 10: friendly      'You are a friendly assistant chatting with Ada.'",
    ],
    "group_chat.py": [
        "        bob: I'm stuck on the flaky CI job.",
        "  assistant: Thanks, Carol! Heard so far from: Alice, Bob, Carol.",
        '{"role": "user", "content": "I finished the login page.", "name": "alice"}',
        '{"role": "user", "content": "Can someone pair with Bob on CI?", "name": "carol"}',
    ],
    "human_in_the_loop.py": [
        "paused in 'approve': Run these tool calls?",
        "  book_table({'restaurant': 'Chez Paul', 'people': 2, 'time': '20:00'})",
        "agent > Done: Booked Chez Paul for 2 at 20:00 (confirmation FG-1).",
        "  send_invitations({'message': 'Dinner at Chez Paul, 20:00!'})",
        "agent > Understood, I did not send anything.",
        "  send_invitations [error]: The user declined this call: do not email all my contacts",
        "What the tools actually did: ['Chez Paul, 2 people at 20:00']",
        "agent > Understood, I did not book anything.\nwhat if > yes, at checkpoint ",
        "agent > Done: Booked Chez Paul for 2 at 20:00 (confirmation FG-1).\n"
        "Requests the booking service received: 1; bookings: ['Chez Paul, 2 people at 20:00']",
    ],
    "resume_after_crash.py": [
        "child exit status: -9",
        "  step 2: ran tools     next agent",
        "The last one (step 2) holds 4 messages:",
        "kept: the 4 messages written before the kill, same ids: True",
        "no duplicates: 7 messages, 7 distinct ids",
        "every tool call answered exactly once: True",
        "the tool ran 2 times for 2 calls: ['1.0', '2.0']",
    ],
    "map_reduce.py": [
        "  checkpoints: Every step writes a msgpack checkpoint.\n"
        "  messages: Messages merge by id.\n"
        "  diagrams: Any graph exports to Mermaid, DOT or SVG.\n",
        "report: Digest of 3 topics: Every step writes a msgpack checkpoint. Messages merge by id. "
        "Any graph exports to Mermaid, DOT or SVG.",
        "  step 1: ran summarise, summarise, summarise; summaries: 3",
        "  step 2: ran report; summaries: 3",
    ],
    "export_diagrams.py": [
        "  wrote react_agent.mmd",
        "  wrote react_agent.dot",
        "  wrote react_agent.svg",
        "  wrote react_agent.html",
        "  wrote react_agent.path.svg (path of thread 'weather')",
        "  wrote persona_switch.svg",
        "  wrote persona_switch.path.html (path of thread 'review')",
    ],
    "serve_agent.py": [
        "  agent -> ['messages']",
        "  __interrupt__ -> a pause",
        "thread interrupted: Run these tool calls? [\"book_meeting({'who': 'Ada', "
        "'when': 'Friday 10:00'})\"]",
        "streamed 8 tokens: Done. Booked: Ada, Friday 10:00 (confirmation M-42).",
        "thread idle, 4 messages, 6 checkpoints",
        "runs: ['success', 'success']",
        "store: [(['people', 'ada'], 'meetings', {'prefers': 'mornings'})]",
    ],
    "from_langgraph.py": [
        "================================ Human Message =================================\n\n"
        "Where is my order 42?",
        "Tool Calls:\n  lookup_order (call_1_0)\n Call ID: call_1_0\n  Args:\n    order_id: 42",
        "Name: lookup_order\n\nshipped on Monday, arriving Thursday",
        "Order 42: shipped on Monday, arriving Thursday.",
        "topic: orders",
        "the diagram ends smalltalk at END: True",
        "edited: Order 7: waiting for stock. (4 messages)",
        "desk-2: Happy to chat! Ask me about an order any time.",
        "tools the model was offered: ['lookup_order', 'cancel_order']",
    ],
    "remember_preferences.py": [
        "  remember -> saved diet",
        "  recall -> seat: window seat; diet: vegetarian",
        "[friday] agent > Booked Lisbon on Friday: window seat, vegetarian meal.",
        "'friday' holds 4 messages, none of 'monday'; the store in example.db:",
        "  ('users', 'ada', 'preferences') 'seat': {'topic': 'seat', 'preference': 'window seat'}",
    ],
    "traced_run.py": [
        "invoke_agent weather_agent  thread=trip steps=3 tokens=24+10  (",
        "  agent  step 1  (",
        "    chat scripted  scripted finish=tool_calls tokens=6+4  (",
        "    execute_tool get_weather  call_1_0  (",
        "    execute_tool get_weather  call_1_1  ERROR LookupError: no weather station in Atlantis",
        "agent > Found: sunny, 24°C. Unknown cities: 1.",
        "The run span names the thread's head checkpoint (",
        '        "gen_ai.response.finish_reasons": [\n            "tool_calls"\n        ],',
    ],
    "mcp_tools.py": [
        '  get_forecast: Today\'s forecast for a city, e.g. "Paris".',
        "  progress [station_report]: 3/3 station 3 of 3 read",
        'tool  < get_forecast [success]: { "city": "Paris", "conditions": "sunny", '
        '"temperature_c": 24.0 }',
        "        artifact: {'city': 'Paris', 'conditions': 'sunny', 'temperature_c': 24.0}",
        "tool  < get_forecast [error]: Error executing tool get_forecast: "
        "no weather station in Atlantis",
        "tool  < weather_map [success]: Weather map of Paris",
        "        image: image/png, 70 bytes",
        "agent > Paris: sunny, 24°C (map attached). There is no weather station in Atlantis.",
    ],
    "functional_workflow.py": [
        "  research | looking into the practice",
        "  research -> Pitfalls of streaming in flowgraph.",
        "  paused: {'approve this post?': 'History of streaming in flowgraph. Practice of "
        "streaming in flowgraph. Pitfalls of streaming in flowgraph.'}",
        "the research tasks ran at once: True",
        "tasks run so far: {'draft': 1, 'research': 3}",
        "  Published post #1: History of streaming in flowgraph.",
        "tasks run after the resume: {'draft': 1, 'research': 3} (none again)",
        "  Published post #2:...",
        "  step 3: loop  next (done)",
    ],
    "celery_workers.py": [
        # offline there is no broker: it says how to run it instead of failing
        "No broker: set FLOWGRAPH_BROKER_URL",
    ],
}
LLAMA_URL = os.environ.get("FLOWGRAPH_TEST_OPENAI_URL")


def run_example(example: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`python examples/NAME.py DB` in a clean environment, from this checkout."""
    base = {
        "PATH": "/usr/bin:/bin",
        "PYTHONIOENCODING": "utf-8",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),  # this checkout, whatever `pip install -e` pointed at
    }
    done = subprocess.run(
        [sys.executable, str(example), str(tmp_path / "example.db")],
        capture_output=True,
        text=True,
        timeout=120,
        env=base | env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_offline(example: Path, tmp_path: Path) -> None:
    done = run_example(example, tmp_path)
    for line in EXPECTED.get(example.name, []):
        assert line in done.stdout
    if example.name == "resume_after_crash.py":  # the child's last words, on its stderr
        assert "  model call 2, inside the agent node: SIGKILL now\n" in done.stderr


def test_every_example_has_expectations() -> None:
    missing = {p.name for p in EXAMPLES} - set(EXPECTED)
    assert not missing, f"add what these print to EXPECTED: {sorted(missing)}"


def test_export_diagrams_writes_files_that_parse(tmp_path: Path) -> None:
    run_example(ROOT / "examples" / "export_diagrams.py", tmp_path)
    out = tmp_path / "example.db"  # the example takes its first argument as the folder
    for name in ("react_agent.svg", "react_agent.path.svg", "persona_switch.svg"):
        svg = ElementTree.parse(out / name).getroot()
        assert svg.tag.endswith("svg")
    assert "tools" in (out / "react_agent.svg").read_text(encoding="utf-8")
    assert (out / "react_agent.mmd").read_text(encoding="utf-8").startswith("---")
    html = (out / "persona_switch.path.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html>") and "http://" not in html


def stored_messages(db: Path, thread_id: str) -> list[object]:
    """The thread's messages, read back from the example's SQLite file."""
    reader = create_react_agent(ScriptedChatModel([]), checkpointer=SQLiteCheckpointer(db))
    messages: list[object] = reader.get_state(thread_id).values.messages
    return messages


@pytest.mark.skipif(
    not LLAMA_URL,
    reason="FLOWGRAPH_TEST_OPENAI_URL is not set; start ../shared/tools/llama-server/start.sh "
    "PORT and export FLOWGRAPH_TEST_OPENAI_URL=http://127.0.0.1:PORT/v1",
)
@pytest.mark.parametrize(
    ("name", "thread_id", "human_turns"),
    [("quickstart.py", "quickstart", 2), ("resume_after_crash.py", "release-notes", 2)],
)
def test_example_runs_against_llama_server(
    name: str, thread_id: str, human_turns: int, tmp_path: Path
) -> None:
    done = run_example(
        ROOT / "examples" / name,
        tmp_path,
        FLOWGRAPH_MODEL="openai:tiny",
        FLOWGRAPH_BASE_URL=LLAMA_URL or "",
    )
    messages = stored_messages(tmp_path / "example.db", thread_id)
    humans = [i for i, m in enumerate(messages) if getattr(m, "type", None) == "human"]
    assert len(humans) == human_turns
    # every turn ended with the server's reply: an AI message it wrote, with usage
    for start, end in zip(humans, [*humans[1:], len(messages)], strict=True):
        reply = messages[end - 1]
        assert isinstance(reply, AIMessage) and reply.text
        assert reply.response_metadata["model_name"] != "scripted"
        assert reply.usage is not None and reply.usage.output_tokens > 0
        assert end - 1 > start
    ids = [getattr(m, "id", None) for m in messages]
    assert len(set(ids)) == len(ids)
    if name == "resume_after_crash.py":
        assert "child exit status: -9" in done.stdout  # it really was killed, then resumed
        assert "same ids: True" in done.stdout


# -- every example is an app: the `flowgraph` command runs and draws each one ----------
#
# Each example has a session: `flowgraph` commands written as in docs/examples.md (from the
# repository's root: `examples/NAME.py`), each with what it must print. They run as
# real subprocesses of the installed `flowgraph` script, in a scratch directory that
# links `examples/` (so the default store, ./flowgraph.db, is the scratch one).


@dataclass(frozen=True)
class Call:
    """One `flowgraph` command line and what it must do."""

    command: str
    """As a shell would read it: `[VAR=value ...] flowgraph ARGS`."""
    code: int = 0
    out: str | None = None
    """All of stdout (the answer), when given."""
    err: tuple[str, ...] = ()
    """Lines stderr must hold (progress, pauses, hints); {ms} and {tokens} match any."""
    not_err: tuple[str, ...] = ()
    """Text stderr must not hold (a step that must not run again)."""


@dataclass(frozen=True)
class Session:
    calls: tuple[Call, ...]
    nodes: tuple[str, ...]
    """The graph's nodes, which its diagram must name."""
    model: bool = True
    """False if no model answers (the reply is the graph's own)."""


def _run(prompt: str, answer: str, *err: str) -> Call:
    return Call(f"flowgraph run {prompt}", out=answer + "\n", err=err)


SESSIONS = {
    "quickstart.py": Session(
        (
            _run(
                """examples/quickstart.py "What's the weather in Paris and Rome?\"""",
                "Paris is sunny (24°C); Rome is cloudy (19°C).",
                "  step 2  tools  {ms}  +2 msg  get_weather: success  get_weather: success",
                "agent> Paris is sunny (24°C); Rome is cloudy (19°C).",
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "react_agent.py": Session(
        (
            _run(
                'examples/react_agent.py "Weather in Paris (also in °F) and in Atlantis?"',
                "Paris is sunny at 24°C (75.2°F). I could not find any weather for Atlantis.",
                "  step 2  tools  {ms}  +2 msg  get_weather: success  get_weather: error",
                "  step 4  tools  {ms}  +1 msg  convert: success",
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "persona_switch.py": Session(
        (
            _run(
                'examples/persona_switch.py "Please review: def f(n): return 10 / n"',
                "Bug: division by zero when n == 0. Missing type hints. Rename `f`.",
                "  step 2  persona  {ms}  +2 msg",  # the system message and the reply's turn
            ),
        ),
        nodes=("triage", "persona", "agent"),
    ),
    "from_langgraph.py": Session(
        (
            _run(
                'examples/from_langgraph.py "Where is my order 42?"',
                "Order 42: shipped on Monday, arriving Thursday.",
                "  step 3  tools  {ms}  +1 msg  lookup_order: success",
            ),
        ),
        nodes=("triage", "orders", "tools", "smalltalk"),
    ),
    "group_chat.py": Session(
        (
            Call(
                "flowgraph run examples/group_chat.py --input "
                """'{"messages": [{"role": "user", "content": "CI is flaky.", "name": "bob"}]}'"""
                " --thread standup",
                out="Thanks, Bob! Heard so far from: Bob.\n",
            ),
            Call(
                'flowgraph run examples/group_chat.py "Who has spoken?" --thread standup -q',
                out="Thanks! Heard so far from: Bob.\n",
            ),
        ),
        nodes=("agent",),
    ),
    "remember_preferences.py": Session(
        (
            _run(
                """examples/remember_preferences.py "I'm vegetarian and like window seats.\"""",
                "Noted: vegetarian meals and window seats from now on.",
                "  step 2  tools  {ms}  +2 msg  remember: success  remember: success",
            ),
            # a new thread: the preferences come from the store, not from its messages
            _run(
                'examples/remember_preferences.py "Book me a flight to Lisbon on Friday."',
                "Booked Lisbon on Friday: window seat, vegetarian meal.",
                '  step 1  agent  {ms}  +1 msg  {tokens}  calls recall({"query": "diet seat"})',
            ),
            # --db names the checkpoints and the long-term store: another file knows nothing
            _run(
                'examples/remember_preferences.py "Book me a flight to Lisbon on Friday." '
                "--db trip.db",
                "Booked Lisbon on Friday: no saved preferences.",
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "human_in_the_loop.py": Session(
        (
            Call(
                "flowgraph run examples/human_in_the_loop.py "
                '"Book a table for two at Chez Paul at 20:00." --thread dinner',
                code=3,
                out="",
                err=(
                    "  step 2  approve  paused  +0 msg",
                    "Thread dinner is waiting for input. Resume it with:",
                    "  flowgraph resume dinner --value JSON",
                ),
            ),
            Call(
                """flowgraph resume dinner --value '{"approved": true}'""",
                out="Done: Booked Chez Paul for 2 at 20:00 (confirmation FG-1).\n",
                err=("  step 3  tools  {ms}  +1 msg  book_table: success",),
            ),
            Call(
                'flowgraph run examples/human_in_the_loop.py "Now invite all my contacts." '
                "--thread dinner",
                code=3,
                out="",
            ),
            Call(
                """flowgraph resume dinner --value '"no, not tonight"'""",
                out="Understood, I did not send anything.\n",
                err=("  step 7  approve  {ms}  +1 msg  send_invitations: error",),
                not_err=("tools",),
            ),
        ),
        nodes=("agent", "approve", "tools"),
    ),
    "resume_after_crash.py": Session(
        (
            Call(
                "CRASH_AT_MODEL_CALL=2 flowgraph run examples/resume_after_crash.py "
                '"Fetch the release notes of versions 1.0 and 2.0." --thread notes',
                code=-signal.SIGKILL,
                out="",
                err=("  model call 2, inside the agent node: SIGKILL now",),
            ),
            Call(
                "flowgraph resume notes",
                out="1.0 first release: SQLite checkpoints; 2.0 adds resume and diagrams.\n",
                err=("  step 3  agent  {ms}  +1 msg  {tokens}",),
                not_err=("tools",),  # the tools ran before the kill: not again
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "serve_agent.py": Session(
        (
            Call(
                'flowgraph run examples/serve_agent.py "Book a meeting with Ada on Friday" '
                "--thread ada",
                code=3,
                out="",
                err=("  step 2  approve  paused  +0 msg", "  flowgraph resume ada --value JSON"),
            ),
            Call(
                """flowgraph resume ada --value '"yes"'""",
                out="Done. Booked: Ada, Friday 10:00 (confirmation M-42).\n",
                err=("  step 3  tools  {ms}  +1 msg  book_meeting: success",),
            ),
        ),
        nodes=("agent", "approve", "tools"),
    ),
    "map_reduce.py": Session(
        (
            _run(
                'examples/map_reduce.py "Checkpoints make runs resumable. Messages merge by id. '
                'Diagrams show the path."',
                "Digest of 3 topics: Checkpoints make runs resumable. Messages merge by id. "
                "Diagrams show the path.",
                # the workers finish in reverse order, each reply on its own line
                "summarise> Diagrams show the path.",
                "summarise> Messages merge by id.",
                "summarise> Checkpoints make runs resumable.",
                "  step 1  summarise  {ms}  +0 msg",
            ),
            Call(
                "flowgraph run examples/map_reduce.py --input "
                """'{"documents": {"a": "One. Two.", "b": "Three."}}' -q""",
                out="Digest of 2 topics: One. Three.\n",
            ),
        ),
        nodes=("summarise", "report"),
    ),
    "export_diagrams.py": Session(
        (
            Call("flowgraph draw examples/export_diagrams.py -o persona.svg", out=""),
            _run(
                'examples/export_diagrams.py "Please review: def f(n): return 10 / n"',
                "Lint says: E999 division by zero possible.",
            ),
            _run(
                'examples/export_diagrams.py:react_agent "Weather in Paris?"',
                "It is sunny in Paris.",
            ),
        ),
        nodes=("triage", "persona", "agent", "tools"),
    ),
    "traced_run.py": Session(
        (
            _run(
                'examples/traced_run.py "Weather in Paris and in Atlantis?"',
                "Found: sunny, 24°C. Unknown cities: 1.",
                "  step 2  tools  {ms}  +2 msg  get_weather: success  get_weather: error",
                # the trace, printed to stderr when the run's span ends
                "invoke_agent weather_agent  thread=",
                "  tools  step 2  (",
                "    execute_tool get_weather  call_1_1  ERROR LookupError: no weather station",
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "mcp_tools.py": Session(
        (
            _run(
                'examples/mcp_tools.py "Weather in Paris and in Atlantis? Show me a map of Paris."',
                "Paris: sunny, 24°C (map attached). There is no weather station in Atlantis.",
                "  step 2  tools  {ms}  +4 msg  get_forecast: success  get_forecast: error  "
                "weather_map: success  station_report: success",
            ),
        ),
        nodes=("agent", "tools"),
    ),
    "functional_workflow.py": Session(
        (
            Call(
                'flowgraph run examples/functional_workflow.py "Streaming in flowgraph" '
                "--thread blog",
                code=3,
                out="",
                err=(
                    "research> Pitfalls of streaming in flowgraph.",
                    "  step 1  write_post  paused  +0 msg",
                    "Thread blog is waiting for input. Resume it with:",
                    "  flowgraph resume blog --value JSON",
                ),
            ),
            Call(
                """flowgraph resume blog --value '"approve"'""",
                out="Published post #1: History of streaming in flowgraph. Practice of "
                "streaming in flowgraph. Pitfalls of streaming in flowgraph.\n",
                err=("  step 1  write_post  {ms}  +0 msg",),
                not_err=("research", "draft"),  # their results were kept: not run again
            ),
        ),
        nodes=("write_post",),
        model=False,
    ),
    "celery_workers.py": Session(
        (_run('examples/celery_workers.py "CI is flaky."', "Noted: CI is flaky."),),
        nodes=("reply",),
        model=False,
    ),
}
_FIELDS = {"{ms}": r"\d+\.\d ms", "{tokens}": r"\d+ tokens"}


def flowgraph(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `[VAR=value ...] flowgraph ARGS` with the installed script, on this checkout."""
    words = shlex.split(command)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "flowgraph", command
    script = Path(sysconfig.get_path("scripts")) / "flowgraph"
    assert script.exists(), "pip install -e . installs the `flowgraph` script"
    return subprocess.run(
        [str(script), *words[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",  # nothing written next to the examples
            "HOME": str(cwd),
            "PYTHONPATH": str(ROOT),  # this checkout, whatever `pip install -e` pointed at
            **env,
        },
        cwd=cwd,
    )


def scratch(tmp_path: Path) -> Path:
    """A working directory where `examples/NAME.py` means this checkout's example."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def _line(pattern: str) -> re.Pattern[str]:
    regex = re.escape(pattern)
    for field, value in _FIELDS.items():
        regex = regex.replace(re.escape(field), value)
    return re.compile(f"^{regex}", re.MULTILINE)


def via_run(example: Path, session: Session, tmp_path: Path) -> None:
    """The session's commands, in order, on one store: each prints what it should."""
    cwd = scratch(tmp_path)
    for call in session.calls:
        done = flowgraph(call.command, cwd)
        shown = f"$ {call.command}\nstatus {done.returncode}\n{done.stdout}{done.stderr}"
        assert done.returncode == call.code, shown
        if call.out is not None:
            assert done.stdout == call.out, shown
        for line in call.err:
            assert _line(line).search(done.stderr), f"no line {line!r} in:\n{shown}"
        for text in call.not_err:
            assert text not in done.stderr, f"{text!r} should not be in:\n{shown}"


def via_draw(example: Path, session: Session, tmp_path: Path) -> None:
    """`flowgraph draw examples/NAME.py -o x.svg`: an SVG naming every node; nothing else."""
    cwd = scratch(tmp_path)
    done = flowgraph(f"flowgraph draw examples/{example.name} -o x.svg", cwd)

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "Wrote x.svg\n")
    svg = ElementTree.parse(cwd / "x.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    labels = {"".join(e.itertext()) for e in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"START", "END", *session.nodes} <= labels, labels
    # importing the example ran nothing: no store, no output files, no servers
    assert sorted(p.name for p in cwd.iterdir()) == ["examples", "x.svg"]


def _served_input(args: list[str]) -> tuple[str, Any]:
    """The app and the run input of `flowgraph run APP [PROMPT] [--input JSON] [options]`."""
    app, rest = args[0], args[1:]
    given: Any = None
    while rest:
        word = rest.pop(0)
        if word == "--input":
            given = json.loads(rest.pop(0))
        elif word in ("--thread", "--db"):
            rest.pop(0)
        elif not word.startswith("-") and given is None:
            given = {"messages": [{"role": "user", "content": word}]}
    return app, given


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def via_serve(example: Path, session: Session, tmp_path: Path) -> None:
    """`flowgraph serve examples/NAME.py`: LangGraph's own client sends the session's first
    input over HTTP and gets the answer `flowgraph run` printed (or the same pause)."""
    from langgraph_sdk import get_sync_client
    from models._loopback import free_port

    cwd = scratch(tmp_path)
    first = next(c for c in session.calls if " run " in c.command)
    words = shlex.split(first.command)
    env: dict[str, str] = {}
    while "=" in words[0]:  # e.g. the crash example's switch: the served run goes through
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    app, given = _served_input(words[2:])
    graph_id = app.split(":", 1)[1] if ":" in app else Path(app).stem
    port = free_port()
    script = Path(sysconfig.get_path("scripts")) / "flowgraph"
    log = (cwd / "server.log").open("wb")
    server = subprocess.Popen(
        [str(script), "--db", "serve.db", "serve", app, "--port", str(port)],
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(cwd),
            "PYTHONPATH": str(ROOT),
        },
    )
    client = get_sync_client(url=f"http://127.0.0.1:{port}", timeout=(5, 60, 60, 5))
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (cwd / "server.log").read_text()
            try:
                if client.http.get("/ok") is not None:
                    break
            except Exception:
                assert time.monotonic() < deadline, (cwd / "server.log").read_text()
                time.sleep(0.1)
        assert graph_id in [a["graph_id"] for a in client.assistants.search()]
        schema = client.assistants.get_schemas(graph_id)["input_schema"] or {}
        if "messages" not in schema.get("properties", {}) and given and "messages" in given:
            given = given["messages"][0]["content"]  # an entrypoint takes the prompt itself
        thread = client.threads.create()
        values = client.runs.wait(thread["thread_id"], graph_id, input=given)
        status = client.threads.get(thread["thread_id"])["status"]
        shown = f"{first.command}\n{values}\n{(cwd / 'server.log').read_text()}"
        if first.code == 3:  # the CLI paused at an interrupt: so does the served run
            assert status == "interrupted", shown
            assert values["__interrupt__"], shown
            return
        assert status == "idle", shown
        if first.out is not None and not env:
            ai = [m for m in values.get("messages", []) if m.get("type") == "ai"]
            answer = _text(ai[-1]["content"]) if isinstance(values, dict) and ai else values
            assert answer == first.out.rstrip("\n"), shown
        if example.name == "remember_preferences.py":  # the served app's store is --db's
            with open_store(cwd / "serve.db") as store:
                saved = store.search(("users", "ada", "preferences"))
            assert sorted(item.key for item in saved) == ["diet", "seat"], shown
    finally:
        client.close()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


SURFACES = [
    pytest.param(via_run, id="run"),
    pytest.param(via_draw, id="draw"),
    pytest.param(via_serve, id="serve"),
]
"""How a user drives an app: the shell (`run`, `draw`) and HTTP (`serve`)."""


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_an_app(
    example: Path, surface: Callable[[Path, Session, Path], None], tmp_path: Path
) -> None:
    session = SESSIONS.get(example.name)
    assert session is not None, (
        f"add to SESSIONS the `flowgraph` commands that run {example.name} (and to the "
        "example table of docs/examples.md): every example is an app the CLI runs"
    )
    surface(example, session, tmp_path)


def _documented_commands() -> dict[str, list[str]]:
    """The example table's CLI column: example file -> the commands shown for it."""
    section = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    rows = {}
    for row in re.findall(r"^\| \[`(\w+\.py)`\]\(\.\./examples/\1\) \|.*\|(.*)\|$", section, re.M):
        name, cell = row
        rows[name] = re.findall(r"`([^`]*flowgraph [^`]+)`", cell)
    return rows


def test_the_docs_show_each_example_s_commands_and_they_are_the_tested_ones() -> None:
    shown = _documented_commands()

    assert set(shown) == {p.name for p in EXAMPLES}
    for name, commands in shown.items():
        tested = [shlex.split(c.command) for c in SESSIONS[name].calls]
        assert commands, f"docs/examples.md shows no command for {name}"
        assert shlex.split(commands[0]) == tested[0], name
        for command in commands:
            assert shlex.split(command) in tested, f"{name}: {command} is not tested"


@pytest.mark.skipif(
    not LLAMA_URL,
    reason="FLOWGRAPH_TEST_OPENAI_URL is not set; start ../shared/tools/llama-server/start.sh "
    "PORT and export FLOWGRAPH_TEST_OPENAI_URL=http://127.0.0.1:PORT/v1",
)
@pytest.mark.parametrize(
    "example", [p for p in EXAMPLES if SESSIONS.get(p.name, Session((), ())).model], ids=str
)
def test_flowgraph_run_on_each_example_against_llama_server(example: Path, tmp_path: Path) -> None:
    cwd = scratch(tmp_path)
    first = next(c.command for c in SESSIONS[example.name].calls if " run " in c.command)
    words = shlex.split(first)
    if "--thread" in words:
        del words[words.index("--thread") : words.index("--thread") + 2]
    command = shlex.join([w for w in words if w != "-q"] + ["--thread", "real"])

    done = flowgraph(
        command, cwd, FLOWGRAPH_MODEL="openai:tiny", FLOWGRAPH_BASE_URL=LLAMA_URL or ""
    )

    # the tiny model answers without asking for tools: nothing pauses, nothing crashes
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from a tiny scripted model.\n"
    exported = flowgraph("flowgraph export real --format openai", cwd).stdout.splitlines()
    reply = json.loads(exported[-1])
    # an agent made with create_react_agent(name=...) names its replies (traced_run.py's)
    named = "weather_agent" if example.name == "traced_run.py" else None
    assert reply.pop("name", None) == named
    assert reply == {"role": "assistant", "content": "Hello from a tiny scripted model."}


def test_the_docs_loader_error_is_the_one_the_cli_prints(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    command, error = re.findall(r"^\$ (flowgraph draw \S+:persona .*)\n(.*)$", page, re.M)[0]

    done = flowgraph(command, scratch(tmp_path))

    assert done.returncode == 1
    assert done.stderr == error + "\n"
