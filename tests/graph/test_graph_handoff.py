"""`Command(graph=Command.PARENT)`: a node inside a subgraph hands off to the parent's nodes.

The subgraph stops; its node in the parent writes the command's update
(checked against the parent's schema) and goes to its goto, besides the
node's own edges, as in LangGraph. A graph that runs on its own has no
parent to hand off to: a clear error.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from flowgraph import (
    START,
    AIMessage,
    Command,
    HumanMessage,
    InvalidUpdateError,
    MessagesState,
    Send,
    StateGraph,
)
from flowgraph.checkpoint import MemoryCheckpointer


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def write(name: str) -> Any:
    return lambda state: {"trail": [name]}


def agent_graph(handoff: Any) -> Any:
    """A subgraph: `think` writes, then `decide` returns `handoff(state)`."""
    sub = StateGraph(Trail)
    sub.add_node("think", write("think"))
    sub.add_node("decide", handoff)
    sub.add_edge(START, "think")
    sub.add_edge("think", "decide")
    return sub.compile()


def parent_with(sub: Any, **kw: Any) -> Any:
    parent = StateGraph(Trail)
    parent.add_node("alice", sub, destinations=["bob"])
    parent.add_node("bob", write("bob"))
    parent.add_node("after", write("after"))
    parent.add_edge(START, "alice")
    parent.add_edge("alice", "after")
    return parent.compile(**kw)


def test_a_subgraph_node_hands_off_to_a_parent_node() -> None:
    def decide(state: Trail) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="bob", update={"trail": ["handoff"]})

    out = parent_with(agent_graph(decide)).invoke({"trail": ["in"]})
    # only the command's update reaches the parent (not "think"), then both the
    # subgraph node's edge and the command's goto run, as in LangGraph
    assert out["trail"] == ["in", "handoff", "after", "bob"]


def test_a_handoff_with_sends_and_pairs_of_updates() -> None:
    def decide(state: Trail) -> Command[Any]:
        return Command(
            graph=Command.PARENT,
            goto=[Send("bob", {"trail": ["sent"]})],
            update=[("trail", ["one"]), ("trail", ["two"])],
        )

    out = parent_with(agent_graph(decide)).invoke({"trail": []})
    assert out["trail"] == ["one", "two", "after", "bob"]


def test_a_checkpointed_parent_records_the_handoff_as_the_subgraph_node_step() -> None:
    def decide(state: Trail) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="bob", update={"trail": ["handoff"]})

    app = parent_with(agent_graph(decide), checkpointer=MemoryCheckpointer())
    app.invoke({"trail": []}, thread_id="t")
    steps = [(s.step, s.metadata.get("nodes"), s.next) for s in app.get_state_history("t")]
    assert steps == [
        (2, ["after", "bob"], ()),
        (1, ["alice"], ("after", "bob")),
        (0, ["__start__"], ("alice",)),
        (-1, None, ("__start__",)),  # the checkpoint before the input: no step ran into it
    ]


def test_messages_of_a_handoff_merge_by_id_in_the_parent() -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("let me ask billing", id="a1")]}

    def hand(state: MessagesState) -> Command[Any]:
        # LangGraph's docs pass the subgraph's whole history up; ids keep it from doubling
        return Command(graph=Command.PARENT, goto="billing", update={"messages": state.messages})

    sub = StateGraph(MessagesState)
    sub.add_node("ask", ask)
    sub.add_node("hand", hand)
    sub.add_edge(START, "ask")
    sub.add_edge("ask", "hand")
    parent = StateGraph(MessagesState)
    parent.add_node("support", sub.compile(), destinations=["billing"])
    parent.add_node("billing", lambda state: {"messages": [AIMessage("billing here")]})
    parent.add_edge(START, "support")
    out = parent.compile().invoke({"messages": [HumanMessage("refund?", id="h1")]})
    assert [m.text for m in out.messages] == ["refund?", "let me ask billing", "billing here"]


def test_a_handoff_from_a_graph_without_a_parent_is_an_error() -> None:
    def decide(state: Trail) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="bob", update={"trail": ["x"]})

    g = StateGraph(Trail)
    g.add_node("decide", decide, destinations=["bob"])
    g.add_node("bob", write("bob"))
    g.add_edge(START, "decide")
    with pytest.raises(InvalidUpdateError, match="runs on its own") as info:
        g.compile().invoke({"trail": []})
    assert info.value.node == "decide"


def test_an_unknown_graph_target_is_an_error() -> None:
    g = StateGraph(Trail)
    g.add_node("decide", lambda state: Command(graph="elsewhere"))
    g.add_edge(START, "decide")
    with pytest.raises(InvalidUpdateError, match=r"graph is None \(this graph\) or Command.PARENT"):
        g.compile().invoke({"trail": []})


def test_an_update_that_is_neither_a_dict_nor_pairs_is_an_error() -> None:
    g = StateGraph(Trail)
    g.add_node("bad", lambda state: Command(update=["not", "pairs"]))
    g.add_edge(START, "bad")
    with pytest.raises(InvalidUpdateError, match="a list of \\(field, value\\) pairs"):
        g.compile().invoke({"trail": []})
