from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["first reply", "second reply"])


def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "dup"}}
turn = {"messages": [HumanMessage(content="hello", id="turn-1")]}
print([m.content for m in graph.invoke(turn, config)["messages"]])
print([m.content for m in graph.invoke(turn, config)["messages"]])
