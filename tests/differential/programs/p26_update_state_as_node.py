from fake_chat import FakeChat
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["First answer.", "Second answer after the edit."])


def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "u"}}
graph.invoke({"messages": [HumanMessage(content="hi")]}, config)

graph.update_state(
    config, {"messages": [AIMessage(content="An answer written by hand.")]}, as_node="chatbot"
)
state = graph.get_state(config)
print([m.content for m in state.values["messages"]])
print(state.next)
result = graph.invoke({"messages": [HumanMessage(content="again")]}, config)
print([m.content for m in result["messages"]])
