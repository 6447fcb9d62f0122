from fake_chat import FakeChat
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

llm = FakeChat(
    [
        "Hello Will! How can I help you today?",
        "Your name is Will.",
        "I don't know your name yet.",
    ]
)


def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


graph_builder = StateGraph(MessagesState)
graph_builder.add_node("chatbot", chatbot)
graph_builder.add_edge(START, "chatbot")
graph_builder.add_edge("chatbot", END)
memory = InMemorySaver()
graph = graph_builder.compile(checkpointer=memory)

config = {"configurable": {"thread_id": "1"}}


def stream_graph_updates(user_input: str, config: dict):
    events = graph.stream(
        {"messages": [{"role": "user", "content": user_input}]},
        config,
        stream_mode="values",
    )
    for event in events:
        event["messages"][-1].pretty_print()


stream_graph_updates("Hi there! My name is Will.", config)
stream_graph_updates("Remember my name?", config)
stream_graph_updates("Remember my name?", {"configurable": {"thread_id": "2"}})

snapshot = graph.get_state(config)
print(len(snapshot.values["messages"]), snapshot.next)
print([type(m).__name__ for m in snapshot.values["messages"]])
print(graph.get_state({"configurable": {"thread_id": "2"}}).values["messages"][-1].content)
