from dataclasses import dataclass

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime, create_react_agent


@dataclass
class Context:
    user_id: str


@tool
def whoami(runtime: ToolRuntime[Context]) -> str:
    """Say who the user is."""
    return f"user {runtime.context.user_id}, call {runtime.tool_call_id}"


model = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "whoami", "args": {}, "id": "me1"}]},
        "You are u7.",
    ]
)
agent = create_react_agent(model, [whoami], context_schema=Context)
result = agent.invoke(
    {"messages": [HumanMessage(content="who am I?")]}, context=Context(user_id="u7")
)
print([m.content for m in result["messages"]])
