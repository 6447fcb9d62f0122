from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def convert(amount: float, rate: float) -> float:
    """Convert an amount at an exchange rate.

    Args:
        amount: how much
        rate: the exchange rate
    """
    return round(amount * rate, 2)


def greet(name: str) -> str:
    """Greet someone."""
    return f"hi {name}"


llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [
                {"name": "convert", "args": {"amount": 10, "rate": 1.1}, "id": "x1"},
                {"name": "greet", "args": {"name": "Kim"}, "id": "x2"},
            ],
        },
        "Done.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.bind_tools([convert, greet]).invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([convert, greet]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()
result = graph.invoke({"messages": [HumanMessage(content="go")]})
for m in result["messages"][2:4]:
    print(m.name, m.content, m.tool_call_id)
