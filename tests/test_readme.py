"""Every Python snippet in README.md runs, as a newcomer would paste it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


def test_the_readme_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert commands[0].strip() == "pip install -e . && python examples/quickstart.py"
    assert commands[1].strip() == "pip install -e '.[test]' && python -m pytest -n auto"
    assert text.index(commands[1]) < text.index("## What works today")


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index: int, tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = compile(SNIPPETS[index], f"README.md snippet {index + 1}", "exec", dont_inherit=True)
        exec(code, {"__name__": f"readme_snippet_{index + 1}"})
    finally:
        os.chdir(cwd)
