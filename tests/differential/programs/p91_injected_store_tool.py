from typing import Annotated

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore


@tool
def save_note(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a note."""
    store.put(("notes",), "latest", {"text": text})
    return "saved"


store = InMemoryStore()
model = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "save_note", "args": {"text": "buy milk"}, "id": "n"}],
        },
        "Saved your note.",
    ]
)
agent = create_react_agent(model, [save_note], store=store)
result = agent.invoke({"messages": [HumanMessage(content="note: buy milk")]})
print(result["messages"][-1].content, store.get(("notes",), "latest").value)
