"""Prebuilt nodes: run tools, route, switch persona, trim memory; and the tool API they use."""

from flowgraph.nodes._persona import PersonaSwitch
from flowgraph.nodes._routing import ModelRouter, Router, tools_condition
from flowgraph.nodes._tool_node import ErrorHandler, ToolNode, pending_tool_calls
from flowgraph.nodes._trim import (
    TokenCounter,
    count_tokens_approximately,
    tiktoken_counter,
    trim_messages,
)
from flowgraph.tools import InjectedState, InjectedToolCallId, Tool, tool

__all__ = [
    "ErrorHandler",
    "InjectedState",
    "InjectedToolCallId",
    "ModelRouter",
    "PersonaSwitch",
    "Router",
    "TokenCounter",
    "Tool",
    "ToolNode",
    "count_tokens_approximately",
    "pending_tool_calls",
    "tiktoken_counter",
    "tool",
    "tools_condition",
    "trim_messages",
]
