"""Every example runs offline, as the README promises, and says what it should.

Each example runs in a fresh process with a clean environment (no
FLOWGRAPH_MODEL: the scripted model) and this checkout on its path. With
FLOWGRAPH_TEST_OPENAI_URL set, some also run against llama.cpp's server; its
tiny model always says the same sentence, so those checks are on structure
(the run finished, the replies came from the server), not on wording.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from flowgraph import AIMessage, ScriptedChatModel, create_react_agent
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

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
        "tool  < get_weather [success]: sunny, 24°C",
        "tool  < get_weather [error]: Error: tool `get_weather` raised LookupError: "
        "no weather station in Atlantis",
        "tool  < convert [success]: 75.2°F",
        "agent > Paris is sunny at 24°C (75.2°F). I could not find any weather for Atlantis.",
        "  step 3: ran agent      next (done)  messages: 6",
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
    ],
    "resume_after_crash.py": [
        "  [child] model call 2, inside the agent node: SIGKILL now",
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
        "report: Release digest: 3 topics covered.",
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
        "thread idle, 4 messages, 5 checkpoints",
        "runs: ['success', 'success']",
    ],
    "remember_preferences.py": [
        "  remember -> saved diet",
        "  recall -> diet: vegetarian; seat: window seat",
        "[friday] agent > Booked Lisbon on Friday: window seat, vegetarian meal.",
        "'friday' holds 4 messages, none of 'monday'; the store in example.db:",
        "  ('users', 'ada', 'preferences') 'seat': {'topic': 'seat', 'preference': 'window seat'}",
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
