from fake_chat import FakeChat
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

messages = [
    SystemMessage("you're a good assistant, you always respond with a joke."),
    HumanMessage("i wonder why it's called langchain"),
    AIMessage(
        'Well, I guess they thought "WordRope" and "SentenceString" just didn\'t have the same '
        "ring to it!"
    ),
    HumanMessage("and who is harrison chasing anyways"),
    AIMessage(
        "Hmmm let me think.\n\nWhy, he's probably chasing after the last cup of coffee in the "
        "office!"
    ),
    HumanMessage("what do you call a speechless parrot"),
]

trimmed = trim_messages(
    messages,
    strategy="last",
    token_counter=count_tokens_approximately,
    max_tokens=45,
    start_on="human",
    end_on=("human", "tool"),
    include_system=True,
    allow_partial=False,
)
for message in trimmed:
    message.pretty_print()
print(count_tokens_approximately(messages), count_tokens_approximately(trimmed))

first = trim_messages(messages, strategy="first", token_counter=len, max_tokens=3)
print([type(m).__name__ for m in first])

model = FakeChat(["Polly want a joke?", "You said your name is Bob.", "Polly again."])
seen = []


def call_model(state: MessagesState):
    window = trim_messages(
        state["messages"],
        strategy="last",
        token_counter=count_tokens_approximately,
        max_tokens=20,
        start_on="human",
        end_on=("human", "tool"),
    )
    seen.append([m.content for m in window])
    response = model.invoke(window)
    return {"messages": [response]}


builder = StateGraph(MessagesState)
builder.add_node(call_model)
builder.add_edge(START, "call_model")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}
graph.invoke({"messages": "hi, my name is bob"}, config)
graph.invoke({"messages": "write a short poem about cats please"}, config)
final = graph.invoke({"messages": "what's my name?"}, config)
final["messages"][-1].pretty_print()
for window in seen:
    print(window)
