from fake_chat import FakeChat
from langchain_core.messages import RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Paris.", "About 2.1 million people."])


def call_model(state: MessagesState):
    return {"messages": llm.invoke(state["messages"])}


def forget_first(state: MessagesState):
    if len(state["messages"]) > 2:
        return {"messages": [RemoveMessage(id=state["messages"][0].id)]}
    return {"messages": []}


builder = StateGraph(MessagesState)
builder.add_node(call_model)
builder.add_node(forget_first)
builder.add_edge(START, "call_model")
builder.add_edge("call_model", "forget_first")
builder.add_edge("forget_first", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}

result = graph.invoke({"messages": [("user", "capital of France?")]}, config)
print(result)
result = graph.invoke({"messages": [{"role": "user", "content": "population?"}]}, config)
for message in result["messages"]:
    print(message)
print(graph.get_state(config).values["messages"][0])
