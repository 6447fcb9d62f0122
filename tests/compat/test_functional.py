"""The functional API as LangGraph's docs use it (issue 18, item 10).

`@entrypoint(checkpointer=...)` and `@task`: tasks run in parallel and
return futures, `interrupt()` inside a task pauses the workflow and
`Command(resume=...)` goes on without running finished tasks again,
`previous` and `entrypoint.final` carry a value from one invocation to the
next, the stream shows each task's result, and the workflow draws as
START -> entrypoint -> END. Each program runs under both libraries.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.compat._libs import Lib
from tests.compat.test_streaming import plain


def config(lib: Lib, thread_id: str) -> dict[str, Any]:
    """LangGraph's per-call `config` for a thread; flowgraph takes thread_id=."""
    if lib.name == "flowgraph":
        return {"thread_id": thread_id}
    return {"config": {"configurable": {"thread_id": thread_id}}}


def review_workflow(lib: Lib, calls: list[tuple[str, Any]]) -> Any:
    """Doubles each number in parallel tasks, then asks a person about the sum."""

    @lib.task
    def double(number: int) -> int:
        calls.append(("double", number))
        return 2 * number

    @lib.task
    def ask(total: int) -> Any:
        calls.append(("ask", total))
        return lib.interrupt(f"Is {total} right?")

    @lib.entrypoint(checkpointer=lib.checkpointer())
    def review(count: int) -> dict[str, Any]:
        doubled = [future.result() for future in [double(i) for i in range(count)]]
        lib.get_stream_writer()({"doubled": doubled})
        verdict = ask(sum(doubled)).result()
        return {"doubled": doubled, "verdict": verdict}

    return review


def test_tasks_an_interrupt_and_a_resume(lib: Lib) -> None:
    calls: list[tuple[str, Any]] = []
    review = review_workflow(lib, calls)
    modes = ["updates", "custom"]
    first = [plain(c) for c in lib.stream(review, 3, "t", stream_mode=modes)]
    # the three doubles run at once: their results arrive in the order they finish
    assert sorted(first[:3], key=repr) == [
        ("updates", {"double": 0}),
        ("updates", {"double": 2}),
        ("updates", {"double": 4}),
    ]
    assert first[3:] == [
        ("custom", {"doubled": [0, 2, 4]}),
        ("updates", {"__interrupt__": ["Is 6 right?"]}),
    ]
    state = lib.state(review, "t")
    assert state.next == ("review",) and [i.value for i in state.interrupts] == ["Is 6 right?"]
    resumed = [
        plain(c) for c in lib.stream(review, lib.Command(resume="yes"), "t", stream_mode=modes)
    ]
    assert resumed == [
        ("custom", {"doubled": [0, 2, 4]}),  # the entrypoint runs again from its start ...
        ("updates", {"ask": "yes"}),  # ... but the doubles it had are not run (nor streamed)
        ("updates", {"review": {"doubled": [0, 2, 4], "verdict": "yes"}}),
    ]
    # each task that finished ran once; the one that paused ran again to get its answer
    assert sorted(calls) == [("ask", 6), ("ask", 6), ("double", 0), ("double", 1), ("double", 2)]
    assert lib.state(review, "t").values == {"doubled": [0, 2, 4], "verdict": "yes"}


def test_values_stream_the_return_value(lib: Lib) -> None:
    review = review_workflow(lib, [])
    first = [plain(c) for c in lib.stream(review, 2, "t", stream_mode="values")]
    assert first == [{"__interrupt__": ["Is 2 right?"]}]
    resumed = [
        plain(c) for c in lib.stream(review, lib.Command(resume="ok"), "t", stream_mode="values")
    ]
    assert resumed == [None, {"doubled": [0, 2], "verdict": "ok"}]


def test_previous_and_entrypoint_final(lib: Lib) -> None:
    @lib.entrypoint(checkpointer=lib.checkpointer())
    def tally(amount: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + amount
        return lib.entrypoint.final(value=f"total is {total}", save=total)

    assert lib.invoke(tally, 3, "t") == "total is 3"
    assert lib.invoke(tally, 4, "t") == "total is 7"
    assert lib.invoke(tally, 5, "other") == "total is 5"
    assert lib.state(tally, "t").values == "total is 7"  # the state is what it returned

    @lib.entrypoint(checkpointer=lib.checkpointer())
    def remember(word: str, *, previous: Any = None) -> list[str]:
        return [*(previous or []), word]

    lib.invoke(remember, "a", "t")
    assert lib.invoke(remember, "b", "t") == ["a", "b"]  # without final: the return value


def test_tasks_run_in_parallel(lib: Lib) -> None:
    @lib.task
    def slow(name: str) -> str:
        time.sleep(0.3)
        return name.upper()

    @lib.entrypoint()
    def fan_out(names: list[str]) -> list[str]:
        futures = [slow(name) for name in names]
        return [future.result() for future in futures]

    started = time.perf_counter()
    assert fan_out.invoke(["a", "b", "c", "d"]) == ["A", "B", "C", "D"]
    assert time.perf_counter() - started < 1.0  # four 0.3 s tasks at once, not 1.2 s


def test_async_entrypoint_and_tasks(lib: Lib) -> None:
    @lib.task
    async def fetch(page: int) -> str:
        await asyncio.sleep(0.2)
        return f"page {page}"

    @lib.task
    def count_words(text: str) -> int:
        return len(text.split())

    @lib.entrypoint(checkpointer=lib.checkpointer())
    async def crawl(pages: int) -> dict[str, Any]:
        texts = await asyncio.gather(*(fetch(p) for p in range(pages)))
        words = await count_words(" ".join(texts))
        return {"texts": list(texts), "words": words}

    started = time.perf_counter()
    out = asyncio.run(crawl.ainvoke(3, **config(lib, "t")))
    assert out == {"texts": ["page 0", "page 1", "page 2"], "words": 6}
    assert time.perf_counter() - started < 0.5


def test_an_entrypoint_draws_as_one_node(lib: Lib) -> None:
    @lib.entrypoint()
    def workflow(value: int) -> int:
        return value + 1

    if lib.name == "flowgraph":
        from flowgraph.viz import build_diagram

        edges = {(e.source, e.target) for e in build_diagram(workflow).edges}
    else:
        edges = {(e.source, e.target) for e in workflow.get_graph().edges}
    assert edges == {("__start__", "workflow"), ("workflow", "__end__")}
    assert workflow.invoke(41) == 42


def test_update_state_sets_the_value_previous_gets(lib: Lib) -> None:
    @lib.entrypoint(checkpointer=lib.checkpointer())
    def running_total(amount: int, *, previous: Any = None) -> int:
        return amount + (previous or 0)

    assert lib.invoke(running_total, 2, "t") == 2
    if lib.name == "flowgraph":
        running_total.update_state("t", 10)
    else:
        running_total.update_state({"configurable": {"thread_id": "t"}}, 10)
    state = lib.state(running_total, "t")
    assert (state.values, state.next) == (10, ())
    assert lib.invoke(running_total, 3, "t") == 13
