from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.message import add_messages

left = [HumanMessage(content="hi", id="1"), AIMessage(content="draft", id="2")]
right = [AIMessage(content="final", id="2"), HumanMessage(content="thanks", id="3")]
merged = add_messages(left, right)
print([(m.id, m.content) for m in merged])
print([(m.id, m.type) for m in add_messages(merged, [("user", "tuple form")])][-1][1])
print([m.content for m in add_messages([], {"role": "assistant", "content": "dict form"})])
