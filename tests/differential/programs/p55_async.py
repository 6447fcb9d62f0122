import asyncio

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


async def upper(state: State):
    await asyncio.sleep(0)
    return {"text": state["text"].upper()}


def suffix(state: State):
    return {"text": state["text"] + "?"}


builder = StateGraph(State)
builder.add_node("upper", upper)
builder.add_node("suffix", suffix)
builder.add_edge(START, "upper")
builder.add_edge("upper", "suffix")
builder.add_edge("suffix", END)
graph = builder.compile()


async def main():
    print(await graph.ainvoke({"text": "really"}))
    async for chunk in graph.astream({"text": "sure"}):
        print(chunk)
    async for chunk in graph.astream({"text": "ok"}, stream_mode="values"):
        print(chunk)


asyncio.run(main())
