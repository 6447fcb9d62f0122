from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "delete_file", "args": {"path": "/tmp/x"}, "id": "d1"}],
        },
        "Done, the file is gone.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([delete_file]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["tools"])

config = {"configurable": {"thread_id": "b"}}
graph.invoke({"messages": [HumanMessage(content="delete /tmp/x")]}, config)
snapshot = graph.get_state(config)
print(snapshot.next)
print(snapshot.values["messages"][-1].tool_calls[0]["args"])
result = graph.invoke(None, config)
print(result["messages"][-2].content, "/", result["messages"][-1].content)
print(graph.get_state(config).next)
