"""The graph every scale test runs, and the checks a finished thread must pass.

One node, `work`, loops STEPS times; each step adds one AI message, bumps
`count` and appends to `log`, whose reducer is `operator.add`: a step whose
writes were applied twice would show a repeated log entry, and a lost one a
gap, so the final state tells at once whether delivery was exact.

Markers (in the directory $FLOWGRAPH_SCALE_MARKERS, when set) let a test
watch and kill a worker inside a node: every entry into `work` appends
"<step> <pid>" to `<tag>.entries`; at step `block_at`, the first process to
get there creates `<tag>.blocked` holding its pid and waits until it is
killed, or released by a `<tag>.release` file.
"""

from __future__ import annotations

import itertools
import operator
import os
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from flowgraph import END, START, AIMessage, MessagesState, StateGraph

STEPS = 4
MARKERS_ENV = "FLOWGRAPH_SCALE_MARKERS"
BLOCK_SECONDS = 120.0
"""How long a blocked node waits to be killed or released before it fails the run."""


class State(MessagesState):
    tag: str = ""
    """Names the thread's marker files."""
    block_at: int = 0
    """The step whose first attempt blocks until the process is killed (0: none)."""
    count: int = 0
    log: Annotated[list[str], operator.add] = Field(default_factory=list)


def _markers() -> Path | None:
    where = os.environ.get(MARKERS_ENV)
    return Path(where) if where else None


def _enter(state: State, step: int) -> None:
    markers = _markers()
    if markers is None or not state.tag:
        return
    with open(markers / f"{state.tag}.entries", "a") as entries:
        entries.write(f"{step} {os.getpid()}\n")
    if step != state.block_at:
        return
    try:
        fd = os.open(markers / f"{state.tag}.blocked", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # a later attempt: the first one was killed, this one goes through
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    release = markers / f"{state.tag}.release"
    deadline = time.monotonic() + BLOCK_SECONDS
    while not release.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{state.tag}: blocked at step {step}, never killed nor released")
        time.sleep(0.05)


def work(state: State) -> dict[str, Any]:
    step = state.count + 1
    _enter(state, step)
    return {"messages": [AIMessage(f"step {step}")], "count": step, "log": [f"step {step}"]}


def route(state: State) -> Literal["work", "__end__"]:
    return "work" if state.count < STEPS else END


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_conditional_edges("work", route)


def start_input(thread_id: str, *, block_at: int = 0) -> dict[str, Any]:
    """A thread's one input, as JSON (how a web process would send it through a broker)."""
    return {
        "messages": [{"role": "user", "content": f"start {thread_id}"}],
        "tag": thread_id,
        "block_at": block_at,
    }


def check_thread(app: Any, thread_id: str, run_id: str) -> None:
    """The thread finished exactly once: full state, one linear history of its run."""
    snapshot = app.get_state(thread_id)
    values = snapshot.values
    assert snapshot.next == (), f"{thread_id} stopped before the end: next {snapshot.next}"
    assert values.count == STEPS, thread_id
    assert values.log == [f"step {i}" for i in range(1, STEPS + 1)], (thread_id, values.log)
    assert [m.text for m in values.messages] == [
        f"start {thread_id}",
        *(f"step {i}" for i in range(1, STEPS + 1)),
    ], thread_id
    ids = [m.id for m in values.messages]
    assert len(set(ids)) == len(ids), (thread_id, ids)
    history = list(app.get_state_history(thread_id, before_inputs=False))
    assert [s.step for s in history] == list(range(STEPS, -1, -1)), (
        thread_id,
        [s.step for s in history],
    )
    for newer, older in itertools.pairwise(history):
        assert newer.parent_id == older.checkpoint_id, (thread_id, newer.step)
    assert history[-1].parent_id is None
    assert [s.metadata["source"] for s in history] == ["loop"] * STEPS + ["input"], thread_id
    assert {s.metadata["run_id"] for s in history} == {run_id}, thread_id
    assert history[0].checkpoint_id == snapshot.checkpoint_id


def entries(markers: Path, thread_id: str) -> list[int]:
    """The steps `work` was entered at for a thread, in order."""
    path = markers / f"{thread_id}.entries"
    return [int(line.split()[0]) for line in path.read_text().splitlines()]
