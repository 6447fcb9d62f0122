from typing import Annotated

from fake_chat import FakeChat
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.managed import RemainingSteps
from langgraph.prebuilt import InjectedState, create_react_agent
from langgraph.types import Command


class CustomState(MessagesState):
    user_name: str
    remaining_steps: RemainingSteps


@tool
def update_user_info(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Look up and update user info."""
    user_name = "John Smith"
    return Command(
        update={
            "user_name": user_name,
            "messages": [
                ToolMessage("Successfully looked up user information", tool_call_id=tool_call_id)
            ],
        }
    )


@tool
def greet(state: Annotated[CustomState, InjectedState]) -> str:
    """Use this to greet the user once you found their info."""
    user_name = state["user_name"]
    return f"Hello {user_name}!"


model = FakeChat(
    [
        {"content": "", "tool_calls": [{"name": "update_user_info", "args": {}, "id": "c1"}]},
        {"content": "", "tool_calls": [{"name": "greet", "args": {}, "id": "c2"}]},
        "Hello John Smith! How can I help?",
    ]
)
agent = create_react_agent(
    model=model,
    tools=[update_user_info, greet],
    state_schema=CustomState,
    checkpointer=InMemorySaver(),
)
config = {"configurable": {"thread_id": "1"}}
for chunk in agent.stream({"messages": [{"role": "user", "content": "greet the user"}]}, config):
    print(chunk)
state = agent.get_state(config)
print(state.values["user_name"])
print(greet.name, "|", greet.description)
print(update_user_info.name, "|", update_user_info.description)
