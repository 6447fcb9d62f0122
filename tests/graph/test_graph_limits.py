"""recursion_limit and Budget: runs that would go on too long or spend too much stop."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from flowgraph import END, START, AIMessage, Budget, MessagesState, StateGraph
from flowgraph._context import charge_model_call, charge_tool_calls, record_tokens
from flowgraph.errors import BudgetExceededError, GraphRecursionError

try:  # the public path of DESIGN §6, once the package re-exports it
    from flowgraph.checkpoint import MemoryCheckpointer  # type: ignore[attr-defined]
except ImportError:
    from flowgraph.checkpoint.memory import MemoryCheckpointer


class State(MessagesState):
    count: int = 0
    goal: int = 1_000_000


def loop_graph(**compile_kwargs: Any) -> Any:
    """`tick` runs again and again until count reaches goal."""
    g = StateGraph(State)
    g.add_node("tick", lambda s: {"count": s.count + 1})
    g.add_edge(START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s.count < s.goal else END, ["tick", END])
    return g.compile(**compile_kwargs)


def chain_graph(length: int) -> Any:
    g = StateGraph(State)
    names = [f"n{i}" for i in range(length)]
    for name in names:
        g.add_node(name, lambda s: {"count": s.count + 1})
    g.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], END)
    return g.compile()


# ------------------------------------------------------------------ recursion_limit


def test_default_recursion_limit_is_100() -> None:
    assert loop_graph().invoke({"goal": 100}).count == 100
    with pytest.raises(GraphRecursionError) as info:
        loop_graph().invoke({"goal": 101})
    assert info.value.limit == 100


def test_recursion_error_names_limit_next_nodes_and_the_fix() -> None:
    with pytest.raises(GraphRecursionError) as info:
        loop_graph().invoke({}, recursion_limit=7)
    message = str(info.value)
    assert "7" in message
    assert "tick" in message
    assert "recursion_limit" in message
    assert info.value.limit == 7
    assert info.value.nodes == ("tick",)
    assert isinstance(info.value, RecursionError)


def test_custom_recursion_limit() -> None:
    assert loop_graph().invoke({"goal": 250}, recursion_limit=250).count == 250


@pytest.mark.parametrize("steps", [1, 3, 12])
def test_graph_needing_exactly_n_steps(steps: int) -> None:
    app = chain_graph(steps)
    assert app.invoke({}, recursion_limit=steps).count == steps
    with pytest.raises(GraphRecursionError) as info:
        app.invoke({}, recursion_limit=steps - 1)
    assert info.value.nodes == (f"n{steps - 1}",)


def test_recursion_limit_counts_steps_not_tasks() -> None:
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s: None)
        g.add_edge(START, name)
        g.add_edge(name, END)
    assert g.compile().invoke({}, recursion_limit=1).count == 0


def test_recursion_limit_applies_to_streams() -> None:
    with pytest.raises(GraphRecursionError):
        list(loop_graph().stream({}, recursion_limit=5))

    async def main() -> None:
        async for _ in loop_graph().astream({}, recursion_limit=5):
            pass

    with pytest.raises(GraphRecursionError):
        asyncio.run(main())


# ------------------------------------------------------------------ Budget


def model_loop(calls: list[int], *, tokens: tuple[int, int] = (0, 0), **compile_kwargs: Any) -> Any:
    """A `model` node that charges a call as an adapter would, until count reaches goal."""

    def model(state: State) -> dict[str, Any]:
        charge_model_call()
        calls.append(state.count + 1)
        record_tokens(*tokens)
        return {"count": state.count + 1, "messages": [AIMessage(f"reply {state.count + 1}")]}

    g = StateGraph(State)
    g.add_node("model", model)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", lambda s: "model" if s.count < s.goal else END)
    return g.compile(**compile_kwargs)


def test_budget_on_compile_stops_the_third_model_call() -> None:
    calls: list[int] = []
    app = model_loop(calls, budget=Budget(max_model_calls=2))
    with pytest.raises(BudgetExceededError) as info:
        app.invoke({"goal": 10})
    assert calls == [1, 2]
    assert (info.value.limit_name, info.value.limit, info.value.used) == ("max_model_calls", 2, 2)
    assert "max_model_calls" in str(info.value)
    assert any("'model'" in note for note in info.value.__notes__)


def test_budget_allows_exactly_the_limit() -> None:
    calls: list[int] = []
    out = model_loop(calls, budget=Budget(max_model_calls=2)).invoke({"goal": 2})
    assert out.count == 2


def test_per_run_budget_overrides_compiles() -> None:
    calls: list[int] = []
    app = model_loop(calls, budget=Budget(max_model_calls=1))
    assert app.invoke({"goal": 3}, budget=Budget(max_model_calls=3)).count == 3
    calls.clear()
    with pytest.raises(BudgetExceededError) as info:
        app.invoke({"goal": 3})
    assert info.value.limit == 1
    assert calls == [1]
    with pytest.raises(BudgetExceededError) as info:
        asyncio.run(app.ainvoke({"goal": 9}, budget=Budget(max_model_calls=4)))
    assert info.value.limit == 4


def test_budget_is_per_run() -> None:
    app = model_loop([], budget=Budget(max_model_calls=3))
    for _ in range(3):
        assert app.invoke({"goal": 3}).count == 3

    async def many() -> list[Any]:
        return await asyncio.gather(*(app.ainvoke({"goal": 3}) for _ in range(10)))

    assert [o.count for o in asyncio.run(many())] == [3] * 10


def test_no_budget_means_no_limit() -> None:
    assert model_loop([]).invoke({"goal": 50}).count == 50


def test_max_tool_calls() -> None:
    ran: list[int] = []

    def tools(state: State) -> dict[str, Any]:
        charge_tool_calls(2)
        ran.append(state.count)
        return {"count": state.count + 1}

    g = StateGraph(State)
    g.add_node("tools", tools)
    g.add_edge(START, "tools")
    g.add_conditional_edges("tools", lambda s: "tools" if s.count < s.goal else END)
    app = g.compile(budget=Budget(max_tool_calls=5))
    with pytest.raises(BudgetExceededError) as info:
        app.invoke({"goal": 10})
    assert ran == [0, 1]
    assert (info.value.limit_name, info.value.limit, info.value.used) == ("max_tool_calls", 5, 4)
    assert app.invoke({"goal": 2}).count == 2


def test_max_tokens_refuses_the_call_once_tokens_reach_the_limit() -> None:
    calls: list[int] = []
    app = model_loop(calls, tokens=(20, 30), budget=Budget(max_tokens=100))
    with pytest.raises(BudgetExceededError) as info:
        app.invoke({"goal": 10})
    assert calls == [1, 2]  # 0 and 50 tokens were under 100; at 100 the third is refused
    assert (info.value.limit_name, info.value.limit, info.value.used) == ("max_tokens", 100, 100)


def test_budget_counts_calls_of_parallel_nodes_together() -> None:
    def model(state: State) -> None:
        charge_model_call()

    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, model)
        g.add_edge(START, name)
        g.add_edge(name, END)
    app = g.compile()
    app.invoke({}, budget=Budget(max_model_calls=3))
    with pytest.raises(BudgetExceededError):
        app.invoke({}, budget=Budget(max_model_calls=2))


def test_charging_outside_a_run_does_nothing() -> None:
    charge_model_call()
    charge_tool_calls(1000)
    record_tokens(10**9, 10**9)


def test_budget_stops_after_the_last_complete_step_and_stays_resumable() -> None:
    calls: list[int] = []
    app = model_loop(calls, checkpointer=MemoryCheckpointer(), budget=Budget(max_model_calls=2))
    with pytest.raises(BudgetExceededError):
        app.invoke({"goal": 4}, thread_id="t")
    snapshot = app.get_state("t")
    assert snapshot.values.count == 2
    assert snapshot.next == ("model",)
    out = app.invoke(None, thread_id="t", budget=Budget(max_model_calls=10))
    assert out.count == 4
    assert [m.text for m in out.messages] == [f"reply {i}" for i in (1, 2, 3, 4)]
