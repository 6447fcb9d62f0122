"""Prebuilt nodes: run tools, route, switch persona, trim memory; and the tool API they use."""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph.nodes._persona import PersonaSwitch
    from flowgraph.nodes._routing import ModelRouter, Router, tools_condition
    from flowgraph.nodes._tool_node import ErrorHandler, ToolNode, pending_tool_calls
    from flowgraph.nodes._trim import (
        TokenCounter,
        count_tokens_approximately,
        tiktoken_counter,
        trim_messages,
    )
    from flowgraph.nodes.agent import Agent, create_react_agent
    from flowgraph.nodes.model import MISSING_TOOL_RESULT, Memory, ModelNode, mend_tool_calls
    from flowgraph.tools import InjectedState, InjectedStore, InjectedToolCallId, Tool, tool

_LAZY = {
    "PersonaSwitch": "flowgraph.nodes._persona",
    "ModelRouter": "flowgraph.nodes._routing",
    "Router": "flowgraph.nodes._routing",
    "tools_condition": "flowgraph.nodes._routing",
    "ErrorHandler": "flowgraph.nodes._tool_node",
    "ToolNode": "flowgraph.nodes._tool_node",
    "pending_tool_calls": "flowgraph.nodes._tool_node",
    "TokenCounter": "flowgraph.nodes._trim",
    "count_tokens_approximately": "flowgraph.nodes._trim",
    "tiktoken_counter": "flowgraph.nodes._trim",
    "trim_messages": "flowgraph.nodes._trim",
    "Agent": "flowgraph.nodes.agent",
    "create_react_agent": "flowgraph.nodes.agent",
    "MISSING_TOOL_RESULT": "flowgraph.nodes.model",
    "Memory": "flowgraph.nodes.model",
    "ModelNode": "flowgraph.nodes.model",
    "mend_tool_calls": "flowgraph.nodes.model",
    "InjectedState": "flowgraph.tools",
    "InjectedStore": "flowgraph.tools",
    "InjectedToolCallId": "flowgraph.tools",
    "Tool": "flowgraph.tools",
    "tool": "flowgraph.tools",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.nodes", _LAZY, globals())

__all__ = [
    "MISSING_TOOL_RESULT",
    "Agent",
    "ErrorHandler",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "Memory",
    "ModelNode",
    "ModelRouter",
    "PersonaSwitch",
    "Router",
    "TokenCounter",
    "Tool",
    "ToolNode",
    "count_tokens_approximately",
    "create_react_agent",
    "mend_tool_calls",
    "pending_tool_calls",
    "tiktoken_counter",
    "tool",
    "tools_condition",
    "trim_messages",
]
