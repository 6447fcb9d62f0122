from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["two words"])


def talk(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("talk", talk)
builder.add_edge(START, "talk")
builder.add_edge("talk", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "meta"}}
for chunk, metadata in graph.stream(
    {"messages": [HumanMessage(content="hi")]}, config, stream_mode="messages"
):
    if chunk.content:
        print(
            repr(chunk.content),
            type(chunk).__name__,
            metadata["langgraph_node"],
            metadata["langgraph_step"],
            metadata["thread_id"],
            metadata["langgraph_checkpoint_ns"].split(":")[0],
        )
