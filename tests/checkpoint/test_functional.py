"""@entrypoint and @task on the engine's checkpoints: every task runs once per step.

On every backend: a resume after a failure (in a fresh app over the same
store), after an interrupt, and after the process was killed (SIGKILL, in a
real child process) returns a finished task's stored result instead of
running it again. Also: retries, parallel interrupts, tasks inside plain
graph nodes, streams tagged with the task's name, and what the API refuses.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flowgraph import (
    START,
    AIMessage,
    Command,
    Entrypoint,
    MessagesState,
    RetryPolicy,
    ScriptedChatModel,
    StateGraph,
    entrypoint,
    interrupt,
    task,
)
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

from .conftest import ThreadIds

ROOT = Path(__file__).resolve().parents[2]
NO_WAIT = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=RuntimeError)


def test_a_failed_entrypoint_resumed_in_a_fresh_app_does_not_run_finished_tasks(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    runs = Counter[str]()
    broken = {"on": True}

    @task
    def charge(amount: int) -> dict[str, Any]:
        runs["charge"] += 1
        return {"receipt": f"rcpt-{amount}"}

    @task
    def ship(receipt: str) -> str:
        runs["ship"] += 1
        if broken["on"]:
            raise RuntimeError("the courier API is down")
        return f"shipped with {receipt}"

    def build() -> Entrypoint:
        @entrypoint(checkpointer=checkpointer)
        def order(amount: int) -> str:
            receipt = charge(amount).result()["receipt"]
            return ship(receipt).result()

        return order

    with pytest.raises(RuntimeError, match="courier"):
        build().invoke(30, thread_id=t)
    snapshot = build().get_state(t)
    assert snapshot.next == ("order",) and snapshot.values is None
    broken["on"] = False
    assert build().invoke(None, thread_id=t) == "shipped with rcpt-30"
    assert runs == {"charge": 1, "ship": 2}
    assert build().get_state(t).values == "shipped with rcpt-30"


def test_interrupts_in_parallel_tasks_are_all_asked_and_answered_by_id(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    runs = Counter[str]()

    @task
    def approve(item: str) -> str:
        runs[item] += 1
        return f"{item}: {interrupt(f'Approve {item}?')}"

    @entrypoint(checkpointer=checkpointer)
    def approvals(items: list[str]) -> list[str]:
        futures = [approve(item) for item in items]
        return [future.result() for future in futures]

    assert approvals.invoke(["tea", "cake"], thread_id=t) is None
    waiting = approvals.get_state(t).interrupts
    assert sorted(i.value for i in waiting) == ["Approve cake?", "Approve tea?"]
    assert {i.node for i in waiting} == {"approvals/approve"}
    answers = {i.id: ("yes" if "tea" in i.value else "no") for i in waiting}
    assert approvals.invoke(Command(resume=answers), thread_id=t) == ["tea: yes", "cake: no"]
    assert runs == {"tea": 2, "cake": 2}


def test_a_task_with_a_retry_policy_and_a_retried_entrypoint(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    runs = Counter[str]()

    @task(retry_policy=NO_WAIT)
    def flaky() -> str:
        runs["flaky"] += 1
        if runs["flaky"] < 3:
            raise RuntimeError("try again")
        return "finally"

    @task
    def once_only() -> str:
        runs["once_only"] += 1
        return "paid"

    @entrypoint(checkpointer=checkpointer, retry=NO_WAIT)
    def work(_: None) -> list[str]:
        paid = once_only().result()
        runs["work"] += 1
        if runs["work"] == 1:
            raise RuntimeError("the entrypoint fails once, after paying")
        return [paid, flaky().result()]

    assert work.invoke(0, thread_id=tid()) == ["paid", "finally"]
    assert runs == {"once_only": 1, "work": 2, "flaky": 3}


CRASHING = """
import os, signal, sys
from pathlib import Path
from flowgraph import entrypoint, task
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

log = Path(sys.argv[2])

@task
def draft(topic: str) -> str:
    with log.open("a") as f:
        f.write("draft\\n")
    return f"a draft about {topic}"

@task
def publish(text: str) -> str:
    if os.environ.get("KILL_IN_PUBLISH"):
        os.kill(os.getpid(), signal.SIGKILL)
    with log.open("a") as f:
        f.write("publish\\n")
    return f"published: {text}"

@entrypoint(checkpointer=SQLiteCheckpointer(sys.argv[1]))
def blog(topic: str) -> str:
    return publish(draft(topic).result()).result()

