from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES


def reset(state: MessagesState):
    fresh = AIMessage(content=f"fresh start after {len(state['messages'])}", id="f")
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), fresh]}


builder = StateGraph(MessagesState)
builder.add_node("reset", reset)
builder.add_edge(START, "reset")
builder.add_edge("reset", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "all"}}
history = [HumanMessage(content="a", id="1"), AIMessage(content="b", id="2")]
result = graph.invoke({"messages": history}, config)
print([(m.id, m.content) for m in result["messages"]])
graph.update_state(config, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]})
print(graph.get_state(config).values["messages"])
print(REMOVE_ALL_MESSAGES)
