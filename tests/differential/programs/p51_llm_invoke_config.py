from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Configured reply."])


def chatbot(state: MessagesState, config: RunnableConfig):
    return {"messages": [llm.invoke(state["messages"], config)]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile()
result = graph.invoke({"messages": [HumanMessage(content="hi")]})
print(result["messages"][-1].content)
