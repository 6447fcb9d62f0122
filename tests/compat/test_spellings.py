"""LangGraph's spellings that flowgraph takes as LangGraph does (issue 30).

Each program is written once and run on both libraries: `create_react_agent`'s
`prompt=` and interrupts, a positional `config` to a chat model inside a node,
a node reached only through `-> Command[Literal[...]]` (this module uses
`from __future__ import annotations`, so every hint is a string), LangGraph's
`retry_policy=`, a pydantic state's result read as a dict, a TypedDict context,
and a reducer field's empty value before its first write.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from tests.compat._libs import Lib

# LangGraph 1.x: create_react_agent moved to langchain.agents (it still works as it did)
AGENT_MOVED = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _reply(lib: Lib, text: str, calls: list[dict[str, Any]] | None = None) -> Any:
    return lib.AIMessage(content=text, tool_calls=calls or [])


def _agent_run(lib: Lib, prompt: Any) -> tuple[list[str], list[str]]:
    """Run a one-tool agent with `prompt`; the texts of the state and of the model's input."""
    seen: list[list[Any]] = []

    def prompt_of(messages: Any) -> Any:
        seen.append(list(messages))
        return messages

    @lib.tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    model = lib.scripted_model(
        [
            _reply(lib, "", [{"name": "lookup", "args": {"city": "Oslo"}, "id": "c1"}]),
            _reply(lib, "Sunny."),
        ]
    )
    app = lib.create_react_agent(model, [lookup], prompt=prompt(lib, prompt_of))
    question = {"messages": [lib.HumanMessage(content="Weather in Oslo?")]}
    # an async prompt needs an async run in LangGraph (`ainvoke`)
    out = asyncio.run(app.ainvoke(question)) if prompt is _async_function else app.invoke(question)
    return [m.type for m in out["messages"]], [m.type for m in seen[0]] if seen else []


def _text(lib: Lib, record: Any) -> Any:
    return "Be brief."


def _system(lib: Lib, record: Any) -> Any:
    return lib.SystemMessage(content="Be brief.")


def _function(lib: Lib, record: Any) -> Any:
    def prompt(state: Any) -> Any:
        return record([lib.SystemMessage(content="Be brief."), *state["messages"]])

    return prompt


def _async_function(lib: Lib, record: Any) -> Any:
    async def prompt(state: Any) -> Any:
        return record([lib.SystemMessage(content="Be brief."), *state["messages"]])

    return prompt


@AGENT_MOVED
@pytest.mark.parametrize("prompt", [_text, _system, _function, _async_function])
def test_create_react_agent_takes_prompt(lib: Lib, prompt: Any) -> None:
    stored, sent = _agent_run(lib, prompt)
    assert stored == ["human", "ai", "tool", "ai"]  # the prompt is sent, never stored
    if prompt in (_function, _async_function):
        assert sent == ["system", "human"]


@AGENT_MOVED
def test_create_react_agent_interrupts_and_name(lib: Lib) -> None:
    @lib.tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    model = lib.scripted_model(
        [
            _reply(lib, "", [{"name": "lookup", "args": {"city": "Oslo"}, "id": "c1"}]),
            _reply(lib, "Sunny."),
        ]
    )
    app = lib.create_react_agent(
        model,
        [lookup],
        prompt="Be brief.",
        checkpointer=lib.checkpointer(),
        interrupt_before=["tools"],
        name="weather",
    )
    assert app.name == "weather"
    lib.invoke(app, {"messages": [lib.HumanMessage(content="Weather?")]}, thread_id="t")
    assert lib.state(app, "t").next == ("tools",)
    out = lib.invoke(app, None, thread_id="t")
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert lib.state(app, "t").next == ()


