"""Every example runs offline, as the README promises, and says what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
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
}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_offline(example: Path, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(example), str(tmp_path / "example.db")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    for line in EXPECTED.get(example.name, []):
        assert line in done.stdout


def test_quickstart_has_expectations() -> None:
    assert "quickstart.py" in {p.name for p in EXAMPLES}
