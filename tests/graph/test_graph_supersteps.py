"""Supersteps: concurrency, deterministic merge order, routing, Command, Send, joins."""

from __future__ import annotations

import asyncio
import operator
import random
import threading
import time
from enum import StrEnum
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import END, START, AIMessage, Command, MessagesState, Send, StateGraph
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.errors import GraphValidationError

TIMEOUT = 5.0


class State(MessagesState):
    trail: Annotated[list[str], operator.add] = Field(default_factory=list)
    results: Annotated[list[int], operator.add] = Field(default_factory=list)
    n: int = 0


def mark(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"trail": [name]}

    return node


def fan_graph(nodes: dict[str, Any]) -> Any:
    """START -> every node (in dict order) -> END."""
    g = StateGraph(State)
    for name, fn in nodes.items():
        g.add_node(name, fn)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile()


# ------------------------------------------------------------------ concurrency


def test_two_sync_nodes_in_one_step_overlap() -> None:
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    threads: dict[str, int] = {}

    def node(name: str) -> Any:
        def run(state: State) -> dict[str, Any]:
            threads[name] = threading.get_ident()
            barrier.wait()  # BrokenBarrierError if the other node is not running meanwhile
            return {"trail": [name]}

        return run

    out = fan_graph({"a": node("a"), "b": node("b")}).invoke({})
    assert out.trail == ["a", "b"]
    assert threads["a"] != threads["b"]