def test_a_chat_model_takes_the_node_config_positionally(lib: Lib) -> None:
    model = lib.scripted_model([_reply(lib, "hi there")])

    def chat(state: Any, config: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    chat.__annotations__["config"] = lib.RunnableConfig  # as the program imports it

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("chat", chat)
    graph.add_edge(lib.START, "chat")
    out = graph.compile().invoke({"messages": [lib.HumanMessage(content="hi")]})
    assert out["messages"][-1].content == "hi there"


def test_streamed_models_take_the_config_positionally(lib: Lib) -> None:
    model = lib.scripted_model([_reply(lib, "one"), _reply(lib, "two")])
    config: dict[str, Any] = {"tags": ["x"]}
    chunks = list(model.stream([lib.HumanMessage(content="hi")], config))
    assert "".join(c.text for c in chunks) == "one"


def test_async_models_take_the_config_positionally(lib: Lib) -> None:
    model = lib.scripted_model([_reply(lib, "one")])
    reply = asyncio.run(model.ainvoke([lib.HumanMessage(content="hi")], {"tags": ["x"]}))
    assert reply.content == "one"


class Route(TypedDict):
    path: list[str]


def _routed(lib: Lib, router: Any) -> Any:
    def b(state: Route) -> dict[str, Any]:
        return {"path": [*state["path"], "b"]}

    def c(state: Route) -> dict[str, Any]:
        return {"path": [*state["path"], "c"]}

    graph = lib.StateGraph(Route)
    graph.add_node("a", router)
    graph.add_node("b", b)
    graph.add_node("c", c)
    graph.add_edge(lib.START, "a")
    return graph.compile()


def test_a_node_reached_only_through_a_command_hint(lib: Lib) -> None:
    class Local(TypedDict):  # a class the string hints cannot resolve
        path: list[str]

    def a(state: Local) -> Command[Literal["b", "c"]]:  # noqa: F821 - a string hint
        return lib.Command(goto="c", update={"path": ["a"]})

    assert _routed(lib, a).invoke({"path": []}) == {"path": ["a", "c"]}


def test_async_nodes_and_callable_objects_declare_their_commands(lib: Lib) -> None:
    Command = lib.Command

    class Router:
        def __call__(self, state: Route) -> Command[Literal["b", "c"]]:
            return Command(goto="b", update={"path": ["a"]})

    async def arouter(state: Route) -> Command[Literal["b", "c"]]:
        return Command(goto="c", update={"path": ["a"]})

    assert _routed(lib, Router()).invoke({"path": []}) == {"path": ["a", "b"]}
    assert asyncio.run(_routed(lib, arouter).ainvoke({"path": []})) == {"path": ["a", "c"]}


class Attempts(TypedDict):
    result: str


class Busy(Exception):
    """A service's own error class: retried by default."""


@pytest.mark.parametrize("as_list", [False, True])
def test_add_node_takes_retry_policy(lib: Lib, as_list: bool) -> None:
    attempts: list[int] = []

    def call(state: Attempts) -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) < 3:
            raise Busy("busy")
        return {"result": f"ok after {len(attempts)}"}

    policy = lib.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)
    graph = lib.StateGraph(Attempts)
    graph.add_node("call", call, retry_policy=[policy] if as_list else policy)
    graph.add_edge(lib.START, "call")
    assert graph.compile().invoke({"result": ""}) == {"result": "ok after 3"}


def test_add_node_keeps_metadata(lib: Lib) -> None:
    graph = lib.StateGraph(Attempts)
    graph.add_node("call", lambda s: {"result": "x"}, metadata={"owner": "me"})
    graph.add_edge(lib.START, "call")
    assert graph.compile().invoke({"result": ""}) == {"result": "x"}


class Totals(BaseModel):
    a: int
    label: str = "none"


def test_a_pydantic_result_reads_as_a_dict(lib: Lib) -> None:
    graph = lib.StateGraph(Totals)
    graph.add_node("add", lambda s: {"a": s.a + 1, "label": "added"})
    graph.add_edge(lib.START, "add")
    result = graph.compile().invoke({"a": 1})
    assert result["a"] == 2
    assert result["label"] == "added"
    assert result.get("missing", "dflt") == "dflt"
    assert "a" in result
    assert dict(result) == {"a": 2, "label": "added"}
    assert list(result.keys()) == ["a", "label"]
    with pytest.raises(KeyError):
        result["missing"]


class Ctx(TypedDict):
    user: str


class Greeting(TypedDict):
    text: str


