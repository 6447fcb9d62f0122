"""The graph engine: per-superstep overhead, Send fan-out, and many concurrent async runs.

Three scenarios, each measured for flowgraph and, when it is installed, for
LangGraph on the same work in the same run (no checkpointer on either side):

- `react_loop`: a ReAct loop (`benchmarks/_react.py`) of 20 user turns of
  2 tool rounds each, the conversation carried from turn to turn in the
  input; µs per superstep (total time / 20 turns x 5 steps), with sync nodes
  under `invoke` and async nodes under `ainvoke`;
- `fanout_200`: a node fans out to 200 `Send` branches, each worker adds one
  item to an `operator.add` list, then a reduce node sums them; ms per run, with
  sync workers under `invoke` and async workers under `ainvoke`;
- `many_threads`: 300 conversations x 3 turns of the ReAct graph with one
  tool round, `ainvoke` under a concurrency of 50 runs; runs per second,
  with async and with sync nodes;
- `react_floor`: react_loop's sync conversation with no engine at all, its
  nodes called by a hand-written loop that does only what any engine must
  (views, message ids, reducer merges, the branch): the least a superstep
  over these nodes can cost, against LangGraph's superstep and ours.

Before timing, each scenario checks that both libraries computed the same
thing (message kinds and tool-call ids, or the fan-out's items and sum).
The two sides are timed in alternating blocks and each keeps its best
block median, so a noisy neighbour on the machine slows both alike; still,
run it on a quiet machine. Async runs use one plain event loop per
scenario (`run_until_complete`): Python 3.11's `asyncio.Runner.run` ends
with a `signal.getsignal` call that formats the repr of the finished task,
its result included, which costs more than a few steps when the result is
a conversation.

Where flowgraph's time goes, without LangGraph's side in the profile:

    python -m benchmarks.bench_graph               # cProfile of react_loop, top 15 by tottime
    python -m benchmarks.bench_graph fanout_200    # or fanout_200, many_threads

(`python -m cProfile -s tottime -m benchmarks react_loop` also works, but
mixes both libraries into one profile.)
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import math
import operator
import pstats
import sys
from collections.abc import Callable
from contextlib import closing
from functools import partial
from typing import Annotated, Any, TypedDict

from benchmarks._harness import Figure, has_langgraph, median_seconds, scenario
from benchmarks._react import (
    ROUNDS,
    messages_per_turn,
    ours_graph,
    ours_nodes,
    ours_turn_input,
    steps_per_turn,
    theirs_graph,
    theirs_turn_input,
)

TURNS = 20
"""User turns of the ReAct loop."""
STEPS = TURNS * steps_per_turn(ROUNDS)
"""Supersteps of one ReAct conversation: every step adds exactly one message,
which the message-count check below pins."""
FANOUT = 200
THREADS = 300
THREAD_TURNS = 3
CONCURRENCY = 50
THREAD_ROUNDS = 1
"""Tool rounds per turn in `many_threads`: model, tools, model (a 2-node graph)."""

REACT_TARGET = 20
"""The async superstep's target. The sync one has none of its own: the prebuilt path
(`bench_prebuilt`, 12x) and the engine's share above the floor (`react_instructions`)
replaced it."""
FANOUT_TARGET = 10
THREADS_TARGET = 10


def _paired(
    ours: Callable[[], object],
    theirs: Callable[[], object] | None,
    *,
    repeat: int,
    blocks: int = 2,
    warmup: int = 2,
) -> tuple[float, float | None]:
    """Each side's best block median, the sides' blocks alternating (ours, theirs, ours...)."""
    best_ours = best_theirs = math.inf
    for _ in range(blocks):
        best_ours = min(best_ours, median_seconds(ours, repeat=repeat, warmup=warmup))
        if theirs is not None:
            best_theirs = min(best_theirs, median_seconds(theirs, repeat=repeat, warmup=warmup))
    return best_ours, (best_theirs if theirs is not None else None)


def _signature(messages: list[Any]) -> list[tuple[str, str | None]]:
    """What both sides must agree on: each message's kind and the tool call it answers."""
    return [(m.type, getattr(m, "tool_call_id", None)) for m in messages]


def _check_same_messages(ours: list[Any], theirs: list[Any], expected: int) -> None:
    if len(ours) != expected or len(theirs) != expected:
        raise AssertionError(
            f"expected {expected} messages; flowgraph has {len(ours)}, LangGraph {len(theirs)}"
        )
    if _signature(ours) != _signature(theirs):
        raise AssertionError("flowgraph and LangGraph ran the ReAct loop differently")


