from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "search", "args": {"query": "owl facts"}, "id": "s9"}],
        }
    ]
)


def agent(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
builder.add_edge("agent", END)
graph = builder.compile()
full = None
for chunk, _metadata in graph.stream(
    {"messages": [HumanMessage(content="owls")]}, stream_mode="messages"
):
    full = chunk if full is None else full + chunk
print([(c["name"], c["args"], c["id"]) for c in full.tool_calls])
