import asyncio

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


async def inc(state: State):
    return {"n": state["n"] + 1}


builder = StateGraph(State)
builder.add_node("inc", inc)
builder.add_node("dbl", lambda s: {"n": s["n"] * 2})
builder.add_edge(START, "inc")
builder.add_edge("inc", "dbl")
builder.add_edge("dbl", END)
graph = builder.compile()


async def main():
    run = await graph.astream_events({"n": 3}, version="v3")
    async for state in run.values:
        print(state)
    print(await run.output())


asyncio.run(main())
