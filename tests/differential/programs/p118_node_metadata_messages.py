from fake_chat import FakeChat
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

model = FakeChat(["hello from the model", "hello again"])
KEYS = ("langgraph_node", "langgraph_step", "team", "level", "tier")


def talk(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


def deep(state: MessagesState):
    return {"messages": [AIMessage("from deep", id="deep-1")]}


inner = StateGraph(MessagesState)
inner.add_node("deep", deep, metadata={"level": "inner", "team": "overridden"})
inner.add_edge(START, "deep")

builder = StateGraph(MessagesState)
builder.add_node("talk", talk, metadata={"team": "red", "tier": 1})
builder.add_node("sub", inner.compile(), metadata={"team": "blue"})
builder.add_edge(START, "talk")
builder.add_edge("talk", "sub")
graph = builder.compile()


def show(message, metadata):
    print(message.content, {k: metadata[k] for k in KEYS if k in metadata})


for message, metadata in graph.stream({"messages": []}, stream_mode="messages"):
    show(message, metadata)
for namespace, (message, metadata) in graph.stream(
    {"messages": []}, stream_mode="messages", subgraphs=True
):
    print(len(namespace), end=" ")
    show(message, metadata)
