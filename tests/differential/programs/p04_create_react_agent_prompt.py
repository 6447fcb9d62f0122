from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"It is always sunny in {city}"


model = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "get_weather", "args": {"city": "Lyon"}, "id": "w1"}],
        },
        "Sunny in Lyon.",
    ]
)
agent = create_react_agent(model, [get_weather], prompt="You are a terse weather bot.")
result = agent.invoke({"messages": [HumanMessage(content="Weather in Lyon?")]})
for m in result["messages"]:
    print(m.type, "|", m.content)
