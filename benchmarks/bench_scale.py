"""Many workers on one PostgreSQL: steps per second with 1, 2 and 4 processes, bytes per step.

`scale_workers`: N worker processes (N = 1, 2, 4), each running its own
THREADS threads of TURNS user turns against one PostgreSQL database, every
turn STEPS supersteps of a node that appends a ~300-character AI message
(a checkpoint after every step). Each process imports, opens its pool and
runs one warm-up turn before a common start signal; the figure is all
processes' supersteps divided by the wall time from the start signal to
the last one done (weak scaling: more processes, more work). The ratio
columns compare to LangGraph's PostgresSaver (langgraph-checkpoint-postgres)
on the same graph and workload, when it is installed. Bytes per step: the
on-disk size of the rows the 1-process run left (`pg_column_size` of every
row of its threads, all tables of each library), divided by its supersteps.

The database server runs on the same machine as the workers, so on a small
machine the curve flattens where the cores run out, for both libraries.

python -m benchmarks scale      # needs FLOWGRAPH_BENCH_POSTGRES_URL or FLOWGRAPH_TEST_POSTGRES_URL
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import uuid
from typing import Any

from benchmarks._harness import Figure, scenario

URL_ENVS = ("FLOWGRAPH_BENCH_POSTGRES_URL", "FLOWGRAPH_TEST_POSTGRES_URL")
PROCESSES = (1, 2, 4)
THREADS = 16
"""Threads per worker process."""
TURNS = 3
STEPS = 4
"""Supersteps per turn."""
REPLY = "This is a reply of about three hundred characters. " * 6


def postgres_url() -> str | None:
    for env in URL_ENVS:
        if os.environ.get(env):
            return os.environ[env]
    return None


def has_postgres_saver() -> bool:
    return importlib.util.find_spec("langgraph.checkpoint.postgres") is not None


# -- the graph, once per library ----------------------------------------------------


def _steps_this_turn(messages: Any, kind_of: Any) -> int:
    count = 0
    for message in reversed(messages):
        if kind_of(message) == "human":
            break
        count += 1
    return count


def ours_app(url: str) -> Any:
    from flowgraph import END, START, AIMessage, MessagesState, StateGraph
    from flowgraph.checkpoint.postgres import PostgresCheckpointer

    def work(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{len(state.messages)}: {REPLY}")]}

    def route(state: Any) -> str:
        done = _steps_this_turn(state.messages, lambda m: m.type)
        return "work" if done < STEPS else END

    graph = StateGraph(MessagesState)
    graph.add_node("work", work)
    graph.add_edge(START, "work")
    graph.add_conditional_edges("work", route, ["work", END])
    return graph.compile(checkpointer=PostgresCheckpointer(url))


def ours_turn(app: Any, thread: str, turn: int) -> None:
    from flowgraph import HumanMessage

    app.invoke({"messages": [HumanMessage(f"question {turn}")]}, thread_id=thread)


def theirs_app(url: str) -> tuple[Any, Any]:
    """LangGraph's graph on PostgresSaver, and the context that keeps its connection open."""
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    def work(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{len(state['messages'])}: {REPLY}")]}

    def route(state: Any) -> str:
        done = _steps_this_turn(state["messages"], lambda m: m.type)
        return "work" if done < STEPS else END

    context = PostgresSaver.from_conn_string(url)
    saver = context.__enter__()
    graph = StateGraph(MessagesState)
    graph.add_node("work", work)
    graph.add_edge(START, "work")
    graph.add_conditional_edges("work", route, ["work", END])
    return graph.compile(checkpointer=saver), context


def theirs_turn(app: Any, thread: str, turn: int) -> None:
    from langchain_core.messages import HumanMessage

    config = {"configurable": {"thread_id": thread}}
    app.invoke({"messages": [HumanMessage(f"question {turn}")]}, config)


# -- one worker process ---------------------------------------------------------------


def worker(library: str, url: str, prefix: str) -> None:
    """Warm up, say READY, wait for GO on stdin, run the threads, print a JSON report."""
    context = None
    if library == "ours":
        app, turn = ours_app(url), ours_turn
    else:
        (app, context), turn = theirs_app(url), theirs_turn
    turn(app, f"{prefix}warmup", 0)
    print("READY", flush=True)
    sys.stdin.readline()
    start = time.time()
    for t in range(THREADS):
        for k in range(TURNS):
            turn(app, f"{prefix}{t}", k)
    end = time.time()
    print(json.dumps({"start": start, "end": end, "steps": THREADS * TURNS * STEPS}), flush=True)
    if context is not None:
        context.__exit__(None, None, None)


def _run(library: str, url: str, processes: int, prefix: str) -> float:
    """Supersteps per second of `processes` workers started together."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_scale", library, url, f"{prefix}p{i}-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    reports = []
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if line.strip() != "READY":
                raise RuntimeError(f"a {library} worker failed to start (exit {proc.wait()})")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("GO\n")
            proc.stdin.flush()
        for proc in procs:
            out, _ = proc.communicate(timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"a {library} worker failed (exit {proc.returncode})")
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return sum(r["steps"] for r in reports) / wall


# -- storage ----------------------------------------------------------------------------

_OURS_TABLES = (
    "flowgraph_threads",
    "flowgraph_checkpoints",
    "flowgraph_messages",
    "flowgraph_pending",
)
_THEIRS_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _stored_bytes(url: str, tables: tuple[str, ...], prefix: str) -> int:
    import psycopg

    total = 0
    with psycopg.connect(url, autocommit=True) as conn:
        for table in tables:
            row = conn.execute(
                f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t "
                "WHERE thread_id LIKE %s AND thread_id NOT LIKE %s",
                (prefix + "%", prefix + "%warmup"),
            ).fetchone()
            total += int(row[0]) if row else 0
    return total


def _cleanup(url: str, prefix: str, tables: tuple[str, ...]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for table in tables:
            conn.execute(f"DELETE FROM {table} WHERE thread_id LIKE %s", (prefix + "%",))


@scenario("scale_workers")
def scale_workers() -> list[Figure]:
    url = postgres_url()
    if url is None:
        print(f"scale_workers skipped: set {' or '.join(URL_ENVS)} to a PostgreSQL URL")
        return []
    theirs = has_postgres_saver()
    if not theirs:
        print(
            "scale_workers: LangGraph's PostgresSaver is not installed "
            "(pip install langgraph-checkpoint-postgres); flowgraph figures only"
        )
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
    figures = []
    bytes_per_step: dict[str, float] = {}
    rates: dict[tuple[str, int], float] = {}
    libraries = ["ours", "theirs"] if theirs else ["ours"]
    for library in libraries:
        tables = _OURS_TABLES if library == "ours" else _THEIRS_TABLES
        for processes in PROCESSES:
            prefix = f"bench-scale-{uuid.uuid4().hex[:8]}-"
            try:
                rates[library, processes] = _run(library, url, processes, prefix)
                if processes == 1:
                    steps = THREADS * TURNS * STEPS
                    bytes_per_step[library] = _stored_bytes(url, tables, prefix) / steps
            finally:
                _cleanup(url, prefix, tables)
    for processes in PROCESSES:
        figures.append(
            Figure(
                f"steps/s, {processes} process{'es' if processes > 1 else ''}",
                "steps/s",
                rates["ours", processes],
                rates.get(("theirs", processes)),
                lower_is_better=False,
            )
        )
    figures.append(
        Figure(
            "speed-up, 4 processes vs 1",
            "x",
            rates["ours", 4] / rates["ours", 1],
            rates["theirs", 4] / rates["theirs", 1] if theirs else None,
            lower_is_better=False,
        )
    )
    figures.append(
        Figure(
            "bytes stored per step (rows on disk)",
            "B",
            bytes_per_step["ours"],
            bytes_per_step.get("theirs"),
        )
    )
    return figures


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2], sys.argv[3])
