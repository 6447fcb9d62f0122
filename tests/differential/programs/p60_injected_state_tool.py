from typing import Annotated

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition


@tool
def count_messages(state: Annotated[dict, InjectedState]) -> str:
    """Count the conversation's messages."""
    return f"{len(state['messages'])} messages"


llm = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "count_messages", "args": {}, "id": "cm"}]},
        "Counted.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([count_messages]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()
result = graph.invoke({"messages": [HumanMessage(content="a"), HumanMessage(content="b")]})
print(result["messages"][3].content)
