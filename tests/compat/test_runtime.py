"""Runtime configuration the way LangGraph's docs use it (issue 18, item 3).

Each program is written once, in LangGraph's spelling (the `config` dict,
positional, with `thread_id` inside `configurable`), and run with both
libraries: nodes that take `config` or `runtime: Runtime[Ctx]`,
`context_schema` and `invoke(..., context=...)`, `get_config()` and
`get_runtime()`, `compile(store=...)` for nodes and `InjectedStore` tools,
and tools taking `ToolRuntime`.
"""

import operator
from dataclasses import dataclass
from typing import Annotated, Any

from typing_extensions import TypedDict

from tests.compat._libs import Lib


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


@dataclass
class ContextSchema:
    user_name: str
    llm: str = "small"


def test_a_node_reads_its_config(lib: Lib) -> None:
    def greet(state: Log, config: lib.RunnableConfig) -> dict[str, Any]:
        user = config["configurable"].get("user_id", "nobody")
        thread = config["configurable"]["thread_id"]
        return {"log": [f"hello {user} in {thread}"]}

    def step_seen(state: Log) -> dict[str, Any]:
        config = lib.get_config()
        return {
            "log": [f"{config['metadata']['langgraph_node']} limit {config['recursion_limit']}"]
        }

    builder = lib.StateGraph(Log)
    builder.add_node("greet", greet)
    builder.add_node("step_seen", step_seen)
    builder.add_edge(lib.START, "greet")
    builder.add_edge("greet", "step_seen")
    graph = builder.compile(checkpointer=lib.checkpointer())
    config = {"configurable": {"thread_id": "1", "user_id": "ada"}, "recursion_limit": 12}
    out = graph.invoke({"log": []}, config)
    assert out == {"log": ["hello ada in 1", "step_seen limit 12"]}
    assert graph.get_state({"configurable": {"thread_id": "1"}}).values == out


def test_context_schema_and_runtime(lib: Lib) -> None:
    def call_model(state: Log, runtime: lib.Runtime[ContextSchema]) -> dict[str, Any]:
        return {"log": [f"{runtime.context.llm} answers {runtime.context.user_name}"]}

    def from_anywhere(state: Log) -> dict[str, Any]:
        return {"log": [f"again {lib.get_runtime(ContextSchema).context.user_name}"]}

    builder = lib.StateGraph(Log, context_schema=ContextSchema)
    builder.add_node("call_model", call_model)
    builder.add_node("from_anywhere", from_anywhere)
    builder.add_edge(lib.START, "call_model")
    builder.add_edge("call_model", "from_anywhere")
    graph = builder.compile()
    assert graph.invoke({"log": []}, context=ContextSchema(user_name="ada", llm="large")) == {
        "log": ["large answers ada", "again ada"]
    }
    # a dict becomes the context_schema in both
    assert graph.invoke({"log": []}, context={"user_name": "bob"}) == {
        "log": ["small answers bob", "again bob"]
    }


def test_a_node_reads_and_writes_the_store(lib: Lib) -> None:
    def remember(state: Log, config: lib.RunnableConfig, *, store: lib.BaseStore) -> dict[str, Any]:
        user_id = config["configurable"]["user_id"]
        namespace = ("memories", user_id)
        store.put(namespace, f"m{len(store.search(namespace))}", {"data": state["log"][-1]})
        return {"log": [f"{len(store.search(namespace))} memories of {user_id}"]}

    store = lib.InMemoryStore()
    builder = lib.StateGraph(Log)
    builder.add_node("remember", remember)
    builder.add_edge(lib.START, "remember")
    graph = builder.compile(checkpointer=lib.checkpointer(), store=store)
    for thread in ("1", "2"):  # two threads: only the store connects them
        config = {"configurable": {"thread_id": thread, "user_id": "ada"}}
        out = graph.invoke({"log": [f"said in {thread}"]}, config)
    assert out == {"log": ["said in 2", "2 memories of ada"]}
    memories = sorted(item.value["data"] for item in store.search(("memories", "ada")))
    assert memories == ["said in 1", "said in 2"]


def test_tools_get_the_store_and_the_tool_runtime(lib: Lib) -> None:
    @lib.tool
    def save(
        fact: str,
        store: Annotated[Any, lib.InjectedStore()],
        runtime: lib.ToolRuntime[ContextSchema],
    ) -> str:
        """Save a fact about the user."""
        user = runtime.context.user_name
        store.put(("facts", user), fact, {"fact": fact})
        return f"saved for {user} ({runtime.tool_call_id})"

    ai = lib.AIMessage(
        content="",
        tool_calls=[
            {"id": "call_1", "name": "save", "args": {"fact": "likes tea"}, "type": "tool_call"}
        ],
    )
    store = lib.InMemoryStore()
    builder = lib.StateGraph(lib.MessagesState, context_schema=ContextSchema)
    builder.add_node("tools", lib.ToolNode([save]))
    builder.add_edge(lib.START, "tools")
    graph = builder.compile(store=store)
    out = graph.invoke(
        {"messages": [lib.HumanMessage(content="I like tea"), ai]},
        context=ContextSchema(user_name="ada"),
    )
    assert out["messages"][-1].content == "saved for ada (call_1)"
    assert store.get(("facts", "ada"), "likes tea").value == {"fact": "likes tea"}
