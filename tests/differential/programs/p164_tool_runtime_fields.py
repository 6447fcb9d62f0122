from dataclasses import dataclass

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime, create_react_agent
from langgraph.store.memory import InMemoryStore


@dataclass
class Ctx:
    team: str


@tool
def inspect(topic: str, runtime: ToolRuntime[Ctx]) -> str:
    """Inspect the run."""
    saved = runtime.store.get(("teams",), runtime.context.team)
    count = len(runtime.state["messages"])
    thread = runtime.config["configurable"]["thread_id"]
    return f"{topic}: {saved.value['lead']}, {count} messages, {thread}, {runtime.tool_call_id}"


@tool
def where(config: RunnableConfig) -> str:
    """Say where the call runs."""
    return f"thread {config['configurable']['thread_id']}"


store = InMemoryStore()
store.put(("teams",), "red", {"lead": "Ada"})
model = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [
                {"name": "inspect", "args": {"topic": "status"}, "id": "i1"},
                {"name": "where", "args": {}, "id": "w1"},
            ],
        },
        "All good.",
    ]
)
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

agent = create_react_agent(
    model, [inspect, where], context_schema=Ctx, store=store, checkpointer=InMemorySaver()
)
result = agent.invoke(
    {"messages": [HumanMessage(content="status?")]},
    {"configurable": {"thread_id": "t9"}},
    context=Ctx(team="red"),
)
print([m.content for m in result["messages"]])
