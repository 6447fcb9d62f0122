from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["The quick brown fox jumps."])


def call_model(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("call_model", call_model)
builder.add_edge(START, "call_model")
builder.add_edge("call_model", END)
graph = builder.compile()

for chunk, metadata in graph.stream(
    {"messages": [HumanMessage(content="go")]}, stream_mode="messages"
):
    if chunk.content:
        print(repr(chunk.content), metadata["langgraph_node"], metadata["langgraph_step"])
