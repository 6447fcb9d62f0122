from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def shout(text: str) -> str:
    """Shout the text."""
    return text.upper()


builder = StateGraph(MessagesState)
builder.add_node("tools", ToolNode([shout]))
builder.add_edge(START, "tools")
builder.add_edge("tools", END)
graph = builder.compile()
message = AIMessage(
    content="",
    tool_calls=[
        {"name": "shout", "args": {"text": "hey"}, "id": "s1"},
        {"name": "shout", "args": {"text": "you"}, "id": "s2"},
    ],
)
result = graph.invoke({"messages": [message]})
for m in result["messages"][1:]:
    print(type(m).__name__, m.content, m.tool_call_id, m.name)
print(shout.invoke({"text": "direct"}))
print(shout.name, "|", shout.description)
