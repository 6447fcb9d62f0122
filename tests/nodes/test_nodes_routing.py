"""tools_condition and Router: as conditional-edge paths and as nodes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    InvalidToolCall,
    MessagesState,
    StateGraph,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from flowgraph.nodes import Router, tools_condition

# ------------------------------------------------------------------ tools_condition


def test_tools_when_the_last_ai_message_calls_tools() -> None:
    ai = AIMessage("", tool_calls=[ToolCall(id="c", name="t", args={})])
    assert tools_condition({"messages": [HumanMessage("hi"), ai]}) == "tools"
    assert tools_condition(MessagesState(messages=[ai])) == "tools"
    assert tools_condition([ai]) == "tools"


def test_end_otherwise() -> None:
    assert tools_condition({"messages": [HumanMessage("hi"), AIMessage("hello")]}) == END
    assert tools_condition({"messages": [HumanMessage("hi")]}) == END
    answered = [
        AIMessage("", tool_calls=[ToolCall(id="c", name="t", args={})]),
        ToolMessage("r", tool_call_id="c"),
    ]
    assert tools_condition({"messages": answered}) == END


def test_invalid_calls_go_to_the_tools_to_be_answered() -> None:
    ai = AIMessage("", invalid_tool_calls=[InvalidToolCall(id="c", name="t", args="{")])
    assert tools_condition({"messages": [ai]}) == "tools"
    nameless = AIMessage("", invalid_tool_calls=[InvalidToolCall(id=None, args="{")])
    assert tools_condition({"messages": [nameless]}) == END


def test_no_messages_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="tools_condition found no messages in state field"):
        tools_condition({"messages": []})
    with pytest.raises(ValueError, match=r"reads state field 'messages'.*the state has: other"):
        tools_condition({"other": 1})


def test_tools_condition_declares_its_targets_for_diagrams() -> None:
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: None)
    g.add_node("tools", lambda s: None)
    g.add_edge(START, "agent").add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    edges = {(a, b) for a, b, d in g.graph.edges(data=True) if d["kind"] == "conditional"}
    assert edges == {("agent", "tools"), ("agent", END)}
    g.compile()  # every node reachable, every node has a way out


# ------------------------------------------------------------------ Router


def last_text(state: Any) -> str:
    return str(state.messages[-1].text).lower()


ROUTES = {
    "reviewer": lambda s: "review" in last_text(s),
    "billing": lambda s: "invoice" in last_text(s),
}


def state_saying(text: str) -> MessagesState:
    return MessagesState(messages=[HumanMessage(text)])


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("Please review my diff", "reviewer"),
        ("Where is my invoice?", "billing"),
        ("review the invoice", "reviewer"),  # checked in order: first true wins
        ("hello", "chat"),
    ],
)
def test_first_true_predicate_wins_else_default(text: str, route: str) -> None:
    router = Router(ROUTES, default="chat")
    assert router.route(state_saying(text)) == route
    assert router(state_saying(text)) == route


def test_destinations_and_repr() -> None:
    router = Router(ROUTES, default="chat")
    assert router.destinations == ("reviewer", "billing", "chat")
    assert Router(ROUTES, default="billing").destinations == ("reviewer", "billing")
    assert repr(router) == "Router([reviewer, billing, chat], default='chat')"
    assert router.node_kind == "router"


def test_no_match_without_default_lists_the_routes() -> None:
    with pytest.raises(ValueError, match=r"No route matched.*routes: reviewer, billing"):
        Router(ROUTES).route(state_saying("hello"))


def test_resolve_an_outside_choice() -> None:
    router = Router(ROUTES, default="chat")
    assert router.resolve("billing") == "billing"
    assert router.resolve("chat") == "chat"
    assert router.resolve("weather") == "chat"
    assert router.resolve(None) == "chat"
    with pytest.raises(ValueError, match=r"'weather' is not a route.*one of: reviewer, billing"):
        Router(ROUTES).resolve("weather")


def test_predicate_errors_name_the_route() -> None:
    router = Router({"boom": lambda s: s.messages[5]}, default="chat")
    with pytest.raises(IndexError) as caught:
        router.route(state_saying("x"))
    assert "(in the predicate of route 'boom' of a Router)" in caught.value.__notes__


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="needs at least one route or a default"):
        Router({})
    with pytest.raises(TypeError, match="Route 'x' must map to a predicate"):
        Router({"x": "not callable"})  # type: ignore[dict-item]


def answer_as(name: str) -> Any:
    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{name} here", name=name)]}

    return node


def routed_graph(router: Router) -> Any:
    g = StateGraph(MessagesState)
    for name in ("reviewer", "billing", "chat"):
        g.add_node(name, answer_as(name))
        g.add_edge(name, END)
    g.add_conditional_edges(START, router, router.destinations)
    return g.compile()


@pytest.mark.parametrize(("text", "speaker"), [("review this", "reviewer"), ("hi", "chat")])
def test_router_as_a_conditional_edge(text: str, speaker: str) -> None:
    app = routed_graph(Router(ROUTES, default="chat"))
    out = app.invoke({"messages": [HumanMessage(text)]})
    assert out.messages[-1].name == speaker
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage(text)]}))
    assert out.messages[-1].name == speaker


def test_router_destinations_reach_the_diagram() -> None:
    app = routed_graph(Router(ROUTES, default="chat"))
    edges = {(a, b) for a, b, d in app.graph.edges(data=True) if d["kind"] == "conditional"}
    assert edges == {(START, "reviewer"), (START, "billing"), (START, "chat")}


class RoutedState(MessagesState):
    route: str = ""


def test_router_as_a_node_writes_the_route() -> None:
    router = Router(ROUTES, default="chat", key="route")
    assert router(state_saying("hi")) == {"route": "chat"}
    g = StateGraph(RoutedState)
    g.add_node("triage", router)
    for name in ("reviewer", "billing", "chat"):
        g.add_node(name, answer_as(name))
        g.add_edge(name, END)
    g.add_edge(START, "triage")
    g.add_conditional_edges("triage", lambda s: s.route, router.destinations)
    app = g.compile()
    assert app.graph.nodes["triage"]["kind"] == "router"
    out = app.invoke({"messages": [HumanMessage("my invoice is wrong")]})
    assert (out.route, out.messages[-1].name) == ("billing", "billing")
    assert repr(router) == "Router([reviewer, billing, chat], default='chat', key='route')"


# ------------------------------------------------------------------ a model's choice


def model_router(*replies: Any, default: str | None = "chat", **kwargs: Any) -> Any:
    from flowgraph.models import ScriptedChatModel

    model = ScriptedChatModel(list(replies))
    descriptions = {"reviewer": "Strict code review.", "billing": "Invoices and payments."}
    return model, Router.from_model(model, descriptions, default, **kwargs)


def test_the_model_chooses_a_route() -> None:
    model, router = model_router('{"route": "billing"}', instructions="You triage support.")
    state = MessagesState(
        messages=[SystemMessage("be nice", id="s"), HumanMessage("my invoice?", id="h")]
    )
    assert router.route(state) == "billing"
    (request,) = model.requests
    assert [m.type for m in request.messages] == ["system", "human"]
    assert request.messages[0].content == (
        "You triage support.\n\n"
        "Decide which route the conversation should take next. The routes are:\n"
        "- reviewer: Strict code review.\n"
        "- billing: Invoices and payments.\n"
        'Answer with a JSON object {"route": "<one of: reviewer, billing>"} and nothing else.'
    )
    assert request.options.response_format is router.choice_model
    schema = router.choice_model.model_json_schema()
    assert schema["properties"]["route"]["enum"] == ["reviewer", "billing"]
    assert router.destinations == ("reviewer", "billing", "chat")
    assert router.node_kind == "router"


@pytest.mark.parametrize(
    ("reply", "route"),
    [
        ('{"route": "reviewer"}', "reviewer"),
        ('{"route": "weather"}', "chat"),  # not a route: the default
        ("billing", "billing"),  # a bare name, not JSON, is read as the choice
        ("I think billing", "chat"),
        ('{"other": 1}', "chat"),
    ],
)
def test_unknown_choices_go_to_the_default(reply: str, route: str) -> None:
    _, router = model_router(reply)
    assert router.route(state_saying("x")) == route


def test_unknown_choice_without_default_lists_the_routes() -> None:
    _, router = model_router('{"route": "weather"}', default=None)
    with pytest.raises(ValueError, match=r"'weather' is not a route.*one of: reviewer, billing"):
        router.route(state_saying("x"))


def test_model_router_in_graphs() -> None:
    model, router = model_router('{"route": "reviewer"}', '{"route": "nothing"}')
    app = routed_graph(router)
    assert app.invoke({"messages": [HumanMessage("look at this")]}).messages[-1].name == "reviewer"
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("hello")]}))
    assert out.messages[-1].name == "chat"
    assert model.calls == 2


def test_model_router_as_a_node() -> None:
    _, router = model_router('{"route": "billing"}', key="route")
    g = StateGraph(RoutedState)
    g.add_node("triage", router)
    for name in ("reviewer", "billing", "chat"):
        g.add_node(name, answer_as(name))
        g.add_edge(name, END)
    g.add_edge(START, "triage")
    g.add_conditional_edges("triage", lambda s: s.route, router.destinations)
    app = g.compile()
    assert app.graph.nodes["triage"]["kind"] == "router"
    out = app.invoke({"messages": [HumanMessage("refund please")]})
    assert (out.route, out.messages[-1].name) == ("billing", "billing")
    assert repr(router) == "ModelRouter([reviewer, billing, chat], default='chat', key='route')"


def test_model_router_construction_errors() -> None:
    from flowgraph.models import ScriptedChatModel

    with pytest.raises(ValueError, match="at least one route"):
        Router.from_model(ScriptedChatModel([]), [])
    with pytest.raises(TypeError, match="list of names"):
        Router.from_model(ScriptedChatModel([]), "reviewer")
    names_only = Router.from_model(ScriptedChatModel([]), ["a", "b"], "a")
    assert "- a\n- b\n" in names_only.prompt