# -- react_loop -----------------------------------------------------------------


def _conversation(
    app: Any, turn_input: Callable[..., Any], messages_of: Callable[..., Any]
) -> Callable[[], list[Any]]:
    """One 20-turn conversation through `invoke`, the messages carried in the input."""

    def run() -> list[Any]:
        messages: list[Any] = []
        for turn in range(TURNS):
            messages = messages_of(app.invoke(turn_input(messages, turn)))
        return messages

    return run


def _aconversation(
    loop: asyncio.AbstractEventLoop,
    app: Any,
    turn_input: Callable[..., Any],
    messages_of: Callable[..., Any],
) -> Callable[[], list[Any]]:
    """The same conversation through `ainvoke`, on one event loop kept for the whole scenario."""

    async def conversation() -> list[Any]:
        messages: list[Any] = []
        for turn in range(TURNS):
            messages = messages_of(await app.ainvoke(turn_input(messages, turn)))
        return messages

    return lambda: loop.run_until_complete(conversation())


def _ours_messages(state: Any) -> list[Any]:
    return state.messages  # type: ignore[no-any-return]  # MessagesState.messages


def _theirs_messages(state: Any) -> list[Any]:
    return state["messages"]  # type: ignore[no-any-return]  # LangGraph returns a dict


def _react(
    library: str, *, is_async: bool, loop: asyncio.AbstractEventLoop | None
) -> Callable[[], list[Any]]:
    """One library's conversation: sync nodes through `invoke`, async ones through `ainvoke`."""
    if library == "ours":
        app, turn_input, messages_of = (
            ours_graph(is_async=is_async),
            ours_turn_input,
            _ours_messages,
        )
    else:
        app = theirs_graph(is_async=is_async)
        turn_input, messages_of = theirs_turn_input, _theirs_messages
    if is_async:
        assert loop is not None
        return _aconversation(loop, app, turn_input, messages_of)
    return _conversation(app, turn_input, messages_of)


def _ours_react() -> Callable[[], list[Any]]:
    return _react("ours", is_async=False, loop=None)


@scenario("react_loop")
def react_loop() -> list[Figure]:
    expected = TURNS * messages_per_turn(ROUNDS)
    figures = []
    with closing(asyncio.new_event_loop()) as loop:
        for label, is_async in (("sync nodes, invoke", False), ("async nodes, ainvoke", True)):
            ours = _react("ours", is_async=is_async, loop=loop)
            theirs = None
            if has_langgraph():
                theirs = _react("langgraph", is_async=is_async, loop=loop)
                _check_same_messages(ours(), theirs(), expected)
            elif len(ours()) != expected:
                raise AssertionError(f"the ReAct loop should leave {expected} messages")
            ours_s, theirs_s = _paired(ours, theirs, repeat=10, blocks=3)
            figures.append(
                Figure(
                    f"per superstep, {label}",
                    "µs",
                    ours_s / STEPS * 1e6,
                    theirs_s / STEPS * 1e6 if theirs_s is not None else None,
                    target=REACT_TARGET if is_async else None,
                )
            )
    return figures


# -- react_floor ----------------------------------------------------------------


def _floor() -> Callable[[], list[Any]]:
    """The react_loop conversation with no engine: its sync nodes called by a hand-written loop.

    It does only what any engine must do for these nodes, with flowgraph's
    own code: a state view per node and branch call, ids for the input's and
    the nodes' new messages (deterministic, as inside a run), every update
    checked and merged by the field's reducer, the conversation handed back
    as a copy. No run options, task scopes, retries, events, budgets,
    routing tables or checkpoint hook: what is left is the least a
    superstep over these nodes can cost with flowgraph's messages.
    """
    from flowgraph import END, START, MessagesState
    from flowgraph._context import message_id_factory
    from flowgraph._ids import StepIds, random_scope_key
    from flowgraph.graph._core.schema import StateAdapter  # the engine's own update and merge code

    state = StateAdapter(MessagesState)
    model, tools, route = ours_nodes(ROUNDS)
    nodes = {"model": model, "tools": tools}

    def invoke(update: dict[str, Any]) -> Any:
        key = random_scope_key()
        values: dict[str, Any] = {}
        node, step = START, 0
        while True:
            token = message_id_factory.set(StepIds(key, step, 0))
            try:
                if node != START:
                    update = nodes[node](state.view(values))
                checked = state.check_update(node, update, positions=node == START)
            finally:
                message_id_factory.reset(token)
            values = dict(values)
            for field, value in checked.items():
                state.apply(values, field, value)
            if node == "model" and route(state.view(values)) == END:
                return state.detached(values)
            node = "tools" if node == "model" else "model"
            step += 1

    def conversation() -> list[Any]:
        previous: list[Any] = []
        for turn in range(TURNS):
            previous = invoke(ours_turn_input(previous, turn)).messages
        return previous

    return conversation


