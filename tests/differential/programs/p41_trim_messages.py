from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

history = [
    SystemMessage(content="You are helpful."),
    HumanMessage(content="one"),
    AIMessage(content="two"),
    HumanMessage(content="three"),
    AIMessage(content="four"),
    HumanMessage(content="five"),
]

kept = trim_messages(
    history, max_tokens=3, strategy="last", token_counter=len, include_system=True, start_on="human"
)
print([m.content for m in kept])
kept = trim_messages(history, max_tokens=2, strategy="first", token_counter=len)
print([m.content for m in kept])
kept = trim_messages(
    history, max_tokens=4, strategy="last", token_counter=len, include_system=False, end_on="ai"
)
print([m.content for m in kept])
