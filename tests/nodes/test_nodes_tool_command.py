"""A tool that returns `Command(update=..., goto=...)`: ToolNode applies it.

Until issue 18 the Command was written into the ToolMessage as JSON and
the state stayed as it was; now its update is merged (after the earlier
calls' messages, in call order), the run goes to its goto, and a handoff
(`graph=Command.PARENT`) from an agent used as a subgraph reaches the
parent's nodes.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from flowgraph import (
    START,
    AIMessage,
    Command,
    HumanMessage,
    InjectedState,
    InjectedToolCallId,
    InvalidUpdateError,
    MessagesState,
    ScriptedChatModel,
    StateGraph,
    ToolCall,
    ToolMessage,
    ToolNode,
    create_react_agent,
    tool,
)


class Profile(MessagesState):
    user: str = ""
    visits: int = 0


@tool
def set_user(name: str, call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Remember the user's name."""
    reply = ToolMessage(f"hello {name}", tool_call_id=call_id)
    return Command(update={"user": name, "messages": [reply]}, goto="greet")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def forgetful(name: str) -> Command[Any]:
    """A tool whose Command does not answer its call."""
    return Command(update={"user": name})


def calls(*items: tuple[str, str, dict[str, Any]]) -> AIMessage:
    return AIMessage("", tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in items])


def test_tool_node_alone_returns_one_command_with_every_answer_in_call_order() -> None:
    node = ToolNode([set_user, add])
    ai = calls(("c1", "add", {"a": 1, "b": 2}), ("c2", "set_user", {"name": "ada"}))
    out = node.invoke({"messages": [HumanMessage("hi"), ai]})
    assert isinstance(out, Command)
    assert out.goto == ["greet"]
    assert [(k, [m.text for m in v] if k == "messages" else v) for k, v in out.update] == [
        ("messages", ["3"]),
        ("user", "ada"),
        ("messages", ["hello ada"]),
    ]
    # the call's ToolMessage is named after its tool, as LangGraph does
    assert out.update[2][1][0].name == "set_user"


def test_in_a_graph_the_update_is_applied_and_the_goto_followed() -> None:
    g = StateGraph(Profile)
    g.add_node("tools", ToolNode([set_user, add]), destinations=["greet"])
    g.add_node("greet", lambda state: {"messages": [AIMessage(f"Welcome, {state.user}!")]})
    g.add_edge(START, "tools")
    ai = calls(("c1", "add", {"a": 1, "b": 2}), ("c2", "set_user", {"name": "ada"}))
    out = g.compile().invoke({"messages": [HumanMessage("I am Ada"), ai]})
    assert out.user == "ada"
    assert [(m.type, m.text) for m in out.messages[2:]] == [
        ("tool", "3"),
        ("tool", "hello ada"),
        ("ai", "Welcome, ada!"),
    ]


def test_a_react_agent_tool_updates_the_state_and_the_loop_goes_on() -> None:
    @tool
    def count_visit(
        state: Annotated[Profile, InjectedState], call_id: Annotated[str, InjectedToolCallId]
    ) -> Command[Any]:
        """Count this visit."""
        reply = ToolMessage(f"visit {state.visits + 1}", tool_call_id=call_id)
        return Command(update={"visits": state.visits + 1, "messages": [reply]})

    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "count_visit", "args": {}}]}, "Thanks for visiting."]
    )
    agent = create_react_agent(model, [count_visit], state_schema=Profile)
    out = agent.invoke({"messages": [HumanMessage("hi")], "visits": 4})
    assert out.visits == 5
    assert [m.text for m in out.messages[2:]] == ["visit 5", "Thanks for visiting."]


def test_a_command_that_leaves_its_call_unanswered_is_an_error_naming_the_fix() -> None:
    node = ToolNode([forgetful])
    with pytest.raises(InvalidUpdateError, match="does not answer its call 'c1'") as info:
        node.invoke({"messages": [calls(("c1", "forgetful", {"name": "x"}))]})
    assert "InjectedToolCallId" in str(info.value)


def test_a_handoff_tool_in_an_agent_subgraph_goes_to_the_parent() -> None:
    @tool
    def transfer_to_billing(
        state: Annotated[MessagesState, InjectedState],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> Command[Any]:
        """Hand the conversation to the billing agent."""
        done = ToolMessage("transferred to billing", tool_call_id=call_id)
        return Command(
            graph=Command.PARENT,
            goto="billing",
            update={"messages": [*state.messages, done]},
        )

    model = ScriptedChatModel([{"tool_calls": [{"name": "transfer_to_billing", "args": {}}]}])
    support = create_react_agent(model, [transfer_to_billing])
    parent = StateGraph(MessagesState)
    parent.add_node("support", support, destinations=["billing"])
    parent.add_node("billing", lambda state: {"messages": [AIMessage("Billing: how can I help?")]})
    parent.add_edge(START, "support")
    out = parent.compile().invoke({"messages": [HumanMessage("refund please")]})
    assert [(m.type, m.text) for m in out.messages] == [
        ("human", "refund please"),
        ("ai", ""),
        ("tool", "transferred to billing"),
        ("ai", "Billing: how can I help?"),
    ]
    assert out.messages[1].tool_calls[0].name == "transfer_to_billing"
