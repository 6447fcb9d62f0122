"""Nodes that take `config`, `runtime`, `store` or `writer`; `get_config()`, `get_runtime()`.

The engine fills those parameters by name (read once at add_node); the
run's configuration comes from `invoke(..., config=...)` (LangGraph's dict,
also positional), `configurable=`, `context=` and the usual keywords.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    InjectedStore,
    MessagesState,
    RunnableConfig,
    Runtime,
    StateGraph,
    ToolCall,
    ToolNode,
    ToolRuntime,
    get_config,
    get_runtime,
    tool,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.store import BaseStore, InMemoryStore, get_store


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


@dataclass
class Ctx:
    user: str
    model: str = "small"


def one_node(fn: Any, **compile_kw: Any) -> Any:
    g = StateGraph(Log, context_schema=Ctx)
    g.add_node("node", fn)
    g.add_edge(START, "node")
    return g.compile(**compile_kw)


def test_a_node_taking_config_reads_thread_and_own_configurable_values() -> None:
    def node(state: Log, config: RunnableConfig) -> dict[str, Any]:
        conf = config["configurable"]
        meta = config["metadata"]
        return {
            "log": [
                f"{conf['thread_id']}/{conf['user_id']}/{config['recursion_limit']}",
                f"{meta['langgraph_node']}@{meta['langgraph_step']}",
            ]
        }

    app = one_node(node, checkpointer=MemoryCheckpointer())
    # LangGraph's positional config dict: thread and recursion limit inside it
    out = app.invoke(
        {"log": []}, {"configurable": {"thread_id": "t1", "user_id": "u7"}, "recursion_limit": 9}
    )
    assert out["log"] == ["t1/u7/9", "node@1"]
    # the keyword form: the same config reaches the node
    out = app.invoke({"log": []}, thread_id="t2", configurable={"user_id": "u8"})
    assert out["log"] == ["t2/u8/100", "node@1"]
    assert app.get_state("t1").values["log"] == ["t1/u7/9", "node@1"]


def test_thread_id_inside_config_is_the_run_thread() -> None:
    app = one_node(lambda state: {"log": ["ran"]}, checkpointer=MemoryCheckpointer())
    app.invoke({"log": []}, config={"configurable": {"thread_id": "a"}})
    app.invoke({"log": []}, {"configurable": {"thread_id": "a"}})
    assert app.get_state("a").values["log"] == ["ran", "ran"]
    assert app.get_state({"configurable": {"thread_id": "a"}}).values["log"] == ["ran", "ran"]


def test_recursion_limit_inside_config_limits_the_run() -> None:
    from flowgraph import GraphRecursionError

    g = StateGraph(Log)
    g.add_node("loop", lambda state: {"log": ["x"]})
    g.add_edge(START, "loop")
    g.add_edge("loop", "loop")
    with pytest.raises(GraphRecursionError) as info:
        g.compile().invoke({"log": []}, {"recursion_limit": 3})
    assert info.value.limit == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"config": {"configurable": {"thread_id": "a"}}, "thread_id": "b"},
            "thread_id is given twice",
        ),
        (
            {"config": {"recursion_limit": 5}, "recursion_limit": 7},
            "recursion_limit is given twice",
        ),
        ({"config": {"configurble": {}}}, "unknown key 'configurble'"),
        ({"config": {"callbacks": []}}, "no callbacks"),
    ],
)
def test_a_config_that_contradicts_itself_or_is_misspelt_is_an_error(
    kwargs: dict[str, Any], message: str
) -> None:
    app = one_node(lambda state: {"log": ["ran"]}, checkpointer=MemoryCheckpointer())
    with pytest.raises(ValueError, match=message):
        app.invoke({"log": []}, **kwargs)


def test_a_node_taking_runtime_reads_the_context_as_the_context_schema() -> None:
    seen: list[Any] = []

    def node(state: Log, runtime: Runtime[Ctx]) -> dict[str, Any]:
        seen.append(runtime.context)
        return {"log": [f"{runtime.context.user} on {runtime.context.model}"]}

    app = one_node(node)
    assert app.invoke({"log": []}, context=Ctx("ada", "large"))["log"] == ["ada on large"]
    # a dict is made the graph's context_schema, as LangGraph does
    assert app.invoke({"log": []}, context={"user": "bob"})["log"] == ["bob on small"]
    assert seen == [Ctx("ada", "large"), Ctx("bob", "small")]
    with pytest.raises(ValueError, match="does not fit the graph's context_schema Ctx"):
        app.invoke({"log": []}, context={"name": "bob"})


def test_a_pydantic_context_schema_validates_a_dict() -> None:
    class Settings(BaseModel):
        temperature: float

    g = StateGraph(Log, context_schema=Settings)
    g.add_node("node", lambda state, runtime: {"log": [repr(runtime.context.temperature)]})
    g.add_edge(START, "node")
    assert g.compile().invoke({"log": []}, context={"temperature": "0.5"})["log"] == ["0.5"]


def test_store_runtime_and_writer_parameters_and_the_get_functions() -> None:
    store = InMemoryStore()

    async def node(
        state: Log, *, runtime: Runtime[Ctx], store: BaseStore, writer: Any
    ) -> dict[str, Any]:
        store.put(("users",), runtime.context.user, {"seen": True})
        writer({"progress": 1})  # "custom" stream mode; nobody reads it here
        assert get_runtime(Ctx).context == runtime.context
        assert get_runtime().store is store is runtime.store is get_store()
        return {"log": [get_config()["metadata"]["langgraph_node"]]}

    app = one_node(node, store=store)
    assert asyncio.run(app.ainvoke({"log": []}, context=Ctx("ada")))["log"] == ["node"]
    item = store.get(("users",), "ada")
    assert item is not None and item.value == {"seen": True}


def test_without_a_store_the_store_parameter_is_none() -> None:
    app = one_node(lambda state, store: {"log": [repr(store)]})
    assert app.invoke({"log": []})["log"] == ["None"]


def test_get_config_outside_a_run_names_the_problem() -> None:
    with pytest.raises(RuntimeError, match="inside a node or a tool"):
        get_config()
    with pytest.raises(RuntimeError, match="get_runtime"):
        get_runtime()


def test_a_node_asking_for_nothing_is_called_as_it_is() -> None:
    """The signature is read once at add_node; a plain node is not wrapped at all."""

    def plain(state: Log) -> dict[str, Any]:
        return {"log": ["plain"]}

    def asks(state: Log, config: RunnableConfig) -> dict[str, Any]:
        return {"log": ["asks"]}

    g = StateGraph(Log)
    g.add_node("plain", plain)
    g.add_node("asks", asks)
    g.add_edge(START, "plain")
    g.add_edge("plain", "asks")
    app = g.compile()
    assert app.engine.plan.nodes["plain"].fn is plain
    assert app.engine.plan.nodes["asks"].fn is not asks
    assert app.invoke({"log": []})["log"] == ["plain", "asks"]


def test_a_conditional_edge_may_take_config() -> None:
    def route(state: Log, config: RunnableConfig) -> str:
        return str(config["configurable"]["route"])

    g = StateGraph(Log)
    g.add_node("start", lambda state: {"log": ["start"]})
    g.add_node("a", lambda state: {"log": ["a"]})
    g.add_node("b", lambda state: {"log": ["b"]})
    g.add_edge(START, "start")
    g.add_conditional_edges("start", route, ["a", "b"])
    app = g.compile()
    assert app.invoke({"log": []}, configurable={"route": "b"})["log"] == ["start", "b"]
    assert app.invoke({"log": []}, configurable={"route": "a"})["log"] == ["start", "a"]


def test_a_graph_run_inside_a_node_does_not_see_the_outer_run_config() -> None:
    inner = one_node(lambda state, config: {"log": [str(config["configurable"])]})

    def outer(state: Log, config: RunnableConfig) -> dict[str, Any]:
        return {"log": [*inner.invoke({"log": []})["log"], config["configurable"]["who"]]}

    assert one_node(outer).invoke({"log": []}, configurable={"who": "outer"})["log"] == [
        "{}",
        "outer",
    ]


def test_a_subgraph_sees_its_parent_run_config_and_store() -> None:
    store = InMemoryStore()
    sub = StateGraph(Log)
    sub.add_node(
        "inner",
        lambda state, config, store: {
            "log": [f"{config['configurable']['user_id']} {store is not None}"]
        },
    )
    sub.add_edge(START, "inner")
    parent = StateGraph(Log)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    out = parent.compile(store=store).invoke({"log": []}, configurable={"user_id": "u1"})
    assert out["log"] == ["u1 True"]


# -- tools ------------------------------------------------------------------------------


@tool
def whoami(runtime: ToolRuntime[Ctx]) -> str:
    """Say who the user is."""
    state_messages = len(runtime.state["messages"])
    return f"{runtime.context.user} ({runtime.tool_call_id}, {state_messages} messages)"


@tool
def thread(config: RunnableConfig) -> str:
    """Name the thread."""
    return str(config["configurable"].get("thread_id"))


@tool
def remember(fact: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Remember a fact."""
    store.put(("facts",), fact, {"fact": fact})
    return "ok"


