from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent


def book(flight: str) -> str:
    """Book a flight."""
    return f"booked {flight}"


model = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "book", "args": {"flight": "AF12"}, "id": "b1"}]},
        "Your flight AF12 is booked.",
    ]
)
agent = create_react_agent(model, [book], checkpointer=InMemorySaver(), interrupt_before=["tools"])
config = {"configurable": {"thread_id": "bk"}}
agent.invoke({"messages": [HumanMessage(content="book AF12")]}, config)
state = agent.get_state(config)
print(state.next, state.values["messages"][-1].tool_calls[0]["name"])
result = agent.invoke(None, config)
print([m.content for m in result["messages"]])
