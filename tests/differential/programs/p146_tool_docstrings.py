from langchain_core.tools import tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


@tool("search_tool", parse_docstring=True)
def search(query: str, limit: int = 3) -> list[str]:
    """Search the catalogue.

    Args:
        query: What to look for.
        limit: How many results to return.
    """
    return [f"{query} #{i}" for i in range(limit)]


@tool
def shout(text: str) -> str:
    """Repeat the text loudly."""
    return text.upper()


print(multiply.name)
print(multiply.description)
print(multiply.args)
print(multiply.invoke({"a": 6, "b": 7}))
print(search.name)
print(search.description)
print(search.args)
print(search.invoke({"query": "lamp", "limit": 2}))
print(shout.invoke({"text": "hi"}))
