"""Checkpointing: the cost of a checkpointed step, a long thread's storage, and a cold resume.

Three scenarios, each measured for flowgraph and, when it is installed, for
LangGraph on the same work in the same run:

- `checkpointed_step`: the ReAct loop of `benchmarks/_react.py` (10 user
  turns of 2 tool rounds, one thread per conversation, each turn's input is
  only the new user message) with `MemoryCheckpointer` vs `InMemorySaver`
  and `SQLiteCheckpointer` vs `SqliteSaver` (a temporary file each); µs per
  superstep (total time / 50 supersteps, the same divisor on both sides) and
  bytes stored per superstep (in memory: the stored byte strings; on SQLite:
  the growth of the database file after a `wal_checkpoint(TRUNCATE)`). Then
  one bare SQLite commit of the same bytes on the same machine (an INSERT of
  a blob of flowgraph's bytes per step into a WAL table, `synchronous=NORMAL`,
  then COMMIT): in that row the *langgraph* column holds the bare commit, and
  the ratio is bare / step, so the issue's "within 3x" reads as target 0.333x.
- `long_thread`: a 150-turn conversation on SQLite, one node, each turn a
  human message and an AI reply of ~300 characters; bytes per checkpoint over
  the first 20 and the last 20 turns (the growth of the summed lengths of
  every stored field, divided by the checkpoints written in those turns),
  the end/start ratio of each side, and the file size after a WAL checkpoint.
- `cold_resume`: in a fresh `sys.executable` subprocess (`_cold_resume.py`),
  import the library, open a copy of `long_thread`'s database, `get_state`
  the thread, then run one more turn; ms (the clock starts before the
  library's import; interpreter start-up is not counted on either side).
  Both libraries load from their bytecode caches, as installed packages do
  (see `cold_env`).

SqliteSaver is used as its docs show it, over `sqlite3.connect(path,
check_same_thread=False)`: Python's default `synchronous=FULL` in WAL mode,
where flowgraph defaults to `NORMAL` (`durable=True` gives FULL).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._harness import Figure, has_langgraph, median_seconds, scenario
from benchmarks._react import (
    ROUNDS,
    messages_per_turn,
    ours_graph,
    steps_per_turn,
    theirs_graph,
)
from benchmarks.bench_graph import _check_same_messages

STEP_TURNS = 10
"""User turns of the checkpointed ReAct conversation."""
STEPS = STEP_TURNS * steps_per_turn(ROUNDS)
LONG_TURNS = 150
WINDOW = 20
"""Turns at the start and at the end of the long thread whose checkpoints are measured."""
REPLY = "This is a reply of about three hundred characters. " * 6
QUESTION = "Could you please explain the next point of the plan in some detail? "
LONG_THREAD_ID = "long-thread"
DATA_DIR = Path(tempfile.gettempdir()) / "flowgraph-bench-checkpoint"
COLD_RUNS = 3

STEP_TARGET = 20
BARE_COMMIT_TARGET = 1 / 3
"""flowgraph's step within 3x of a bare commit: bare / step >= 1/3."""
SIZE_TARGET = 50
RESUME_TARGET = 5

_ids = itertools.count()


# -- shared -----------------------------------------------------------------------


def _fresh_thread() -> str:
    return f"thread-{next(_ids)}"


