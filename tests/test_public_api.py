"""The public surface: `flowgraph.__all__` is complete, sorted, and every name is real."""

from __future__ import annotations

import importlib

import pytest

import flowgraph

SUBPACKAGES = [
    "flowgraph.errors",
    "flowgraph.models",
    "flowgraph.messages",
    "flowgraph.graph",
    "flowgraph.nodes",
    "flowgraph.prompts",
]
SUBPACKAGE_ONLY = {
    # helpers and type aliases kept in their subpackage, on purpose
    "ErrorHandler", "TokenCounter", "Memory", "pending_tool_calls", "mend_tool_calls",
    "MISSING_TOOL_RESULT",
    "OPENAI_FILE_URL_PREFIX", "ChunkPart", "coerce_message", "coerce_messages", "merge_chunks",
    "DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "BaseChatModel", "HttpChatModel", "ChatModelListener",
    "ModelErrorEvent", "ModelRequestEvent", "ModelResponseEvent", "ResponseFormat",
    "ScriptedReply", "ScriptedRequest", "StreamingHandler", "ToolChoice", "ToolLike", "ToolSpec",
    "tool_specs", "StreamMode", "CompiledGraph", "Interrupt",
}  # fmt: skip
DESIGN_NAMES = {
    # §1 messages
    "SystemMessage", "HumanMessage", "UserMessage", "AIMessage", "AssistantMessage",
    "ToolMessage", "ToolResponseMessage", "RemoveMessage", "TextPart", "ImagePart",
    "AudioPart", "VideoPart", "FilePart", "ReasoningPart", "ToolCallPart", "ToolCall",
    "InvalidToolCall", "Usage", "AnyMessage", "messages_to_dicts", "messages_from_dicts",
    "to_openai", "from_openai",
    # §2 state
    "MessagesState", "add_messages",
    # §3 graph
    "StateGraph", "START", "END", "Command", "Send", "interrupt", "RetryPolicy", "Budget",
    # §4 nodes
    "ModelNode", "ToolNode", "tools_condition", "Router", "PersonaSwitch", "tool",
    "trim_messages",
    # §5 models
    "ChatModel", "ChatOptions", "OpenAIChatModel", "OllamaChatModel", "AnthropicChatModel",
    "ScriptedChatModel", "init_chat_model", "AIMessageChunk",
    # §9
    "REMOVE_ALL_MESSAGES", "StateSnapshot", "StreamPart",
    "FlowgraphError", "GraphValidationError", "GraphRecursionError", "BudgetExceededError",
    "ConcurrentRunError", "SerializationError", "DeserializationError", "ModelError",
    "ToolError",
}  # fmt: skip


def isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[0].isupper() else (2, name)


def test_all_is_sorted_and_unique() -> None:
    assert flowgraph.__all__ == sorted(set(flowgraph.__all__), key=isort_key)


def test_every_exported_name_exists() -> None:
    missing = [name for name in flowgraph.__all__ if not hasattr(flowgraph, name)]
    assert missing == []


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_subpackage_names_are_re_exported_as_the_same_objects(package: str) -> None:
    module = importlib.import_module(package)
    names = [n for n in module.__all__ if n not in SUBPACKAGE_ONLY]
    not_exported = [n for n in names if n not in flowgraph.__all__]
    assert not_exported == []
    assert all(getattr(flowgraph, n) is getattr(module, n) for n in names)


def test_design_names_are_exported() -> None:
    assert DESIGN_NAMES - set(flowgraph.__all__) == set()


def test_every_subpackage_all_is_sorted() -> None:
    for package in [*SUBPACKAGES, "flowgraph.models", "flowgraph.tools", "flowgraph.checkpoint"]:
        names = importlib.import_module(package).__all__
        assert names == sorted(set(names), key=isort_key), package
