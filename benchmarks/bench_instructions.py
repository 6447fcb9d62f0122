"""CPU instructions per superstep, counted by valgrind: the figures that do not move with load.

On a shared machine wall-clock figures move by tens of percent between
runs; the instructions a superstep executes move by ~1-2%. `react_instructions`
counts them with `valgrind --tool=callgrind` for three programs of the same
20-turn conversation (`benchmarks/_count.py`): the floor (`react_floor`'s
loop, no engine), the hand-written graph under `invoke` (`react_loop`) and
the prebuilt one (`prebuilt_react`, sync @tool). Each is run with 1 and with
3 conversations and the difference is divided by the 200 supersteps, so
interpreter start-up, imports and warm-up cancel out.

In row 1 the *langgraph* column holds the floor, so the ratio is floor /
engine: the issue asks that the engine's own share of a hand-written
superstep (what it adds above the floor) stay under 30%, ratio 0.7 or more.
Without valgrind (`apt-get install valgrind`) the scenario reports nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks._harness import Figure, scenario

STEPS_PER_CONVERSATION = 100
SHARE_TARGET = 0.7
"""floor / engine: the engine's own share of a superstep (1 - ratio) under 30%."""


def _instructions(variant: str, conversations: int) -> int:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-m",
            "benchmarks._count",
            variant,
            str(conversations),
        ],
        cwd=root,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise AssertionError(f"valgrind printed no count: {out.stderr[-500:]}")
    return int(found.group(1))


def per_superstep(variant: str) -> float:
    """Instructions of one superstep of `variant` (thousands)."""
    extra = _instructions(variant, 3) - _instructions(variant, 1)
    return extra / (2 * STEPS_PER_CONVERSATION) / 1000


@scenario("react_instructions")
def react_instructions() -> list[Figure]:
    if shutil.which("valgrind") is None:
        return []
    floor, engine, prebuilt = (per_superstep(v) for v in ("floor", "engine", "prebuilt"))
    return [
        Figure(
            "hand-written superstep vs the floor*",
            "k instr",
            engine,
            floor,
            target=SHARE_TARGET,
        ),
        Figure("prebuilt superstep (ToolNode, sync tool)", "k instr", prebuilt),
    ]
