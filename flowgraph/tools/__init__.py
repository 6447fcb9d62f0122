"""Tools a model can call: `@tool`, `Tool`, and the markers for node-filled parameters."""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph.tools._docstring import ParsedDocstring, parse_docstring
    from flowgraph.tools._schema import InjectedState, InjectedStore, InjectedToolCallId, Injection
    from flowgraph.tools._tool import Tool, ToolResponseFormat, tool

_LAZY = {
    "ParsedDocstring": "flowgraph.tools._docstring",
    "parse_docstring": "flowgraph.tools._docstring",
    "InjectedState": "flowgraph.tools._schema",
    "InjectedStore": "flowgraph.tools._schema",
    "InjectedToolCallId": "flowgraph.tools._schema",
    "Injection": "flowgraph.tools._schema",
    "Tool": "flowgraph.tools._tool",
    "ToolResponseFormat": "flowgraph.tools._tool",
    "tool": "flowgraph.tools._tool",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.tools", _LAZY, globals())

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
