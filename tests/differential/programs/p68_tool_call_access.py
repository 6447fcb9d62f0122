from fake_chat import FakeChat
from langchain_core.messages import HumanMessage

llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [
                {"name": "search", "args": {"q": "owls"}, "id": "q1"},
                {"name": "search", "args": {"q": "bats"}, "id": "q2"},
            ],
        },
    ]
)
reply = llm.invoke([HumanMessage(content="look up owls and bats")])
print(type(reply).__name__, repr(reply.content))
for call in reply.tool_calls:
    print(call["name"], call["args"], call["id"])
print(len(reply.tool_calls))
