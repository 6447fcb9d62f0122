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
