from langchain_core.messages import AIMessage

call = {"name": "search", "args": {"q": "owls"}, "id": "s1"}
listed = AIMessage(content=[{"type": "text", "text": "Looking."}], tool_calls=[call])
print(repr(listed.content))
print(listed.text, [c["name"] for c in listed.tool_calls])
plain = AIMessage(content="Looking.", tool_calls=[call])
print(repr(plain.content), [b["type"] for b in plain.content_blocks])
