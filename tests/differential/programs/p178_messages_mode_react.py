from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city} has 3 bridges"


llm = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "lookup", "args": {"city": "Lyon"}, "id": "l1"}]},
        "Lyon has three bridges.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([lookup]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()
for message, metadata in graph.stream(
    {"messages": [HumanMessage(content="Lyon?")]}, stream_mode="messages"
):
    print(type(message).__name__, metadata["langgraph_node"], repr(message.content))