print(blog.invoke(sys.argv[3] if sys.argv[3] != "-" else None, thread_id="post"))
"""


def test_a_workflow_killed_mid_task_resumes_without_running_finished_tasks(
    tmp_path: Path,
) -> None:
    script = tmp_path / "blog.py"
    script.write_text(textwrap.dedent(CRASHING))
    db, log = tmp_path / "blog.db", tmp_path / "log.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = subprocess.run(
        [sys.executable, str(script), str(db), str(log), "streams"],
        env={**env, "KILL_IN_PUBLISH": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert log.read_text() == "draft\n"
    resumed = subprocess.run(
        [sys.executable, str(script), str(db), str(log), "-"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "published: a draft about streams\n"
    assert log.read_text() == "draft\npublish\n"  # the draft was not written again
    store = SQLiteCheckpointer(db)
    history = [
        (s.step, s.metadata.get("source"), s.next)
        for s in reversed(list(blog_reader(store).get_state_history("post")))
    ]
    # the checkpoint before the input, the input, the one finished step: no step twice
    assert history == [(-1, "input", ("__start__",)), (0, "input", ("blog",)), (1, "loop", ())]


def blog_reader(store: SQLiteCheckpointer) -> Entrypoint:
    @entrypoint(checkpointer=store)
    def blog(topic: str) -> str:
        raise AssertionError("only reads the thread")

    return blog


def test_tasks_in_a_graph_node_and_their_stream_parts() -> None:
    model = ScriptedChatModel(["Summary of part one.", "Summary of part two."])

    @task
    def summarise(text: str) -> str:
        return model.invoke(f"Summarise: {text}").text

    def node(state: MessagesState) -> dict[str, Any]:
        futures = [summarise(part) for part in ("one", "two")]
        return {"messages": [AIMessage(" ".join(f.result() for f in futures))]}

    graph = StateGraph(MessagesState)
    graph.add_node("summaries", node)
    graph.add_edge(START, "summaries")
    parts = list(graph.compile().stream({"messages": []}, mode=["messages", "updates"]))
    tokens = {p.node for p in parts if p.mode == "messages"}
    updates = [(p.node, p.data) for p in parts if p.mode == "updates"]
    assert tokens == {"summarise"}  # a model called in a task streams as the task's
    assert sorted(u for u in updates if u[0] == "summarise") == [
        ("summarise", "Summary of part one."),
        ("summarise", "Summary of part two."),
    ]
    assert updates[-1][0] == "summaries"


def test_a_task_outside_a_run_just_runs_and_misuse_is_refused() -> None:
    @task
    def add(a: int, b: int) -> int:
        return a + b

    assert add(2, 3).result() == 5
    with pytest.raises(TypeError, match="takes one input"):

        @entrypoint()
        def two_inputs(a: int, b: int) -> int:
            return a + b

    @entrypoint  # bare, as a plain decorator
    def plus_one(n: int, *, writer: Any = None) -> int:
        writer(f"got {n}")
        return n + 1

    assert plus_one.invoke(1) == 2
    assert [p.data for p in plus_one.stream(4, mode="custom")] == ["got 4"]


def test_the_step_ends_only_once_every_task_started_in_it_has(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    done: list[str] = []

    @task
    def notify(who: str) -> None:
        threading.Event().wait(0.2)
        done.append(who)

    @task
    def confirm() -> Any:
        return interrupt("Send the notifications?")

    @entrypoint(checkpointer=checkpointer)
    def fire_and_forget(who: str) -> str:
        notify(who)  # nobody asks for the result
        confirm()  # nor for this one's: its interrupt still pauses the workflow
        return "queued"

    assert fire_and_forget.invoke("ada", thread_id=t) is None
    assert done == ["ada"]  # finished before the step was recorded
    assert [i.value for i in fire_and_forget.get_state(t).interrupts] == ["Send the notifications?"]
    assert fire_and_forget.invoke(Command(resume=True), thread_id=t) == "queued"
    assert done == ["ada"]  # its result was kept: not run again


def test_an_async_workflow_pauses_in_a_task_and_resumes(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    runs = Counter[str]()

    @task
    async def look_up(city: str) -> str:
        runs[city] += 1
        await asyncio.sleep(0)
        return f"{city}: 18°C"

    @task
    async def choose(options: list[str]) -> Any:
        return interrupt({"pick one of": options})

    @entrypoint(checkpointer=checkpointer)
    async def trip(cities: list[str]) -> str:
        weather = await asyncio.gather(*(look_up(city) for city in cities))
        picked = await choose(list(weather))
        return f"going to {picked}"

    async def main() -> tuple[Any, Any]:
        first = await trip.ainvoke(["Oslo", "Lima"], thread_id=t)
        parts = [p async for p in trip.astream(Command(resume="Lima"), thread_id=t, mode="updates")]
        return first, [(p.node, p.data) for p in parts]

    first, parts = asyncio.run(main())
    assert first is None
    assert trip.get_state(t).values == "going to Lima"
    assert parts == [("choose", "Lima"), ("trip", "going to Lima")]
    assert runs == {"Oslo": 1, "Lima": 1}
