from fake_chat import FakeChat
from langchain_core.messages import HumanMessage, trim_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(["r1", "r2", "r3", "r4"])
seen = []


def chatbot(state: MessagesState):
    window = trim_messages(
        state["messages"], max_tokens=3, strategy="last", token_counter=len, start_on="human"
    )
    seen.append([m.content for m in window])
    return {"messages": [llm.invoke(window)]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "w"}}
for text in ["q1", "q2", "q3", "q4"]:
    graph.invoke({"messages": [HumanMessage(content=text)]}, config)
for window in seen:
    print(window)
print(len(graph.get_state(config).values["messages"]))
