"""The subprocess of the cold-resume scenarios: import, open, get_state, one more turn.

python -m benchmarks._cold_resume ours|theirs PATH [chat|agent]

`chat` (the default) resumes `cold_resume`'s 150-turn chat thread (a one-node
graph); `agent` resumes `prebuilt_cold_resume`'s 600-message thread of each
library's `create_react_agent`. It prints one line of JSON.

The clock starts before the library is imported; interpreter start-up and the
graph builders' modules (`benchmarks.bench_checkpoint`, `benchmarks.bench_prebuilt`,
which import neither library at module level) are not counted: they are the
same on both sides.
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks import bench_checkpoint as bench
from benchmarks import bench_prebuilt as prebuilt
from benchmarks._prebuilt import ours_agent, theirs_agent

START = time.perf_counter()


def _ours(path: str, kind: str) -> tuple[float, float, int, int]:
    import flowgraph  # noqa: F401
    from flowgraph.checkpoint import SQLiteCheckpointer

    imported = time.perf_counter()
    if kind == "agent":
        app = ours_agent(tool_async=False, checkpointer=SQLiteCheckpointer(path), rounds=1)
        messages = len(app.get_state(prebuilt.AGENT_THREAD_ID).values.messages)
        got = time.perf_counter()
        after = len(prebuilt.agent_turn(app, "ours", prebuilt.AGENT_TURNS))
    else:
        app = bench.ours_chat_graph(SQLiteCheckpointer(path))
        messages = len(app.get_state(bench.LONG_THREAD_ID).values.messages)
        got = time.perf_counter()
        after = len(bench.ours_turn(app, bench.LONG_TURNS))
    return imported, got, messages, after


def _theirs(path: str, kind: str) -> tuple[float, float, int, int]:
    import sqlite3

    if kind == "agent":
        import langgraph.prebuilt
    import langgraph.graph  # noqa: F401
    from langgraph.checkpoint.sqlite import SqliteSaver

    imported = time.perf_counter()
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    if kind == "agent":
        app = theirs_agent(tool_async=False, checkpointer=saver, rounds=1)
        config = {"configurable": {"thread_id": prebuilt.AGENT_THREAD_ID}}
        messages = len(app.get_state(config).values["messages"])
        got = time.perf_counter()
        after = len(prebuilt.agent_turn(app, "theirs", prebuilt.AGENT_TURNS))
    else:
        app = bench.theirs_chat_graph(saver)
        config = {"configurable": {"thread_id": bench.LONG_THREAD_ID}}
        messages = len(app.get_state(config).values["messages"])
        got = time.perf_counter()
        after = len(bench.theirs_turn(app, bench.LONG_TURNS))
    return imported, got, messages, after


def main(library: str, path: str, kind: str = "chat") -> None:
    imported, got, messages, after = (_ours if library == "ours" else _theirs)(path, kind)
    done = time.perf_counter()
    report = {
        "import": imported - START,
        "get_state": got - START,
        "turn": done - START,
        "messages": messages,
        "after_turn": after,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
