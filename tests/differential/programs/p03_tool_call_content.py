from fake_chat import FakeChat
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return f"{word}: a small bird"


llm = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "lookup", "args": {"word": "wren"}, "id": "c1"}]},
        {
            "content": "Let me check once more.",
            "tool_calls": [{"name": "lookup", "args": {"word": "finch"}, "id": "c2"}],
        },
        "Both are small birds.",
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.bind_tools([lookup]).invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([lookup]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()

result = graph.invoke({"messages": [HumanMessage(content="wren and finch?")]})
for m in result["messages"]:
    print(type(m).__name__, repr(m.content))
    if isinstance(m, AIMessage):
        print("  calls:", [(c["name"], c["args"], c["id"]) for c in m.tool_calls])
print(repr(AIMessage(content="", tool_calls=[{"name": "lookup", "args": {}, "id": "x"}]).content))