def _size_after_wal_checkpoint(path: Path) -> int:
    """The database file's size once the WAL is folded in and truncated (every writer closed)."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _stored_bytes(obj: Any) -> int:
    """The lengths of every byte string held in `obj`, through dicts, tuples and lists."""
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, dict):
        return sum(_stored_bytes(v) for v in obj.values())
    if isinstance(obj, (tuple, list)):
        return sum(_stored_bytes(v) for v in obj)
    return 0


def _logical_bytes(path: Path) -> tuple[int, int]:
    """(the summed length of every field of every row, the rows of `checkpoints`)."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total = 0
        for table in tables:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            lengths = " + ".join(f"COALESCE(LENGTH({c}), 0)" for c in columns)
            total += db.execute(f"SELECT COALESCE(SUM({lengths}), 0) FROM {table}").fetchone()[0]
        count = db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    return total, count


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@contextmanager
def _theirs_sqlite(path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


# -- checkpointed_step -------------------------------------------------------------


def _ours_conversation(app: Any) -> Callable[[], list[Any]]:
    from flowgraph import HumanMessage

    def run() -> list[Any]:
        thread_id = _fresh_thread()
        for turn in range(STEP_TURNS):
            state = app.invoke(
                {"messages": [HumanMessage(f"question {turn}")]}, thread_id=thread_id
            )
        return state.messages  # type: ignore[no-any-return]

    return run


def _theirs_conversation(app: Any) -> Callable[[], list[Any]]:
    from langchain_core.messages import HumanMessage

    def run() -> list[Any]:
        config = {"configurable": {"thread_id": _fresh_thread()}}
        for turn in range(STEP_TURNS):
            state = app.invoke({"messages": [HumanMessage(f"question {turn}")]}, config)
        return state["messages"]  # type: ignore[no-any-return]

    return run


def _paired(
    ours: Callable[[], object], theirs: Callable[[], object] | None, *, repeat: int, blocks: int
) -> tuple[float, float | None]:
    """Each side's best block median, the sides' blocks alternating."""
    best_ours = best_theirs = math.inf
    for _ in range(blocks):
        best_ours = min(best_ours, median_seconds(ours, repeat=repeat, warmup=1))
        if theirs is not None:
            best_theirs = min(best_theirs, median_seconds(theirs, repeat=repeat, warmup=1))
    return best_ours, (best_theirs if theirs is not None else None)


def _check(ours: list[Any], theirs: list[Any] | None) -> None:
    expected = STEP_TURNS * messages_per_turn(ROUNDS)
    if theirs is None:
        if len(ours) != expected:
            raise AssertionError(f"the ReAct loop should leave {expected} messages")
    else:
        _check_same_messages(ours, theirs, expected)


def _bare_commit_seconds(size: int, directory: Path) -> float:
    """One INSERT of a `size`-byte blob into a WAL table and its COMMIT, synchronous=NORMAL."""
    path = directory / "bare.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    blob = os.urandom(size)

    def commit() -> None:
        db.execute("BEGIN")
        db.execute("INSERT INTO blobs (data) VALUES (?)", (blob,))
        db.execute("COMMIT")

    try:
        return median_seconds(commit, repeat=300, warmup=20)
    finally:
        db.close()


@scenario("checkpointed_step")
def checkpointed_step() -> list[Figure]:
    from flowgraph.checkpoint import MemoryCheckpointer, SQLiteCheckpointer

    figures = []
    lg = has_langgraph()

    # in memory
    ours_saver = MemoryCheckpointer()
    ours = _ours_conversation(ours_graph().builder.compile(checkpointer=ours_saver))
    theirs = theirs_saver = None
    ours_msgs = ours()
    ours_bytes = _stored_bytes(
        {
            k: ([r.payload for r in t.records.values()], t.messages)
            for k, t in ours_saver._threads.items()
        }
    )
    theirs_bytes = None
    if lg:
        from langgraph.checkpoint.memory import InMemorySaver

        theirs_saver = InMemorySaver()
        theirs = _theirs_conversation(theirs_graph().builder.compile(checkpointer=theirs_saver))
        theirs_msgs = theirs()
        theirs_bytes = _stored_bytes(
            [dict(theirs_saver.storage), dict(theirs_saver.writes), dict(theirs_saver.blobs)]
        )
        _check(ours_msgs, theirs_msgs)
    else:
        _check(ours_msgs, None)
    ours_s, theirs_s = _paired(ours, theirs, repeat=5, blocks=2)
    figures.append(Figure("memory: per step", "µs", ours_s / STEPS * 1e6, _per_step_us(theirs_s)))
    figures.append(
        Figure(
            "memory: bytes per step",
            "B",
            ours_bytes / STEPS,
            theirs_bytes / STEPS if theirs_bytes is not None else None,
        )
    )

    # on SQLite
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        ours_path, theirs_path = directory / "ours.sqlite", directory / "theirs.sqlite"
        ours_store = SQLiteCheckpointer(ours_path)
        contexts = []
        try:
            ours_store.close()
            empty = _size_after_wal_checkpoint(ours_path)
            ours_store = SQLiteCheckpointer(ours_path)
            ours = _ours_conversation(ours_graph().builder.compile(checkpointer=ours_store))
            ours_msgs = ours()
            ours_store.close()
            ours_bytes = _size_after_wal_checkpoint(ours_path) - empty
            theirs = None
            theirs_bytes = None
            if lg:
                with _theirs_sqlite(theirs_path) as saver:
                    saver.setup()
                theirs_empty = _size_after_wal_checkpoint(theirs_path)
                with _theirs_sqlite(theirs_path) as saver:
                    app = theirs_graph().builder.compile(checkpointer=saver)
                    theirs_msgs = _theirs_conversation(app)()
                theirs_bytes = _size_after_wal_checkpoint(theirs_path) - theirs_empty
                _check(ours_msgs, theirs_msgs)
                context = _theirs_sqlite(theirs_path)
                contexts.append(context)
                app = theirs_graph().builder.compile(checkpointer=context.__enter__())
                theirs = _theirs_conversation(app)
            else:
                _check(ours_msgs, None)
            ours_store = SQLiteCheckpointer(ours_path)
            ours = _ours_conversation(ours_graph().builder.compile(checkpointer=ours_store))
            ours_s, theirs_s = _paired(ours, theirs, repeat=5, blocks=2)
        finally:
            ours_store.close()
            for context in contexts:
                context.__exit__(None, None, None)
        step_bytes = ours_bytes / STEPS
        bare_s = _bare_commit_seconds(round(step_bytes), directory)
    figures.append(
        Figure(
            "sqlite: per step",
            "µs",
            ours_s / STEPS * 1e6,
            _per_step_us(theirs_s),
            target=STEP_TARGET,
        )
    )
    figures.append(
        Figure(
            "sqlite: bytes per step (file growth)",
            "B",
            step_bytes,
            theirs_bytes / STEPS if theirs_bytes is not None else None,
        )
    )
    figures.append(
        Figure(
            f"sqlite step vs bare commit of {round(step_bytes)} B*",
            "µs",
            ours_s / STEPS * 1e6,
            bare_s * 1e6,
            target=BARE_COMMIT_TARGET,
        )
    )
    return figures


def _per_step_us(seconds: float | None) -> float | None:
    return seconds / STEPS * 1e6 if seconds is not None else None


# -- long_thread -------------------------------------------------------------------


def ours_chat_graph(checkpointer: Any) -> Any:
    """One node answering every user message with a ~300-character reply, on flowgraph."""
    from flowgraph import END, START, AIMessage, MessagesState, StateGraph

    def reply(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{len(state.messages)}: {REPLY}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    graph.add_edge("reply", END)
    return graph.compile(checkpointer=checkpointer)


def theirs_chat_graph(checkpointer: Any) -> Any:
    """The same graph on LangGraph."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    def reply(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{len(state['messages'])}: {REPLY}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    graph.add_edge("reply", END)
    return graph.compile(checkpointer=checkpointer)


def ours_turn(app: Any, turn: int) -> list[Any]:
    from flowgraph import HumanMessage

    state = app.invoke(
        {"messages": [HumanMessage(f"{turn}: {QUESTION}")]}, thread_id=LONG_THREAD_ID
    )
    return state.messages  # type: ignore[no-any-return]


def theirs_turn(app: Any, turn: int) -> list[Any]:
    from langchain_core.messages import HumanMessage

    config = {"configurable": {"thread_id": LONG_THREAD_ID}}
    state = app.invoke({"messages": [HumanMessage(f"{turn}: {QUESTION}")]}, config)
    return state["messages"]  # type: ignore[no-any-return]


def _long_thread(path: Path, library: str) -> tuple[float, float, int, int]:
    """Write the 150-turn thread to a fresh `path`; (bytes per checkpoint at the start, at the
    end, the file's size, the messages the thread ends with)."""
    _remove_db(path)
    marks = {0, WINDOW, LONG_TURNS - WINDOW, LONG_TURNS}
    measured: dict[int, tuple[int, int]] = {}
    messages: list[Any] = []
    if library == "ours":
        from flowgraph.checkpoint import SQLiteCheckpointer

        store = SQLiteCheckpointer(path)
        try:
            app = ours_chat_graph(store)
            for turn in range(LONG_TURNS + 1):
                if turn in marks:
                    measured[turn] = _logical_bytes(path)
                if turn < LONG_TURNS:
                    messages = ours_turn(app, turn)
        finally:
            store.close()
    else:
        with _theirs_sqlite(path) as saver:
            saver.setup()
            app = theirs_chat_graph(saver)
            for turn in range(LONG_TURNS + 1):
                if turn in marks:
                    measured[turn] = _logical_bytes(path)
                if turn < LONG_TURNS:
                    messages = theirs_turn(app, turn)

    def per_checkpoint(first: int, last: int) -> float:
        (b0, c0), (b1, c1) = measured[first], measured[last]
        return (b1 - b0) / (c1 - c0)

    start = per_checkpoint(0, WINDOW)
    end = per_checkpoint(LONG_TURNS - WINDOW, LONG_TURNS)
    return start, end, _size_after_wal_checkpoint(path), len(messages)


def _db_path(library: str) -> Path:
    return DATA_DIR / f"long_thread_{library}.sqlite"


@scenario("long_thread")
def long_thread() -> list[Figure]:
    DATA_DIR.mkdir(exist_ok=True)
    expected = 2 * LONG_TURNS
    ours = _long_thread(_db_path("ours"), "ours")
    theirs = _long_thread(_db_path("theirs"), "theirs") if has_langgraph() else None
    for result in (ours, theirs):
        if result is not None and result[3] != expected:
            raise AssertionError(f"the long thread should hold {expected} messages: {result[3]}")
    return [
        Figure("bytes per checkpoint, first 20 turns", "B", ours[0], theirs and theirs[0]),
        Figure("bytes per checkpoint, last 20 turns", "B", ours[1], theirs and theirs[1]),
        Figure(
            "end / start per checkpoint (<=1.5)",
            "x",
            ours[1] / ours[0],
            theirs and theirs[1] / theirs[0],
        ),
        Figure(
            "database size after WAL checkpoint",
            "KB",
            ours[2] / 1024,
            theirs and theirs[2] / 1024,
            target=SIZE_TARGET,
        ),
    ]


# -- cold_resume -------------------------------------------------------------------


def cold_env() -> dict[str, str]:
    """The environment of a cold-start subprocess: this one's, with bytecode caching on.

    A user's installed package has its `.pyc` files, and so has LangGraph in
    site-packages; with PYTHONDONTWRITEBYTECODE set (as in some CI and
    sandbox shells) flowgraph's source tree would be compiled anew in every
    process, and the figure would time the compiler. The scenarios run one
    untimed process per library first, which writes the caches.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cold_process(library: str, source: Path, directory: Path, kind: str = "chat") -> dict[str, Any]:
    """One fresh interpreter resuming a copy of `source` (`_cold_resume.py`); its report."""
    copy = directory / f"{library}.sqlite"
    _remove_db(copy)
    shutil.copyfile(source, copy)
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks._cold_resume", library, str(copy), kind],
        cwd=root,
        env=cold_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    report: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return report


def cold_figures(
    sources: dict[str, Path],
    *,
    kind: str,
    messages: tuple[int, int],
    name: str,
    turn_target: float | None,
) -> list[Figure]:
    """Time fresh processes resuming a copy of each library's thread in `sources`.

    One untimed process per library first (it writes the bytecode caches),
    then COLD_RUNS rounds; each report must show `messages` (the thread's
    messages before and after one more turn). Medians in ms.
    """
    runs: dict[str, list[dict[str, Any]]] = {library: [] for library in sources}
    with tempfile.TemporaryDirectory() as tmp:
        for library, source in sources.items():
            cold_process(library, source, Path(tmp), kind)
        for _ in range(COLD_RUNS):
            for library, source in sources.items():
                runs[library].append(cold_process(library, source, Path(tmp), kind))
    for library, reports in runs.items():
        for report in reports:
            if (report["messages"], report["after_turn"]) != messages:
                raise AssertionError(f"{library} resumed the wrong thread: {report}")

    def median(library: str, key: str) -> float | None:
        if library not in runs:
            return None
        return statistics.median(r[key] for r in runs[library]) * 1e3

    return [
        Figure(
            name,
            "ms",
            median("ours", "get_state"),  # type: ignore[arg-type]
            median("theirs", "get_state"),
            target=RESUME_TARGET,
        ),
        Figure(
            "... + one more turn",
            "ms",
            median("ours", "turn"),  # type: ignore[arg-type]
            median("theirs", "turn"),
            target=turn_target,
        ),
        Figure(
            "of which import",
            "ms",
            median("ours", "import"),  # type: ignore[arg-type]
            median("theirs", "import"),
        ),
    ]


@scenario("cold_resume")
def cold_resume() -> list[Figure]:
    libraries = ["ours", "theirs"] if has_langgraph() else ["ours"]
    for library in libraries:
        if not _db_path(library).exists():
            DATA_DIR.mkdir(exist_ok=True)
            _long_thread(_db_path(library), library)
    return cold_figures(
        {library: _db_path(library) for library in libraries},
        kind="chat",
        messages=(2 * LONG_TURNS, 2 * LONG_TURNS + 2),
        name="import + open + get_state",
        turn_target=RESUME_TARGET,
    )
