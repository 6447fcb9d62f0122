from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict


@dataclass
class ContextSchema:
    llm_provider: str = "openai"
    user_name: str = "anonymous"


class State(TypedDict):
    greeting: str


def greet(state: State, runtime: Runtime[ContextSchema]):
    return {"greeting": f"Hello {runtime.context.user_name}, via {runtime.context.llm_provider}"}


def tag(state: State, config: RunnableConfig):
    user_id = config["configurable"].get("user_id", "nobody")
    return {"greeting": state["greeting"] + f" [{user_id}]"}


builder = StateGraph(State, context_schema=ContextSchema)
builder.add_node("greet", greet)
builder.add_node("tag", tag)
builder.add_edge(START, "greet")
builder.add_edge("greet", "tag")
builder.add_edge("tag", END)
graph = builder.compile()

print(
    graph.invoke({"greeting": ""}, context=ContextSchema(llm_provider="anthropic", user_name="Ada"))
)
print(graph.invoke({"greeting": ""}, {"configurable": {"user_id": "u-7"}}, context=ContextSchema()))
for chunk in graph.stream(
    {"greeting": ""}, context=ContextSchema(user_name="Bo"), stream_mode="updates"
):
    print(chunk)
configured = graph.with_config({"configurable": {"user_id": "fixed"}})
print(configured.invoke({"greeting": ""}, context=ContextSchema(user_name="Cy")))