def test_two_sync_nodes_overlap_under_ainvoke_and_stream() -> None:
    def build() -> Any:
        barrier = threading.Barrier(2, timeout=TIMEOUT)

        def node(name: str) -> Any:
            def run(state: State) -> dict[str, Any]:
                barrier.wait()
                return {"trail": [name]}

            return run

        return fan_graph({"a": node("a"), "b": node("b")})

    assert asyncio.run(build().ainvoke({})).trail == ["a", "b"]
    parts = list(build().stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [(1, "a"), (1, "b")]


def test_two_async_nodes_in_one_step_overlap() -> None:
    async def main() -> Any:
        ready = {"a": asyncio.Event(), "b": asyncio.Event()}

        def node(name: str, other: str) -> Any:
            async def run(state: State) -> dict[str, Any]:
                ready[name].set()
                await asyncio.wait_for(ready[other].wait(), TIMEOUT)
                return {"trail": [name]}

            return run

        return await fan_graph({"a": node("a", "b"), "b": node("b", "a")}).ainvoke({})

    assert asyncio.run(main()).trail == ["a", "b"]


def test_async_nodes_overlap_under_sync_invoke() -> None:
    started = {"a": threading.Event(), "b": threading.Event()}

    def node(name: str, other: str) -> Any:
        async def run(state: State) -> dict[str, Any]:
            started[name].set()
            deadline = time.monotonic() + TIMEOUT
            while not started[other].is_set():
                assert time.monotonic() < deadline, f"{other} never started while {name} ran"
                await asyncio.sleep(0.001)
            return {"trail": [name]}

        return run

    out = fan_graph({"a": node("a", "b"), "b": node("b", "a")}).invoke({})
    assert out.trail == ["a", "b"]


def test_mixed_sync_and_async_nodes_overlap() -> None:
    sync_started = threading.Event()
    async_started = threading.Event()

    def sync_node(state: State) -> dict[str, Any]:
        sync_started.set()
        assert async_started.wait(TIMEOUT)
        return {"trail": ["sync"]}

    async def async_node(state: State) -> dict[str, Any]:
        async_started.set()
        deadline = time.monotonic() + TIMEOUT
        while not sync_started.is_set():
            assert time.monotonic() < deadline
            await asyncio.sleep(0.001)
        return {"trail": ["async"]}

    out = fan_graph({"sync": sync_node, "async": async_node}).invoke({})
    assert out.trail == ["sync", "async"]


# ------------------------------------------------------------------ merge order


def test_merge_order_is_trigger_order_not_completion_order() -> None:
    b_done = threading.Event()

    def a(state: State) -> dict[str, Any]:
        assert b_done.wait(TIMEOUT)  # a finishes strictly after b
        time.sleep(0.01)
        return {"trail": ["a"], "messages": [AIMessage("from a")], "n": 1}

    def b(state: State) -> dict[str, Any]:
        b_done.set()
        return {"trail": ["b"], "messages": [AIMessage("from b")], "n": 2}

    out = fan_graph({"a": a, "b": b}).invoke({})
    assert out.trail == ["a", "b"]
    assert [m.text for m in out.messages] == ["from a", "from b"]
    assert out.n == 2  # the later-triggered node's plain write wins, whoever finished last


def test_merge_order_is_deterministic_under_random_completion() -> None:
    names = ["a", "b", "c", "d"]

    def node(name: str) -> Any:
        async def run(state: State) -> dict[str, Any]:
            await asyncio.sleep(random.random() * 0.003)
            return {"trail": [name], "messages": [AIMessage(name)]}

        return run

    def sync_node(name: str) -> Any:
        def run(state: State) -> dict[str, Any]:
            time.sleep(random.random() * 0.003)
            return {"trail": [name]}

        return run

    app = fan_graph({n: node(n) for n in names})
    sync_app = fan_graph({n: sync_node(n) for n in names})

    async def many() -> list[Any]:
        return await asyncio.gather(*(app.ainvoke({}) for _ in range(30)))

    outs = asyncio.run(many())
    assert {tuple(o.trail) for o in outs} == {tuple(names)}
    assert {tuple(m.text for m in o.messages) for o in outs} == {tuple(names)}
    for _ in range(15):
        assert sync_app.invoke({}).trail == names


def test_writes_after_tasks_that_wrote_nothing_are_applied() -> None:
    """Tasks returning None, {} or a Command without update come first; the writer's update
    still lands (the barrier skips empty results, it does not stop at them)."""

    async def nothing_async(state: State) -> None:
        return None

    app = fan_graph(
        {
            "none": lambda s: None,
            "empty": lambda s: {},
            "goto_only": lambda s: Command(goto=[]),
            "none_async": nothing_async,
            "writer": lambda s: {"trail": ["writer"], "n": 7, "messages": [AIMessage("w")]},
        }
    )
    for out in (app.invoke({}), asyncio.run(app.ainvoke({}))):
        assert out.trail == ["writer"]
        assert out.n == 7
        assert [m.text for m in out.messages] == ["w"]


# ------------------------------------------------------------------ routing


def routed(path: Any, path_map: Any = None) -> Any:
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", path, path_map)
    g.add_edge("b", END)
    g.add_edge("c", END)
    return g.compile()


def test_branch_returning_a_name() -> None:
    assert routed(lambda s: "c", ["b", "c"]).invoke({}).trail == ["a", "c"]


def test_branch_returning_a_list_runs_them_in_one_step_in_list_order() -> None:
    app = routed(lambda s: ["c", "b"], ["b", "c"])
    parts = list(app.stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [(1, "a"), (2, "c"), (2, "b")]
    assert app.invoke({}).trail == ["a", "c", "b"]


def test_branch_returning_end() -> None:
    assert routed(lambda s: END, ["b", "c", END]).invoke({}).trail == ["a"]


def test_branch_through_path_map_values() -> None:
    app = routed(lambda s: s.n > 0, {True: "b", False: "c"})
    assert app.invoke({"n": 1}).trail == ["a", "b"]
    assert app.invoke({"n": 0}).trail == ["a", "c"]


def test_branch_sees_the_state_after_the_step() -> None:
    seen: list[list[str]] = []

    def path(state: State) -> str:
        seen.append(list(state.trail))
        return "b"

    routed(path, ["b", "c"]).invoke({})
    assert seen == [["a"]]


def test_async_branch_function() -> None:
    async def path(state: State) -> str:
        await asyncio.sleep(0)
        return "c"

    assert routed(path, ["b", "c"]).invoke({}).trail == ["a", "c"]
    assert asyncio.run(routed(path, ["b", "c"]).ainvoke({})).trail == ["a", "c"]


def test_branch_name_through_path_map_keys() -> None:
    # a returned name is looked up in the path_map, not taken as a node name itself
    app = routed(lambda s: "go" if s.n else "stop", {"go": "b", "stop": "c", "b": "c"})
    assert app.invoke({"n": 1}).trail == ["a", "b"]
    assert app.invoke({"n": 0}).trail == ["a", "c"]
    assert routed(lambda s: "b", {"b": "c", "c": "b"}).invoke({}).trail == ["a", "c"]


def test_branch_value_missing_from_path_map_names_the_source() -> None:
    with pytest.raises(GraphValidationError, match="'a'") as info:
        routed(lambda s: "zzz", {"x": "b", "y": "c"}).invoke({})
    assert info.value.node == "a"


def test_branch_to_unknown_node_names_the_source() -> None:
    with pytest.raises(GraphValidationError, match="ghost") as info:
        routed(lambda s: "ghost").invoke({})
    assert info.value.node == "a"


def test_conditional_edge_from_start() -> None:
    g = StateGraph(State)
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_conditional_edges(START, lambda s: "c" if s.n else "b", ["b", "c"])
    g.add_edge("b", END)
    g.add_edge("c", END)
    app = g.compile()
    assert app.invoke({"n": 1}).trail == ["c"]
    assert app.invoke({"n": 0}).trail == ["b"]


def test_loop_until_condition() -> None:
    g = StateGraph(State)
    g.add_node("inc", lambda s: {"n": s.n + 1, "trail": ["inc"]})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s.n < 5 else END, ["inc", END])
    out = g.compile().invoke({})
    assert out.n == 5
    assert out.trail == ["inc"] * 5


def test_node_triggered_twice_in_a_step_runs_once() -> None:
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a").add_edge(START, "b")
    g.add_edge("a", "c").add_edge("b", "c").add_edge("c", END)
    assert g.compile().invoke({}).trail == ["a", "b", "c"]


def test_nodes_of_one_step_routing_to_different_successors_all_reach_them() -> None:
    """Three sources in one step, each by another kind of route (no join edges anywhere):
    every successor runs in the next step."""
    g = StateGraph(State)
    for name in ("a", "b", "c", "d", "e"):
        g.add_node(name, mark(name))
    g.add_node("x", lambda s: Command(update={"trail": ["x"]}, goto="e"), destinations=["e"])
    g.add_edge(START, "a").add_edge(START, "b").add_edge(START, "x")
    g.add_edge("a", "c")  # a plain edge
    g.add_conditional_edges("b", lambda s: "d", ["d"])  # a branch
    for name in ("c", "d", "e"):
        g.add_edge(name, END)
    app = g.compile()
    parts = list(app.stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [
        (1, "a"),
        (1, "b"),
        (1, "x"),
        (2, "c"),
        (2, "d"),
        (2, "e"),
    ]
    assert app.invoke({}).trail == ["a", "b", "x", "c", "d", "e"]


def test_two_nodes_of_one_step_each_branching_elsewhere() -> None:
    g = StateGraph(State)
    for name in ("a", "b", "c", "d"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a").add_edge(START, "b")
    g.add_conditional_edges("a", lambda s: "c", ["c"])
    g.add_conditional_edges("b", lambda s: "d", ["d"])
    g.add_edge("c", END).add_edge("d", END)
    parts = list(g.compile().stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [(1, "a"), (1, "b"), (2, "c"), (2, "d")]


class Route(StrEnum):
    """Routes as a str subclass: equal to the node names, but not of type str."""

    B = "b"
    C = "c"
    DONE = END


def test_a_str_enum_route_returned_twice_or_reached_two_ways_runs_once() -> None:
    """No path_map: the branch's own values (not a map's plain strings) are the routes."""
    twice = routed(lambda s: [Route.B, Route.B])
    assert twice.invoke({}).trail == ["a", "b"]
    assert [(p.step, p.node) for p in twice.stream({}, mode="updates")] == [(1, "a"), (2, "b")]

    g = StateGraph(State)
    for name in ("a", "a2", "b"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a").add_edge(START, "a2")
    g.add_edge("a", "b")  # "b" as a plain str first, then as a StrEnum
    g.add_conditional_edges("a", lambda s: Route.B)
    g.add_conditional_edges("a2", lambda s: [Route.B, "b"])  # the StrEnum first
    g.add_edge("b", END)
    assert g.compile().invoke({}).trail == ["a", "a2", "b"]


def test_a_str_enum_route_through_a_path_map_and_a_command() -> None:
    assert routed(lambda s: Route.C, {"b": "b", "c": "c"}).invoke({}).trail == ["a", "c"]
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto=[Route.B, Route.B, "b"]), destinations=["b"])
    g.add_node("b", mark("b"))
    g.add_edge(START, "a").add_edge("b", END)
    assert g.compile().invoke({}).trail == ["b"]


def test_a_str_enum_equal_to_end_ends_the_branch() -> None:
    assert routed(lambda s: Route.DONE).invoke({}).trail == ["a"]
    assert routed(lambda s: [Route.DONE, Route.C]).invoke({}).trail == ["a", "c"]
    assert routed(lambda s: Route.DONE, ["b", "c", END]).invoke({}).trail == ["a"]
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto=Route.DONE), destinations=[END])
    g.add_edge(START, "a")
    assert g.compile().invoke({"n": 1}).n == 1


def test_a_str_enum_route_is_checkpointed_as_the_plain_node_name() -> None:
    """The next step's tasks and a failed step's pending routes are stored: the codec
    knows str, not the user's enum, so the engine keeps the plain name."""
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto=Route.B), destinations=["b"])
    g.add_node("fails", lambda s: {"n": 1 // s.n})
    g.add_node("b", mark("b"))
    g.add_edge(START, "a").add_edge(START, "fails")
    g.add_conditional_edges("b", lambda s: [Route.C, Send(Route.C, {})])
    g.add_node("c", mark("c"))
    g.add_edge("fails", END).add_edge("c", END)
    app = g.compile(checkpointer=MemoryCheckpointer())
    with pytest.raises(ZeroDivisionError):
        app.invoke({}, thread_id="t")  # a's route is kept as a pending write
    app.update_state("t", {"n": 1})
    out = app.invoke(None, thread_id="t")
    assert out.trail == ["b", "c", "c"]
    history = list(app.get_state_history("t"))
    assert [s.next for s in history] == [
        (), ("c", "c"), ("b",), ("a", "fails"), ("a", "fails"), ("__start__",)
    ]  # fmt: skip
    assert {type(n) for s in history for n in s.next} == {str}


# ------------------------------------------------------------------ Command


def test_command_goto_and_update() -> None:
    def decide(state: State) -> Command:
        return Command(update={"trail": ["decide"], "n": 3}, goto="c" if state.n else "b")

    g = StateGraph(State)
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_node("decide", decide, destinations=["b", "c"])
    g.add_edge(START, "decide").add_edge("b", END).add_edge("c", END)
    app = g.compile()
    assert app.invoke({"n": 1}).trail == ["decide", "c"]
    out = app.invoke({"n": 0})
    assert out.trail == ["decide", "b"]
    assert out.n == 3


def test_command_goto_list_end_and_send() -> None:
    g = StateGraph(State)
    g.add_node("b", mark("b"))
    g.add_node("w", lambda x: {"results": [x]})
    g.add_node(
        "a",
        lambda s: Command(goto=["b", Send("w", 7), Send("w", 8)]),
        destinations=["b", "w"],
    )
    g.add_node("stop", lambda s: Command(goto=END), destinations=[END])
    g.add_edge(START, "a").add_edge(START, "stop")
    g.add_edge("b", END).add_edge("w", END)
    out = g.compile().invoke({})
    assert out.trail == ["b"]
    assert out.results == [7, 8]


def test_command_goto_unknown_node_fails_naming_the_node() -> None:
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto="nowhere"), destinations=[END])
    g.add_edge(START, "a")
    with pytest.raises(GraphValidationError, match="nowhere") as info:
        g.compile().invoke({})
    assert info.value.node == "a"