def test_tools_get_config_runtime_and_the_compiled_store() -> None:
    assert whoami.json_schema["properties"] == {}
    assert thread.json_schema["properties"] == {}
    store = InMemoryStore()
    calls = AIMessage(
        "",
        tool_calls=[
            ToolCall(id="c1", name="whoami", args={}),
            ToolCall(id="c2", name="thread", args={}),
            ToolCall(id="c3", name="remember", args={"fact": "tea"}),
        ],
    )
    g = StateGraph(MessagesState, context_schema=Ctx)
    g.add_node("tools", ToolNode([whoami, thread, remember]))
    g.add_edge(START, "tools")
    g.add_edge("tools", END)
    app = g.compile(checkpointer=MemoryCheckpointer(), store=store)
    out = app.invoke(
        {"messages": [HumanMessage("hi"), calls]}, thread_id="t9", context={"user": "ada"}
    )
    assert [m.text for m in out.messages[2:]] == ["ada (c1, 2 messages)", "t9", "ok"]
    assert store.get(("facts",), "tea") is not None


def test_a_tool_called_outside_a_run_gets_an_empty_config_and_runtime() -> None:
    @tool
    def describe(config: RunnableConfig, runtime: ToolRuntime) -> str:
        """Describe the call."""
        return f"{config['configurable']} {runtime.context} {runtime.tool_call_id} {runtime.state}"

    assert describe.invoke({}, state={"n": 1}, tool_call_id="x") == "{} None x {'n': 1}"


