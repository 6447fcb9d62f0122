from fake_chat import FakeChat
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Reply one.", "Reply two."])


class State(MessagesState):
    summary: str


def chatbot(state: State):
    summary = state.get("summary", "")
    prefix = [SystemMessage(content=f"Summary: {summary}")] if summary else []
    return {"messages": [llm.invoke(prefix + state["messages"])]}


def summarize(state: State):
    return {"summary": f"{len(state['messages'])} messages so far"}


builder = StateGraph(State)
builder.add_node("chatbot", chatbot)
builder.add_node("summarize", summarize)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", "summarize")
builder.add_edge("summarize", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "sum"}}
for text in ["hello", "more"]:
    result = graph.invoke({"messages": [HumanMessage(content=text)]}, config)
    print(result["summary"], "|", result["messages"][-1].content, "|", "summary" in result)
