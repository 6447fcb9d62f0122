from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Hello Ada, nice to meet you.", "Your name is Ada.", "I do not know your name."])


def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "1"}}
for text in ["Hi, I am Ada.", "What is my name?"]:
    result = graph.invoke({"messages": [HumanMessage(content=text)]}, config)
    print(len(result["messages"]), result["messages"][-1].content)

other = {"configurable": {"thread_id": "2"}}
result = graph.invoke({"messages": [HumanMessage(content="What is my name?")]}, other)
for m in result["messages"]:
    m.pretty_print()
print(len(graph.get_state(config).values["messages"]))
