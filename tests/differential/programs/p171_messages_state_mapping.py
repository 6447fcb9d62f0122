from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["first", "second"])


class State(MessagesState):
    summary: str
    turns: int


def chatbot(state: State):
    print("summary" in state, state.get("summary", "-"), "turns" in state, len(state["messages"]))
    return {"messages": [llm.invoke(state["messages"])], "summary": "talked"}


builder = StateGraph(State)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile()
result = graph.invoke({"messages": [HumanMessage(content="hi")]})
print(result["summary"], "turns" in result, len(result["messages"]))
result = graph.invoke({"messages": [HumanMessage(content="hi")], "summary": "old", "turns": 2})
print(result["summary"], result["turns"])
