"""`tool.args` reads as LangChain's: each argument's JSON schema by name, titles kept."""

from __future__ import annotations

from typing import Annotated

from langchain_core import tools as lc

from flowgraph import InjectedToolCallId, tool


def search(query: str, limit: int = 3) -> list[str]:
    """Search the catalogue.

    Args:
        query: What to look for.
        limit: How many results to return.
    """
    return [query] * limit


def test_args_are_langchains() -> None:
    ours = tool("search_tool", parse_docstring=True)(search)
    theirs = lc.tool("search_tool", parse_docstring=True)(search)
    assert ours.args == theirs.args
    assert ours.args["limit"] == {
        "default": 3,
        "description": "How many results to return.",
        "title": "Limit",
        "type": "integer",
    }


def test_injected_parameters_are_not_arguments() -> None:
    @tool
    def save(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Save a note."""
        return note

    assert save.args == {"note": {"title": "Note", "type": "string"}}
