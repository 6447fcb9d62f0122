"""Tools a model can call: `@tool`, `Tool`, and the markers for node-filled parameters."""

from flowgraph.tools._docstring import ParsedDocstring, parse_docstring
from flowgraph.tools._schema import InjectedState, InjectedStore, InjectedToolCallId, Injection
from flowgraph.tools._tool import Tool, ToolResponseFormat, tool

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "Injection",
    "ParsedDocstring",
    "Tool",
    "ToolResponseFormat",
    "parse_docstring",
    "tool",
]
