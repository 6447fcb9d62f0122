"""add_messages: merging a 1,000-message update into a 10,000-message history.

The update is what a long run keeps doing: 500 messages that replace
existing ones by id (a retried step, an edited message) and 500 new ones.
Both libraries get equivalent messages with the same ids, in the same order,
and keep every result alive until the clock stops (see `median_seconds`).

Two figures for flowgraph:

- hot: `left` is the `MessageList` a previous `add_messages` returned, as in
  a real run, where the state's list always comes from the reducer;
- cold: `left` is a plain list, as when a caller hands in a list of its own.

LangGraph's reducer returns a plain list, so its `left` is the same in both.

`merge_into_state` merges the same update into the same history held in a
graph's state (flowgraph's `StateAdapter.apply`, LangGraph's state channel),
and sets it beside the floor: a bare loop over the update that does one dict
lookup and one list store per message.
"""

from __future__ import annotations

from typing import Any

from benchmarks._harness import Figure, has_langgraph, median_seconds, scenario
from flowgraph import AIMessage, HumanMessage, ToolMessage, add_messages

HISTORY = 10_000
REPLACED = 500
NEW = 500
TARGET = 20


def _history_specs() -> list[tuple[str, str, str]]:
    """(kind, id, text) for the history: user, AI, tool result, AI, ... in turn."""
    kinds = ("human", "ai", "tool", "ai")
    return [(kinds[i % 4], f"m-{i}", f"message number {i}") for i in range(HISTORY)]


def _update_specs() -> list[tuple[str, str, str]]:
    """500 replacements spread over the history, interleaved with 500 new messages."""
    specs: list[tuple[str, str, str]] = []
    stride = HISTORY // REPLACED
    for i in range(max(REPLACED, NEW)):
        if i < REPLACED:
            old = i * stride
            kind = ("human", "ai", "tool", "ai")[old % 4]
            specs.append((kind, f"m-{old}", f"edited message {old}"))
        if i < NEW:
            specs.append(("ai", f"new-{i}", f"new message {i}"))
    return specs


def _ours(specs: list[tuple[str, str, str]]) -> list[Any]:
    messages: list[Any] = []
    for kind, message_id, text in specs:
        if kind == "human":
            messages.append(HumanMessage(text, id=message_id))
        elif kind == "ai":
            messages.append(AIMessage(text, id=message_id))
        else:
            messages.append(ToolMessage(text, id=message_id, tool_call_id=f"call-{message_id}"))
    return messages


def _theirs(specs: list[tuple[str, str, str]]) -> list[Any]:
    from langchain_core import messages as lc

    built: list[Any] = []
    for kind, message_id, text in specs:
        if kind == "human":
            built.append(lc.HumanMessage(text, id=message_id))
        elif kind == "ai":
            built.append(lc.AIMessage(text, id=message_id))
        else:
            built.append(lc.ToolMessage(text, id=message_id, tool_call_id=f"call-{message_id}"))
    return built


def _check_same(ours: list[Any], theirs: Any) -> None:
    """Both sides must compute the same merge, or the ratio compares nothing."""
    if [(m.id, m.text) for m in ours] != [(m.id, m.text) for m in theirs]:
        raise AssertionError("flowgraph and LangGraph merged the update differently")


@scenario("add_messages")
def bench_add_messages() -> list[Figure]:
    """10,000 + 1,000 (500 replacing, 500 new): hot (MessageList) and cold (list) left."""
    history, update = _ours(_history_specs()), _ours(_update_specs())
    # The hot left is consumed by the merge that extends it (it hands its id
    # positions over), so every run gets a freshly merged one, untimed; LangGraph
    # gets the same treatment, so both start from the same cache state.
    state: dict[str, Any] = {}

    def fresh_left() -> None:
        state["left"] = add_messages([], history)

    hot = median_seconds(lambda: add_messages(state["left"], update), setup=fresh_left, repeat=50)
    cold = median_seconds(lambda: add_messages(history, update), repeat=50)

    theirs_hot = theirs_cold = None
    if has_langgraph():
        from langgraph.graph.message import add_messages as lg_add_messages

        lg_history, lg_update = _theirs(_history_specs()), _theirs(_update_specs())
        lg_left: Any = lg_add_messages([], lg_history)
        _check_same(add_messages(history, update), lg_add_messages(lg_left, lg_update))

        def lg_fresh_left() -> None:
            state["lg_left"] = lg_add_messages([], lg_history)

        theirs_hot = median_seconds(
            lambda: lg_add_messages(state["lg_left"], lg_update), setup=lg_fresh_left, repeat=50
        )
        theirs_cold = median_seconds(lambda: lg_add_messages(lg_left, lg_update), repeat=50)

    return [
        Figure("hot: left from add_messages", "ms", hot * 1e3, _ms(theirs_hot), target=TARGET),
        Figure("cold: left a plain list", "ms", cold * 1e3, _ms(theirs_cold), target=TARGET),
    ]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


