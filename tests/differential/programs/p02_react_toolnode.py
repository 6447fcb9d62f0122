from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "multiply", "args": {"a": 6, "b": 7}, "id": "call_1"}],
        },
        "6 times 7 is 42.",
    ]
)
llm_with_tools = llm.bind_tools([multiply])


def agent(state: MessagesState):
    return {"messages": [llm_with_tools.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([multiply]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()

result = graph.invoke({"messages": [HumanMessage(content="What is 6 times 7?")]})
for m in result["messages"]:
    m.pretty_print()
print(result["messages"][2].content, result["messages"][2].tool_call_id, result["messages"][2].name)
