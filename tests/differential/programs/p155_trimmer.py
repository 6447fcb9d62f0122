from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

history = [
    SystemMessage(content="be kind"),
    HumanMessage(content="first question"),
    AIMessage(content="first answer"),
    HumanMessage(content="second question"),
]
trimmer = trim_messages(max_tokens=3, strategy="last", token_counter=len, include_system=True)
print([m.content for m in trimmer.invoke(history)])
kept = trim_messages(
    history,
    max_tokens=2,
    strategy="first",
    token_counter=len,
    allow_partial=True,
)
print([m.content for m in kept])


def words(messages):
    return sum(len(str(m.content).split()) for m in messages)


kept = trim_messages(
    history, max_tokens=4, strategy="last", token_counter=words, include_system=True
)
print([m.content for m in kept])
kept = trim_messages(
    history,
    max_tokens=5,
    strategy="last",
    token_counter=words,
    include_system=False,
    start_on="human",
    end_on="human",
)
print([m.content for m in kept])
