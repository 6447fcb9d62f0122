"""The subprocess of `cold_resume`: import, open, get_state, one more turn; JSON on stdout.

python -m benchmarks._cold_resume ours|theirs PATH

The clock starts before the library is imported; interpreter start-up and the
graph builders' module (`benchmarks.bench_checkpoint`, which imports neither
library at module level) are not counted: they are the same on both sides.
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks import bench_checkpoint as bench

START = time.perf_counter()


def main(library: str, path: str) -> None:
    if library == "ours":
        import flowgraph  # noqa: F401
        from flowgraph.checkpoint import SQLiteCheckpointer

        imported = time.perf_counter()
        app = bench.ours_chat_graph(SQLiteCheckpointer(path))
        messages = len(app.get_state(bench.LONG_THREAD_ID).values.messages)
        got = time.perf_counter()
        after = len(bench.ours_turn(app, bench.LONG_TURNS))
    else:
        import sqlite3

        import langgraph.graph  # noqa: F401
        from langgraph.checkpoint.sqlite import SqliteSaver

        imported = time.perf_counter()
        saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
        app = bench.theirs_chat_graph(saver)
        config = {"configurable": {"thread_id": bench.LONG_THREAD_ID}}
        messages = len(app.get_state(config).values["messages"])
        got = time.perf_counter()
        after = len(bench.theirs_turn(app, bench.LONG_TURNS))
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
    main(sys.argv[1], sys.argv[2])