def test_a_typeddict_context(lib: Lib) -> None:
    def greet(state: Greeting, runtime: Any) -> dict[str, Any]:
        return {"text": f"hi {runtime.context['user']}"}

    greet.__annotations__["runtime"] = lib.Runtime[Ctx]
    graph = lib.StateGraph(Greeting, context_schema=Ctx)
    graph.add_node("greet", greet)
    graph.add_edge(lib.START, "greet")
    app = graph.compile()
    assert app.invoke({"text": ""}, context={"user": "ada"}) == {"text": "hi ada"}


def test_context_schema_positionally(lib: Lib) -> None:
    graph = lib.StateGraph(Greeting, Ctx)
    graph.add_node("greet", lambda s: {"text": "x"})
    graph.add_edge(lib.START, "greet")
    assert graph.compile().invoke({"text": ""}, context={"user": "ada"}) == {"text": "x"}


class Logged(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]
    count: Annotated[int, operator.add]


def test_a_reducer_field_shows_its_empty_value(lib: Lib) -> None:
    def first(state: Logged) -> dict[str, Any]:
        return {"x": state["x"] + 1}

    def second(state: Logged) -> dict[str, Any]:
        return {"x": state["x"] + 1, "log": ["second"]}

    graph = lib.StateGraph(Logged)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(lib.START, "first")
    graph.add_edge("first", "second")
    app = graph.compile(checkpointer=lib.checkpointer(), interrupt_before=["second"])
    out = lib.invoke(app, {"x": 0}, thread_id="t")
    assert out == {"x": 1, "log": [], "count": 0}
    assert list(out) == ["x", "log", "count"]
    assert lib.state(app, "t").values == {"x": 1, "log": [], "count": 0}
    values = list(lib.stream(app, None, thread_id="t", stream_mode="values"))
    assert values == [{"x": 1, "log": [], "count": 0}, {"x": 2, "log": ["second"], "count": 0}]


# -- LangGraph keywords flowgraph does not take: the TypeError names our spelling


def test_keywords_we_do_not_take_name_our_spelling() -> None:
    from flowgraph import RetryPolicy, ScriptedChatModel, StateGraph, create_react_agent

    with pytest.raises(TypeError, match=r"config_schema.*context_schema="):
        StateGraph(Greeting, config_schema=Ctx)
    graph = StateGraph(Greeting)
    with pytest.raises(TypeError, match=r"add_node.*'timeout'"):
        graph.add_node("greet", lambda s: {"text": "x"}, timeout=1.0)
    with pytest.raises(TypeError, match="same; pass one"):
        graph.add_node("greet", lambda s: {}, retry=RetryPolicy(), retry_policy=RetryPolicy())
    with pytest.raises(TypeError, match="takes RetryPolicy objects"):
        graph.add_node("greet", lambda s: {}, retry_policy=[RetryPolicy(), 3])
    graph.add_node("greet", lambda s: {"text": "x"})
    graph.add_edge("__start__", "greet")
    with pytest.raises(TypeError, match=r"'debug'.*mode='events'"):
        graph.compile(debug=True)
    model = ScriptedChatModel(["hi"])
    with pytest.raises(TypeError, match="'response_format'"):
        create_react_agent(model, [], response_format=Totals)
    with pytest.raises(TypeError, match="system= or prompt="):
        create_react_agent(model, [], system="a", prompt="b")


def test_metadata_stays_on_the_node() -> None:
    from flowgraph import StateGraph

    graph = StateGraph(Greeting)
    graph.add_node("greet", lambda s: {"text": "x"}, metadata={"owner": "me"})
    assert graph.graph.nodes["greet"]["metadata"] == {"owner": "me"}


def test_a_tool_node_as_the_agent_tools() -> None:
    from flowgraph import HumanMessage, ScriptedChatModel, ToolNode, create_react_agent

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "lookup", "args": {"city": "Oslo"}}]}, "Sunny."]
    )
    app = create_react_agent(model, ToolNode([lookup]))
    out = app.invoke({"messages": [HumanMessage("Weather?")]})
    assert out.messages[2].text == "Oslo: sunny"
    assert [t.name for t in model.requests[0].tools] == ["lookup"]
