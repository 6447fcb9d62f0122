from fake_chat import FakeChat
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent


def get_weather(city: str) -> str:
    """Get weather for a given city."""
    return f"It's always sunny in {city}!"


model = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "get_weather", "args": {"city": "sf"}, "id": "call_w"}],
        },
        "The weather in sf is sunny.",
        "You asked about sf.",
    ]
)
agent = create_react_agent(
    model=model,
    tools=[get_weather],
    prompt="You are a helpful assistant",
    checkpointer=InMemorySaver(),
)
config = {"configurable": {"thread_id": "1"}}

for chunk in agent.stream(
    {"messages": [{"role": "user", "content": "what is the weather in sf"}]},
    config,
    stream_mode="updates",
):
    for node, update in chunk.items():
        print("Update from node", node)
        update["messages"][-1].pretty_print()
        print()

response = agent.invoke({"messages": [{"role": "user", "content": "what did I ask?"}]}, config)
print(response["messages"][-1].content)
print(len(response["messages"]))
for message in response["messages"]:
    print(type(message).__name__, repr(message.content))
