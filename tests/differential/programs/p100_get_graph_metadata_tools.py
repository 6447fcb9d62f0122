from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def agent(state: MessagesState):
    return {"messages": [AIMessage("done")]}


def tidy(state: MessagesState):
    return {}


def wrap_up(state: MessagesState):
    return {}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent, metadata={"owner": "team-a", "tags": ["llm", "main"]})
builder.add_node("tools", ToolNode([add, multiply]))
builder.add_sequence([tidy, wrap_up])
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "tidy"})
builder.add_edge("tools", "agent")
graph = builder.compile(checkpointer=InMemorySaver())
drawing = graph.get_graph()
print(drawing.draw_mermaid())
data = drawing.to_json()
print(data["edges"])
print([(node["id"], node.get("metadata")) for node in data["nodes"]])
print([(node.id, node.name, node.metadata) for node in drawing.nodes.values()])
