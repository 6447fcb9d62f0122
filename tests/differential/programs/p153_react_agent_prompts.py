import asyncio

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.graph import MessagesState
from langgraph.managed import RemainingSteps
from langgraph.prebuilt import ToolNode, create_react_agent


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text * 2


def call(reply):
    return {"content": "", "tool_calls": [{"name": "echo", "args": {"text": reply}, "id": "e"}]}


agent = create_react_agent(
    FakeChat([call("ab"), "done"]), ToolNode([echo]), prompt=SystemMessage(content="Be terse.")
)
out = agent.invoke({"messages": [HumanMessage(content="go")]})
print([(m.type, m.content) for m in out["messages"]])


class State(MessagesState):
    user: str
    remaining_steps: RemainingSteps


def prompt(state):
    return [SystemMessage(content=f"You help {state['user']}.")] + state["messages"]


agent = create_react_agent(
    FakeChat(["hello Kim"]), [echo], prompt=prompt, state_schema=State, name="helper"
)
out = agent.invoke({"messages": [HumanMessage(content="hi")], "user": "Kim"})
print(out["user"], [(m.type, m.content, m.name) for m in out["messages"]])


async def aprompt(state):
    return [SystemMessage(content="async rules")] + state["messages"]


agent = create_react_agent(FakeChat(["fine"]), [echo], prompt=aprompt)
out = asyncio.run(agent.ainvoke({"messages": [HumanMessage(content="how?")]}))
print([(m.type, m.content) for m in out["messages"]])
