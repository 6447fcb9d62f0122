from fake_chat import FakeChat
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

joke = "Why did the cat sit on the computer? To keep an eye on the mouse."
llm = FakeChat([joke, joke, joke])


class State(TypedDict):
    topic: str
    joke: str


def refine_topic(state: State):
    writer = get_stream_writer()
    writer({"custom_key": "Refining the topic"})
    return {"topic": state["topic"] + " and cats"}


def generate_joke(state: State):
    llm_response = llm.invoke(
        [{"role": "user", "content": f"Generate a joke about {state['topic']}"}]
    )
    return {"joke": llm_response.content}


graph = (
    StateGraph(State)
    .add_node(refine_topic)
    .add_node(generate_joke)
    .add_edge(START, "refine_topic")
    .add_edge("refine_topic", "generate_joke")
    .add_edge("generate_joke", END)
    .compile()
)

for chunk in graph.stream({"topic": "ice cream"}, stream_mode="updates"):
    print(chunk)

for chunk in graph.stream({"topic": "ice cream"}, stream_mode="values"):
    print(chunk)

for mode, chunk in graph.stream({"topic": "ice cream"}, stream_mode=["updates", "custom"]):
    print(f"{mode}: {chunk}")

llm2 = FakeChat(["Ice cream is cold and sweet."])


def call_model(state: State):
    response = llm2.invoke([{"role": "user", "content": state["topic"]}])
    return {"joke": response.content}


graph2 = StateGraph(State).add_node(call_model).add_edge(START, "call_model").compile()
for message_chunk, metadata in graph2.stream({"topic": "ice cream"}, stream_mode="messages"):
    if message_chunk.content and metadata["langgraph_node"] == "call_model":
        print(message_chunk.content, end="|", flush=True)
print()
