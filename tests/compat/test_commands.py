"""Commands the way LangGraph's docs return them (issue 18, item 5).

A tool that returns `Command(update=..., goto=...)` in a `ToolNode` (the
"update state from tools" how-to), and a subgraph node handing off to its
parent's nodes with `Command(graph=Command.PARENT, ...)` (multi-agent
handoffs). Written once in LangGraph's spelling, run with both libraries.
"""

import operator
import warnings
from typing import Annotated, Any

from typing_extensions import TypedDict

from tests.compat._libs import Lib


def texts(messages: Any) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


def test_a_tool_updates_the_state_with_a_command(lib: Lib) -> None:
    class State(lib.MessagesState):
        user_name: str

    @lib.tool
    def lookup_user(
        user_id: str, tool_call_id: Annotated[str, lib.InjectedToolCallId]
    ) -> lib.Command:
        """Look up a user's name."""
        name = {"u1": "Ada"}[user_id]
        return lib.Command(
            update={
                "user_name": name,
                "messages": [lib.ToolMessage("Found the user.", tool_call_id=tool_call_id)],
            },
            goto="greet",
        )

    @lib.tool
    def clock() -> str:
        """Tell the time."""
        return "noon"

    def greet(state: State) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(content=f"Good day, {state['user_name']}!")]}

    ai = lib.AIMessage(
        content="",
        tool_calls=[
            {"id": "c1", "name": "clock", "args": {}, "type": "tool_call"},
            {"id": "c2", "name": "lookup_user", "args": {"user_id": "u1"}, "type": "tool_call"},
        ],
    )
    builder = lib.StateGraph(State)
    # flowgraph checks that every node is reachable: destinations= declares the tool's goto
    extra = {"destinations": ["greet"]} if lib.name == "flowgraph" else {}
    builder.add_node("tools", lib.ToolNode([clock, lookup_user]), **extra)
    builder.add_node("greet", greet)
    builder.add_edge(lib.START, "tools")
    graph = builder.compile()
    out = graph.invoke({"messages": [lib.HumanMessage(content="hi"), ai], "user_name": ""})
    assert out["user_name"] == "Ada"
    assert texts(out["messages"][2:]) == [
        ("tool", "noon"),
        ("tool", "Found the user."),
        ("ai", "Good day, Ada!"),
    ]
    assert [m.name for m in out["messages"][2:4]] == ["clock", "lookup_user"]


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def test_a_subgraph_node_hands_off_to_the_parent_graph(lib: Lib) -> None:
    def think(state: Trail) -> dict[str, Any]:
        return {"trail": ["alice thinks"]}

    def hand_off(state: Trail) -> Any:
        return lib.Command(graph=lib.Command.PARENT, goto="bob", update={"trail": ["to bob"]})

    alice = lib.StateGraph(Trail)
    alice.add_node("think", think)
    alice.add_node("hand_off", hand_off)
    alice.add_edge(lib.START, "think")
    alice.add_edge("think", "hand_off")

    builder = lib.StateGraph(Trail)
    builder.add_node("alice", alice.compile(), destinations=("bob",))
    builder.add_node("bob", lambda state: {"trail": ["bob answers"]})
    builder.add_edge(lib.START, "alice")
    out = builder.compile().invoke({"trail": ["question"]})
    # the subgraph's own writes stay in it; the handoff's update reaches the parent
    assert out == {"trail": ["question", "to bob", "bob answers"]}


def test_a_handoff_tool_in_a_prebuilt_agent(lib: Lib) -> None:
    @lib.tool
    def transfer_to_billing(
        state: Annotated[dict, lib.InjectedState],
        tool_call_id: Annotated[str, lib.InjectedToolCallId],
    ) -> lib.Command:
        """Transfer the user to the billing agent."""
        done = lib.ToolMessage("Transferred to billing.", tool_call_id=tool_call_id)
        return lib.Command(
            goto="billing",
            graph=lib.Command.PARENT,
            update={"messages": [*state["messages"], done]},
        )

    call = {"id": "t1", "name": "transfer_to_billing", "args": {}, "type": "tool_call"}
    model = lib.scripted_model([lib.AIMessage(content="", tool_calls=[call])])
    with warnings.catch_warnings():  # LangGraph 1.x: moved to langchain.agents
        warnings.simplefilter("ignore", DeprecationWarning)
        support = lib.create_react_agent(model, [transfer_to_billing])

    def billing(state: Any) -> dict[str, Any]:
        return {"messages": [lib.AIMessage(content="Billing here, what's the invoice number?")]}

    builder = lib.StateGraph(lib.MessagesState)
    builder.add_node("support", support, destinations=("billing",))
    builder.add_node("billing", billing)
    builder.add_edge(lib.START, "support")
    out = builder.compile().invoke({"messages": [lib.HumanMessage(content="I was charged twice")]})
    assert texts(out["messages"]) == [
        ("human", "I was charged twice"),
        ("ai", ""),
        ("tool", "Transferred to billing."),
        ("ai", "Billing here, what's the invoice number?"),
    ]
