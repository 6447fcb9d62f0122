from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

llm = FakeChat(["inner words arrive one by one"])


def think(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


inner = StateGraph(MessagesState)
inner.add_node("think", think)
inner.add_edge(START, "think")
inner_graph = inner.compile()


def delegate(state: MessagesState):
    result = inner_graph.invoke({"messages": state["messages"]})
    return {"messages": [result["messages"][-1]]}


outer = StateGraph(MessagesState)
outer.add_node("delegate", delegate)
outer.add_edge(START, "delegate")
graph = outer.compile()

for chunk, metadata in graph.stream({"messages": [HumanMessage("go")]}, stream_mode="messages"):
    print(repr(chunk.content), metadata["langgraph_node"])
