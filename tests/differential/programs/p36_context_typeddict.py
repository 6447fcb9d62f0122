from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict


class Context(TypedDict):
    user_name: str
    language: str


class State(TypedDict):
    greeting: str


def greet(state: State, runtime: Runtime[Context]):
    word = {"en": "Hello", "fr": "Bonjour"}[runtime.context["language"]]
    return {"greeting": f"{word}, {runtime.context['user_name']}"}


builder = StateGraph(State, context_schema=Context)
builder.add_node("greet", greet)
builder.add_edge(START, "greet")
builder.add_edge("greet", END)
graph = builder.compile()
print(graph.invoke({"greeting": ""}, context={"user_name": "Zoe", "language": "fr"}))
