from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

messages = [
    SystemMessage(content="Be brief."),
    HumanMessage(content="Weather?"),
    AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "w9"}]),
    ToolMessage(content="rain", tool_call_id="w9", name="weather"),
    AIMessage(content="Rain in Oslo.", name="forecaster"),
]
for m in messages:
    m.pretty_print()
print(messages[-1].pretty_repr())
