from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def get_weather(location: str) -> str:
    """Call to get the current weather."""
    if location.lower() in ["sf", "san francisco"]:
        return "It's 60 degrees and foggy."
    return "It's 90 degrees and sunny."


tools = [get_weather]
tool_node = ToolNode(tools)
model_with_tools = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "get_weather", "args": {"location": "sf"}, "id": "call_1"}],
        },
        "It's 60 degrees and foggy in San Francisco.",
    ]
).bind_tools(tools)


def should_continue(state: MessagesState):
    last_message = state["messages"][-1]
    if last_message.tool_calls:
        return "tools"
    return END


def call_model(state: MessagesState):
    response = model_with_tools.invoke(state["messages"])
    return {"messages": [response]}


workflow = StateGraph(MessagesState)
workflow.add_node("agent", call_model)
workflow.add_node("tools", tool_node)
workflow.add_edge(START, "agent")
workflow.add_conditional_edges("agent", should_continue, ["tools", END])
workflow.add_edge("tools", "agent")
app = workflow.compile()

for chunk in app.stream(
    {"messages": [HumanMessage(content="what's the weather in sf?", id="q1")]},
    stream_mode="updates",
):
    print(chunk)
    print()
