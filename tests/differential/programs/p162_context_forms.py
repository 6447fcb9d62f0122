from dataclasses import dataclass

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict


@dataclass
class Ctx:
    user: str
    lang: str = "en"


class PCtx(BaseModel):
    user: str


class State(TypedDict):
    line: str


def speak(state: State, runtime: Runtime[Ctx]):
    context = runtime.context
    return {"line": f"{type(context).__name__} {context.user} {context.lang}"}


builder = StateGraph(State, Ctx)
builder.add_node("speak", speak)
builder.add_edge(START, "speak")
builder.add_edge("speak", END)
graph = builder.compile()
print(graph.invoke({"line": ""}, context={"user": "Ivo"}))
print(graph.invoke({"line": ""}, context=Ctx(user="Mia", lang="it")))


def greet(state: State, runtime: Runtime[PCtx]):
    return {"line": f"{type(runtime.context).__name__} {runtime.context.user}"}


b2 = StateGraph(State, context_schema=PCtx)
b2.add_node("greet", greet)
b2.add_edge(START, "greet")
b2.add_edge("greet", END)
print(b2.compile().invoke({"line": ""}, context={"user": "Noa"}))