@scenario("react_floor")
def react_floor() -> list[Figure]:
    """How fast a sync superstep could be if the engine cost nothing.

    Row 1 compares the floor (`_floor`) with LangGraph's whole sync
    superstep: the best ratio any engine over these nodes and flowgraph's
    messages could show. Row 2 puts flowgraph's sync superstep next to the
    floor (the *langgraph* column holds the floor): what the engine adds.
    """
    expected = TURNS * messages_per_turn(ROUNDS)
    floor = _floor()
    ours = _react("ours", is_async=False, loop=None)
    if _signature(floor()) != _signature(ours()) or len(ours()) != expected:
        raise AssertionError("the floor and the engine ran the ReAct loop differently")
    theirs = _react("langgraph", is_async=False, loop=None) if has_langgraph() else None
    floor_s, theirs_s = _paired(floor, theirs, repeat=10, blocks=3)
    ours_s, floor_again_s = _paired(ours, floor, repeat=10, blocks=3)
    assert floor_again_s is not None
    floor_s = min(floor_s, floor_again_s)  # both rows show the floor's best block
    return [
        Figure(
            "per superstep, sync, no engine (floor)",
            "µs",
            floor_s / STEPS * 1e6,
            theirs_s / STEPS * 1e6 if theirs_s is not None else None,
        ),
        Figure(
            "sync superstep vs the floor*",
            "µs",
            ours_s / STEPS * 1e6,
            floor_s / STEPS * 1e6,
        ),
    ]


# -- fanout_200 -----------------------------------------------------------------


class FanState(TypedDict, total=False):
    n: int
    items: Annotated[list[int], operator.add]
    total: int


def _fanout_graph(library: str, *, is_async: bool) -> Any:
    """split -> 200 x Send("worker") -> reduce, on either library, with the same node code."""
    if library == "ours":
        from flowgraph import END, START, Send, StateGraph
    else:
        from langgraph.graph import END, START, StateGraph  # type: ignore[assignment]
        from langgraph.types import Send  # type: ignore[assignment]

    def split(state: Any) -> None:
        return None

    def fan_out(state: Any) -> list[Any]:
        return [Send("worker", {"i": i}) for i in range(state["n"])]

    def worker(arg: Any) -> dict[str, Any]:
        return {"items": [arg["i"] * 2]}

    async def aworker(arg: Any) -> dict[str, Any]:
        return {"items": [arg["i"] * 2]}

    def reduce(state: Any) -> dict[str, Any]:
        return {"total": sum(state["items"])}

    graph = StateGraph(FanState)
    graph.add_node("split", split)
    graph.add_node("worker", aworker if is_async else worker)
    graph.add_node("reduce", reduce)
    graph.add_edge(START, "split")
    graph.add_conditional_edges("split", fan_out, ["worker"])
    graph.add_edge("worker", "reduce")
    graph.add_edge("reduce", END)
    return graph.compile()


def _fanout_run(app: Any, loop: asyncio.AbstractEventLoop | None) -> Callable[[], Any]:
    if loop is None:
        return lambda: app.invoke({"n": FANOUT})
    return lambda: loop.run_until_complete(app.ainvoke({"n": FANOUT}))


def _ours_fanout() -> Callable[[], Any]:
    return _fanout_run(_fanout_graph("ours", is_async=False), None)


