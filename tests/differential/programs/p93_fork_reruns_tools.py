from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

charged = []


@tool
def charge_card(amount: int) -> str:
    """Charge the card."""
    charged.append(amount)
    return f"charged {amount}"


llm = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "charge_card", "args": {"amount": 5}, "id": "p1"}]},
        "Paid.",
        "Paid again.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([charge_card]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "pay"}}
graph.invoke({"messages": [HumanMessage(content="pay 5")]}, config)
before_tools = next(s for s in graph.get_state_history(config) if s.next == ("tools",))
result = graph.invoke(None, before_tools.config)
print(result["messages"][-1].content)
print("card charged", len(charged), "times")
