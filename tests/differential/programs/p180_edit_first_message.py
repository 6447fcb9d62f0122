from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph


def shout(state: MessagesState):
    return {"messages": [("ai", state["messages"][-1].content.upper() + "!")]}


builder = StateGraph(MessagesState)
builder.add_node("shout", shout)
builder.add_edge(START, "shout")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "chat"}}
graph.invoke({"messages": [HumanMessage("hello", id="m1")]}, config)
graph.invoke({"messages": [HumanMessage("how are you", id="m2")]}, config)

history = list(graph.get_state_history(config))
for snapshot in history:
    print(snapshot.next, [m.content for m in snapshot.values.get("messages", [])])

# a chat UI edits a message: new input at the checkpoint before it
first = graph.get_state(history[4].config)
print(
    "parent of the first input step is the checkpoint before it:",
    first.parent_config == history[5].config,
)
edited = graph.invoke({"messages": [HumanMessage("HEY", id="m1")]}, history[5].config)
print([m.content for m in edited["messages"]])
edited = graph.invoke({"messages": [HumanMessage("bye", id="m3")]}, history[2].config)
print([m.content for m in edited["messages"]])
rerun = graph.invoke(None, history[2].config)
print([m.content for m in rerun["messages"]])
print(len(list(graph.get_state_history(config))))
print([s.next for s in graph.get_state_history(config, limit=3)])
print(graph.get_state(graph.get_state(config).parent_config).next)