def test_a_subgraph_compiled_with_its_own_store_gives_its_nodes_that_one() -> None:
    outer_store, inner_store = InMemoryStore(), InMemoryStore()
    sub = StateGraph(Log)
    sub.add_node("inner", lambda state, store: {"log": [f"inner own={store is inner_store}"]})
    sub.add_edge(START, "inner")
    parent = StateGraph(Log)
    parent.add_node("sub", sub.compile(store=inner_store))
    parent.add_node("after", lambda state, store: {"log": [f"after outer={store is outer_store}"]})
    parent.add_edge(START, "sub")
    parent.add_edge("sub", "after")
    out = parent.compile(store=outer_store).invoke({"log": []})
    assert out["log"] == ["inner own=True", "after outer=True"]


def test_stream_takes_the_same_config() -> None:
    def node(state: Log, config: RunnableConfig) -> dict[str, Any]:
        return {"log": [config["configurable"]["thread_id"]]}

    app = one_node(node, checkpointer=MemoryCheckpointer())
    parts = list(app.stream({"log": []}, {"configurable": {"thread_id": "s1"}}, mode="updates"))
    assert [p.data for p in parts] == [{"log": ["s1"]}]

    async def collect() -> list[Any]:
        config = {"configurable": {"thread_id": "s2"}}
        return [p.data async for p in app.astream({"log": []}, config, mode="updates")]

    assert asyncio.run(collect()) == [{"log": ["s2"]}]
    assert app.get_state("s2").values["log"] == ["s2"]


