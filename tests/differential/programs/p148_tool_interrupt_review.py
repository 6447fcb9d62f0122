from fake_chat import FakeChat
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command, interrupt


@tool
def book_hotel(hotel_name: str) -> str:
    """Book a hotel."""
    response = interrupt(
        f"Trying to call `book_hotel` with args {{'hotel_name': {hotel_name}}}. "
        "Please approve or suggest edits."
    )
    if response["type"] == "accept":
        pass
    elif response["type"] == "edit":
        hotel_name = response["args"]["hotel_name"]
    else:
        raise ValueError(f"Unknown response type: {response['type']}")
    return f"Successfully booked a stay at {hotel_name}."


model = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [
                {"name": "book_hotel", "args": {"hotel_name": "McKittrick Hotel"}, "id": "b1"}
            ],
        },
        "Your stay at the McKittrick Hotel is booked.",
    ]
)
agent = create_react_agent(model=model, tools=[book_hotel], checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}

for chunk in agent.stream(
    {"messages": [{"role": "user", "content": "book a stay at McKittrick hotel"}]}, config
):
    print(chunk)
    print("\n")

for chunk in agent.stream(Command(resume={"type": "accept"}), config):
    print(chunk)
    print("\n")
