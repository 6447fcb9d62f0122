from fake_chat import FakeChat
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


model = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}, "id": "a1"}]},
        "2 + 3 = 5",
        "You asked me to add 2 and 3.",
    ]
)
agent = create_react_agent(model, [add], checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "t"}}
out = agent.invoke({"messages": [{"role": "user", "content": "add 2 and 3"}]}, config)
print(out["messages"][-1].content)
out = agent.invoke({"messages": [{"role": "user", "content": "what did I ask?"}]}, config)
print(out["messages"][-1].content)
print([m.type for m in agent.get_state(config).values["messages"]])
