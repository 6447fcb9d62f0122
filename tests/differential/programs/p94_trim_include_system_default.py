from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

history = [
    SystemMessage(content="rules"),
    HumanMessage(content="q1"),
    AIMessage(content="a1"),
    HumanMessage(content="q2"),
]
print([m.content for m in trim_messages(history, max_tokens=2, strategy="last", token_counter=len)])
