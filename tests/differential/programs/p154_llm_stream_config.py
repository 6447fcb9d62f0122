import asyncio

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["one reply", "two reply", "three reply", "four reply"])


def streamed(state: MessagesState, config: RunnableConfig):
    full = None
    for chunk in llm.stream(state["messages"], config):
        full = chunk if full is None else full + chunk
    return {"messages": [full]}


async def awaited(state: MessagesState, config: RunnableConfig):
    return {"messages": [await llm.ainvoke(state["messages"], config)]}


async def astreamed(state: MessagesState, config: RunnableConfig):
    full = None
    async for chunk in llm.astream(state["messages"], config):
        full = chunk if full is None else full + chunk
    return {"messages": [full]}


builder = StateGraph(MessagesState)
builder.add_node("streamed", streamed)
builder.add_node("awaited", awaited)
builder.add_node("astreamed", astreamed)
builder.add_edge(START, "streamed")
builder.add_edge("streamed", "awaited")
builder.add_edge("awaited", "astreamed")
builder.add_edge("astreamed", END)
graph = builder.compile()


async def main():
    result = await graph.ainvoke({"messages": [HumanMessage(content="go")]})
    print([m.content for m in result["messages"]])


asyncio.run(main())