@scenario("fanout_200")
def fanout_200() -> list[Figure]:
    expected = (FANOUT, sum(2 * i for i in range(FANOUT)))
    figures = []
    with closing(asyncio.new_event_loop()) as loop:
        for label, is_async in (("sync workers, invoke", False), ("async workers, ainvoke", True)):
            on = loop if is_async else None
            ours = _fanout_run(_fanout_graph("ours", is_async=is_async), on)
            theirs = None
            results = [ours()]
            if has_langgraph():
                theirs = _fanout_run(_fanout_graph("langgraph", is_async=is_async), on)
                results.append(theirs())
            for result in results:
                if (len(result["items"]), result["total"]) != expected:
                    raise AssertionError(f"the fan-out should collect {expected}, got {result}")
            ours_s, theirs_s = _paired(ours, theirs, repeat=8, blocks=3)
            figures.append(
                Figure(
                    f"{FANOUT} Sends, {label}",
                    "ms",
                    ours_s * 1e3,
                    theirs_s * 1e3 if theirs_s is not None else None,
                    target=FANOUT_TARGET,
                )
            )
    return figures


# -- many_threads ---------------------------------------------------------------


def _threads(
    loop: asyncio.AbstractEventLoop,
    app: Any,
    turn_input: Callable[..., Any],
    messages_of: Callable[..., Any],
) -> Callable[[], list[int]]:
    """300 conversations of 3 turns each, at most 50 runs in flight; each one's message count.

    No thread_id is passed: without a checkpointer neither library keeps
    anything per thread, and the caller carries each conversation.
    """

    async def conversation(limit: asyncio.Semaphore) -> int:
        messages: list[Any] = []
        for turn in range(THREAD_TURNS):
            async with limit:
                messages = messages_of(await app.ainvoke(turn_input(messages, turn)))
        return len(messages)

    async def all_threads() -> list[int]:
        limit = asyncio.Semaphore(CONCURRENCY)
        return await asyncio.gather(*(conversation(limit) for _ in range(THREADS)))

    return lambda: loop.run_until_complete(all_threads())


def _ours_threads() -> Callable[[], list[int]]:
    app = ours_graph(THREAD_ROUNDS, is_async=True)
    return _threads(asyncio.new_event_loop(), app, ours_turn_input, _ours_messages)


def threads_figure(
    loop: asyncio.AbstractEventLoop,
    label: str,
    ours_app: Any,
    theirs_app: Callable[[], Any],
    target: float = THREADS_TARGET,
) -> Figure:
    """300 threads x 3 turns of `ours_app` and, if installed, LangGraph's `theirs_app()`."""
    runs = THREADS * THREAD_TURNS
    expected = [THREAD_TURNS * messages_per_turn(THREAD_ROUNDS)] * THREADS
    ours = _threads(loop, ours_app, ours_turn_input, _ours_messages)
    counts = [ours()]
    theirs = None
    if has_langgraph():
        theirs = _threads(loop, theirs_app(), theirs_turn_input, _theirs_messages)
        counts.append(theirs())
    if any(c != expected for c in counts):
        raise AssertionError("every thread should end with the same messages")
    # Each timed run is 900 runs already; the check above was the warm-up.
    ours_s, theirs_s = _paired(ours, theirs, repeat=3, blocks=1, warmup=0)
    return Figure(
        f"{THREADS}x{THREAD_TURNS} ainvoke @{CONCURRENCY}, {label}",
        "runs/s",
        runs / ours_s,
        runs / theirs_s if theirs_s is not None else None,
        lower_is_better=False,
        target=target,
    )


@scenario("many_threads")
def many_threads() -> list[Figure]:
    with closing(asyncio.new_event_loop()) as loop:
        return [
            threads_figure(
                loop,
                label,
                ours_graph(THREAD_ROUNDS, is_async=is_async),
                partial(theirs_graph, THREAD_ROUNDS, is_async=is_async),
            )
            for label, is_async in (("async nodes", True), ("sync nodes", False))
        ]


# -- profiling ------------------------------------------------------------------

_PROFILED: dict[str, tuple[Callable[[], Callable[[], Any]], int]] = {
    "react_loop": (_ours_react, 50),
    "fanout_200": (_ours_fanout, 50),
    "many_threads": (_ours_threads, 5),
}
"""Flowgraph's side of each scenario, and how many runs to profile."""


def profile(name: str = "react_loop", *, top: int = 15) -> None:
    """cProfile flowgraph's side of scenario `name` and print the top functions by tottime.

    The collector is paused, as while the figures are timed.
    """
    make, runs = _PROFILED[name]
    work = make()
    work()  # warm up: imports, validators, the thread's event loop
    gc.collect()
    gc.disable()  # as `median_seconds` does, so the profile matches the figures
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in range(runs):
            work()
    finally:
        profiler.disable()
        gc.enable()
    print(f"flowgraph, {name}: {runs} runs under cProfile")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


if __name__ == "__main__":
    profile(*sys.argv[1:2])
