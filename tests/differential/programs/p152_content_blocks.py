from fake_chat import FakeChat
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(
    [
        {
            "content": "Let me look.",
            "tool_calls": [{"name": "search", "args": {"q": "owls"}, "id": "s1"}],
        }
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
builder.add_edge("agent", END)
graph = builder.compile()
reply = graph.invoke({"messages": [HumanMessage(content="owls?")]})["messages"][-1]
print(repr(reply.content))
for block in reply.content_blocks:
    print(block["type"], block.get("text"), block.get("name"), block.get("args"), block.get("id"))
print(HumanMessage(content="plain").content_blocks[0]["type"])
calls_only = AIMessage(content="", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c"}])
print(repr(calls_only.content), [b["type"] for b in calls_only.content_blocks])
