from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Hi there."])


def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile()
for chunk in graph.stream({"messages": [HumanMessage(content="hello", id="h1")]}):
    print(chunk)