def test_command_alongside_a_static_edge_runs_both() -> None:
    g = StateGraph(State)
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_node("a", lambda s: Command(goto="c"), destinations=["c"])
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END).add_edge("c", END)
    assert g.compile().invoke({}).trail == ["b", "c"]


# ------------------------------------------------------------------ Send


def test_send_fan_out_collects_every_result_in_send_order() -> None:
    n = 50
    received: list[Any] = []
    lock = threading.Lock()

    def worker(arg: dict[str, int]) -> dict[str, Any]:
        with lock:
            received.append(arg)
        return {"results": [arg["i"] * 2]}

    g = StateGraph(State)
    g.add_node("worker", worker)
    g.add_node("collect", lambda s: {"trail": [f"collected {len(s.results)}"]})
    g.add_conditional_edges(START, lambda s: [Send("worker", {"i": i}) for i in range(n)])
    g.add_edge("worker", "collect")
    g.add_edge("collect", END)
    out = g.compile().invoke({})
    assert out.results == [i * 2 for i in range(n)]
    assert out.trail == [f"collected {n}"]  # collect ran once, after every worker
    assert sorted(a["i"] for a in received) == list(range(n))
    assert all(isinstance(a, dict) and set(a) == {"i"} for a in received)


def test_send_fan_out_async_workers_run_concurrently() -> None:
    n = 50

    async def main() -> Any:
        arrived = 0
        everyone = asyncio.Event()

        async def worker(i: int) -> dict[str, Any]:
            nonlocal arrived
            arrived += 1
            if arrived == n:
                everyone.set()
            await asyncio.wait_for(everyone.wait(), TIMEOUT)
            return {"results": [i]}

        g = StateGraph(State)
        g.add_node("a", mark("a"))
        g.add_node("worker", worker)
        g.add_edge(START, "a")
        g.add_conditional_edges("a", lambda s: [Send("worker", i) for i in range(n)], ["worker"])
        g.add_edge("worker", END)
        return await g.compile().ainvoke({})

    out = asyncio.run(main())
    assert out.results == list(range(n))


