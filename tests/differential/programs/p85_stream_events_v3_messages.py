from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["Owls can turn their heads far."])


def bot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("bot", bot)
builder.add_edge(START, "bot")
builder.add_edge("bot", END)
graph = builder.compile()
run = graph.stream_events({"messages": [HumanMessage(content="owls?")]}, version="v3")
for message in run.messages:
    print(message.node, [token for token in message.text])
print(run.output["messages"][-1].text)
print(run.interrupted, run.interrupts)
