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
from flowgraph.nodes.agent import Agent, create_react_agent
from flowgraph.nodes.model import MISSING_TOOL_RESULT, Memory, ModelNode, mend_tool_calls
from flowgraph.tools import InjectedState, InjectedStore, InjectedToolCallId, Tool, tool

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