def test_send_mixed_with_names_from_a_branch() -> None:
    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_node("w", lambda arg: {"results": [arg]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: ["b", Send("w", 1), Send("w", 2)], ["b", "w"])
    g.add_edge("b", END).add_edge("w", END)
    out = g.compile().invoke({})
    assert out.trail == ["a", "b"]
    assert out.results == [1, 2]


def test_send_to_unknown_node_names_the_source() -> None:
    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: [Send("ghost", 1)])
    with pytest.raises(GraphValidationError, match="ghost") as info:
        g.compile().invoke({})
    assert info.value.node == "a"


# ------------------------------------------------------------------ joins


def test_join_waits_for_all_sources_in_the_same_step() -> None:
    seen: list[list[str]] = []

    def c(state: State) -> dict[str, Any]:
        seen.append(list(state.trail))
        return {"trail": ["c"]}

    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_node("c", c)
    g.add_edge(START, "a").add_edge(START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", END)
    parts = list(g.compile().stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [(1, "a"), (1, "b"), (2, "c")]
    assert seen == [["a", "b"]]


def test_join_waits_for_sources_finishing_in_different_steps() -> None:
    seen: list[list[str]] = []

    def c(state: State) -> dict[str, Any]:
        seen.append(list(state.trail))
        return {"trail": ["c"]}

    g = StateGraph(State)
    for name in ("a", "x", "y", "b"):
        g.add_node(name, mark(name))
    g.add_node("c", c)
    g.add_edge(START, "a").add_edge(START, "x")
    g.add_edge("x", "y").add_edge("y", "b")  # b finishes two steps after a
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", END)
    app = g.compile()
    parts = list(app.stream({}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [
        (1, "a"),
        (1, "x"),
        (2, "y"),
        (3, "b"),
        (4, "c"),
    ]
    assert seen == [["a", "x", "y", "b"]]
    assert app.invoke({}).trail == ["a", "x", "y", "b", "c"]


def test_join_fires_again_each_time_all_sources_finished() -> None:
    g = StateGraph(State)
    g.add_node("a", lambda s: {"trail": ["a"], "n": s.n + 1})
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_edge(START, "a").add_edge(START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_conditional_edges("c", lambda s: ["a", "b"] if s.n < 2 else END, ["a", "b", END])
    out = g.compile().invoke({})
    assert out.trail == ["a", "b", "c", "a", "b", "c"]


def test_join_does_not_fire_if_a_source_never_runs() -> None:
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: END, ["b", END])
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", END)
    assert g.compile().invoke({}).trail == ["a"]


def test_branch_returning_none_names_the_source() -> None:
    with pytest.raises(GraphValidationError, match="None") as info:
        routed(lambda s: None).invoke({})
    assert info.value.node == "a"
