"""The program `bench_instructions` runs under valgrind: N conversations of one ReAct variant.

python -m benchmarks._count floor|engine|prebuilt N

`floor`: `react_floor`'s loop (no engine); `engine`: `react_loop`'s sync graph
under `invoke`; `prebuilt`: `prebuilt_react`'s graph (ToolNode with a sync
@tool, tools_condition) under `invoke`. Every conversation is 20 turns of 2
tool rounds, 100 supersteps. The collector is off, as while the benchmarks
time; the caller subtracts two runs' counts, so start-up and the first
conversation's warm-up fall out.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

from benchmarks._prebuilt import ours_react_graph
from benchmarks._react import ours_graph, ours_turn_input
from benchmarks.bench_graph import TURNS, _floor


def _conversation(app: Any) -> Callable[[], list[Any]]:
    def run() -> list[Any]:
        messages: list[Any] = []
        for turn in range(TURNS):
            messages = app.invoke(ours_turn_input(messages, turn)).messages
        return messages

    return run


def main(variant: str, conversations: int) -> None:
    if variant == "floor":
        run = _floor()
    elif variant == "engine":
        run = _conversation(ours_graph())
    else:
        run = _conversation(ours_react_graph(tool_async=False))
    gc.disable()
    for _ in range(conversations):
        run()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
