from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph


def prune(state: MessagesState):
    return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2]]}


builder = StateGraph(MessagesState)
builder.add_node("prune", prune)
builder.add_edge(START, "prune")
builder.add_edge("prune", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "rm"}}
history = [
    HumanMessage(content="a", id="1"),
    AIMessage(content="b", id="2"),
    HumanMessage(content="c", id="3"),
    AIMessage(content="d", id="4"),
]
result = graph.invoke({"messages": history}, config)
print([(m.id, m.content) for m in result["messages"]])
graph.update_state(config, {"messages": [RemoveMessage(id="3")]})
print([(m.id, m.content) for m in graph.get_state(config).values["messages"]])