# -- merge_into_state ---------------------------------------------------------------


def _floor(history: list[Any], update: list[Any]) -> tuple[Any, Any]:
    """The least a merge by id can do: per update message, a dict lookup and a list store.

    Returns (setup, work): `setup` builds the list and its id -> index map
    (untimed), `work` runs the bare loop over the update.
    """
    held: dict[str, Any] = {}

    def setup() -> None:
        held["list"] = list(history)
        held["index"] = {m.id: i for i, m in enumerate(history)}

    def work() -> None:
        merged, index = held["list"], held["index"]
        find = index.get
        for message in update:
            position = find(message.id)
            if position is None:
                index[message.id] = len(merged)
                merged.append(message)
            else:
                merged[position] = message

    return setup, work


@scenario("merge_into_state")
def merge_into_state() -> list[Figure]:
    """1,000 updates merged into a 10,000-message history held in a graph's state.

    flowgraph: the engine's own write path (`StateAdapter.apply`, the field's
    reducer) into the list the previous merge left in the state; the write
    was checked before (untimed: `check_update`, which gives messages their
    ids). LangGraph: its state channel (`BinaryOperatorAggregate` with its
    `add_messages`) holding the same history. The floor row puts our merge
    beside `_floor` (in the *langgraph* column): the issue asks for 1.5x of
    it at most, so target 0.667x.
    """
    from flowgraph import MessagesState
    from flowgraph.graph._core.schema import StateAdapter

    history, update = _ours(_history_specs()), _ours(_update_specs())
    state = StateAdapter(MessagesState)
    checked = state.check_update("edit", {"messages": update})["messages"]
    held: dict[str, Any] = {}

    def fresh_state() -> None:
        values: dict[str, Any] = {}
        state.apply(values, "messages", history)  # the state's list, as a merge leaves it
        held["values"] = values

    def merge() -> None:
        state.apply(held["values"], "messages", checked)

    ours = median_seconds(merge, setup=fresh_state, repeat=100)
    floor_setup, floor_work = _floor(history, update)
    floor = median_seconds(floor_work, setup=floor_setup, repeat=100)
    fresh_state()
    merge()
    if [(m.id, m.text) for m in held["values"]["messages"]] != [
        (m.id, m.text) for m in add_messages(history, update)
    ]:
        raise AssertionError("the state's merge differs from add_messages")

    theirs = None
    if has_langgraph():
        from langgraph.channels.binop import BinaryOperatorAggregate
        from langgraph.graph.message import add_messages as lg_add_messages

        lg_history, lg_update = _theirs(_history_specs()), _theirs(_update_specs())

        def lg_fresh_state() -> None:
            channel = BinaryOperatorAggregate(list, lg_add_messages)
            channel.update([lg_history])
            held["channel"] = channel

        def lg_merge() -> None:
            held["channel"].update([lg_update])

        lg_fresh_state()
        lg_merge()
        _check_same(held["values"]["messages"], held["channel"].get())
        theirs = median_seconds(lg_merge, setup=lg_fresh_state, repeat=50)

    return [
        Figure("1,000 into 10,000 held in state", "µs", ours * 1e6, _us(theirs), target=10),
        Figure("merge vs the floor (bare loop)*", "µs", ours * 1e6, floor * 1e6, target=1 / 1.5),
    ]


def _us(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e6
