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
