from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def clock() -> str:
    """What time is it."""
    return "12:00"


llm = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "clock", "args": {}, "id": "k1"}]},
        "It is noon.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.bind_tools([clock]).invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([clock]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()

for event in graph.stream({"messages": [HumanMessage(content="time?")]}):
    for value in event.values():
        print("Assistant:", value["messages"][-1].content)
