from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def roll(sides: int) -> int:
    """Roll a die."""
    return sides // 2


llm = FakeChat(
    [{"content": "", "tool_calls": [{"name": "roll", "args": {"sides": 6}, "id": "r1"}]}, "3."]
)
forced = llm.bind_tools([roll], tool_choice="roll")


def agent(state: MessagesState):
    return {"messages": [forced.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([roll]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
result = builder.compile().invoke({"messages": [HumanMessage(content="roll a d6")]})
print([(m.type, m.content) for m in result["messages"]])