def test_a_tool_typed_with_langchain_s_runnable_config_gets_the_run_config() -> None:
    pytest.importorskip("langchain_core", reason="LangChain is in the test extra")
    from langchain_core.runnables import RunnableConfig as LangChainConfig

    def user_of(config: LangChainConfig) -> str:
        """Name the user."""
        return str(config["configurable"]["user"])

    named = tool(user_of)
    assert named.json_schema["properties"] == {}
    g = StateGraph(MessagesState)
    g.add_node("tools", ToolNode([named]))
    g.add_edge(START, "tools")
    ai = AIMessage("", tool_calls=[ToolCall(id="c1", name="user_of", args={})])
    out = g.compile().invoke({"messages": [ai]}, configurable={"user": "ada"})
    assert out.messages[-1].text == "ada"


def test_a_resumed_run_reads_the_context_it_is_given_not_the_first_run_s() -> None:
    from flowgraph import Command, interrupt

    def ask(state: Log, runtime: Runtime[Ctx]) -> dict[str, Any]:
        seen = runtime.context.user
        answer = interrupt(f"{seen}?")
        return {"log": [f"{seen} said {answer}"]}

    app = one_node(ask, checkpointer=MemoryCheckpointer())
    paused = app.invoke({"log": []}, thread_id="r", context=Ctx("ada"))
    assert [i.value for i in paused["__interrupt__"]] == ["ada?"]
    done = app.invoke(Command(resume="yes"), thread_id="r", context=Ctx("bob"))
    assert done["log"] == ["bob said yes"]  # nothing of the first run's context was kept


def test_an_entrypoint_takes_config_and_runtime_too() -> None:
    from flowgraph import entrypoint

    @entrypoint(checkpointer=MemoryCheckpointer())
    def greet(name: str, *, config: RunnableConfig, runtime: Runtime[Ctx]) -> str:
        thread = config["configurable"]["thread_id"]
        return f"{name} on {thread} for {runtime.context.user}, after {runtime.previous}"

    first = greet.invoke("hi", {"configurable": {"thread_id": "e"}}, context=Ctx("ada"))
    assert first == "hi on e for ada, after None"
    again = greet.invoke("hey", thread_id="e", context=Ctx("bob"))
    assert again == f"hey on e for bob, after {first}"


def test_an_entrypoint_given_a_store_hands_it_to_its_function() -> None:
    from flowgraph import entrypoint

    memories = InMemoryStore()

    @entrypoint(store=memories)
    def remember(fact: str, *, store: BaseStore, runtime: Runtime[None]) -> int:
        store.put(("facts",), fact, {"fact": fact})
        assert runtime.store is store
        return len(store.search(("facts",)))

    assert remember.store is memories
    assert [remember.invoke("tea"), remember.invoke("cats")] == [1, 2]
    assert sorted(item.key for item in memories.search(("facts",))) == ["cats", "tea"]


def test_writer_and_runtime_stream_writer_send_to_the_custom_mode() -> None:
    def node(state: Log, writer: Any, runtime: Runtime[Ctx]) -> dict[str, Any]:
        writer({"progress": "half"})
        runtime.stream_writer({"progress": "done"})
        return {"log": ["ok"]}

    app = one_node(node)
    parts = list(app.stream({"log": []}, mode="custom"))
    assert [(p.node, p.data) for p in parts] == [
        ("node", {"progress": "half"}),
        ("node", {"progress": "done"}),
    ]
    # LangGraph's spelling, items as LangGraph yields them
    items = list(app.stream({"log": []}, stream_mode="custom"))
    assert items == [{"progress": "half"}, {"progress": "done"}]
    assert app.invoke({"log": []}) == {"log": ["ok"]}  # nobody reads "custom": nothing sent
