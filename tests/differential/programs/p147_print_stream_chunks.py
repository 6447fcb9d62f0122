from fake_chat import FakeChat
from langgraph.graph import START, MessagesState, StateGraph

llm = FakeChat(["Hello there friend.", "Bye now."])


def call_model(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("call_model", call_model)
builder.add_edge(START, "call_model")
graph = builder.compile()

for msg, metadata in graph.stream(
    {"messages": [{"role": "user", "content": "hi", "id": "u1"}]}, stream_mode="messages"
):
    if msg.content:
        print(msg)
        print(type(msg).__name__, metadata["langgraph_node"])

full = None
for msg, _metadata in graph.stream(
    {"messages": [{"role": "user", "content": "bye", "id": "u2"}]}, stream_mode="messages"
):
    full = msg if full is None else full + msg
print(full.content)
print(type(full).__name__)
