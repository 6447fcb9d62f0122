"""flowgraph: multi-step LLM agents as graphs, with a checkpoint after every step."""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports
from flowgraph.errors import (
    AuthenticationError,
    BadRequestError,
    BudgetExceededError,
    ConcurrentRunError,
    DeserializationError,
    DiagramError,
    FlowgraphError,
    GraphRecursionError,
    GraphValidationError,
    InvalidMessageError,
    InvalidUpdateError,
    MalformedResponseError,
    MCPConnectionError,
    MCPError,
    MCPTimeoutError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SerializationError,
    ServerError,
    StoreError,
    ToolError,
)
from flowgraph.graph import (
    END,
    START,
    Budget,
    CachePolicy,
    Command,
    CompiledGraph,
    InMemoryCache,
    Interrupt,
    RetryPolicy,
    RunnableConfig,
    Runtime,
    Send,
    StateGraph,
    StateSnapshot,
    StreamMode,
    StreamPart,
    ToolRuntime,
    _diagrams,
    aonce,
    get_config,
    get_runtime,
    interrupt,
    once,
)
from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AIContentPart,
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    AssistantMessage,
    AudioPart,
    BaseMessage,
    ContentPart,
    FilePart,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    MediaPart,
    MessageLike,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallChunk,
    ToolCallPart,
    ToolMessage,
    ToolResponseMessage,
    Usage,
    UserMessage,
    VideoPart,
    from_openai,
    messages_from_dicts,
    messages_to_dicts,
    to_openai,
)
from flowgraph.models import ChatModel, ChatOptions, ScriptedChatModel
from flowgraph.nodes import (
    Agent,
    ModelNode,
    ModelRouter,
    PersonaSwitch,
    Router,
    ToolNode,
    count_tokens_approximately,
    create_react_agent,
    tiktoken_counter,
    tools_condition,
    trim_messages,
)
from flowgraph.prompts import PromptTemplate, SystemPromptTemplate
from flowgraph.reducers import MessageList, add_messages
from flowgraph.state import MessagesState, RemainingSteps
from flowgraph.tools import InjectedState, InjectedStore, InjectedToolCallId, Tool, tool

if _typing.TYPE_CHECKING:
    from flowgraph.models import (
        AnthropicChatModel,
        OllamaChatModel,
        OpenAIChatModel,
        init_chat_model,
    )
    from flowgraph.viz import (
        Diagram,
        DiagramEdge,
        DiagramNode,
        build_diagram,
        render,
        to_ascii,
        to_dot,
        to_html,
        to_mermaid,
        to_mermaid_sequence,
        to_svg,
    )

_LAZY = {
    # the HTTP adapters: their modules import httpx (see flowgraph.models)
    "AnthropicChatModel": "flowgraph.models",
    "OllamaChatModel": "flowgraph.models",
    "OpenAIChatModel": "flowgraph.models",
    "init_chat_model": "flowgraph.models",
    # diagrams: drawing code no run needs
    "Diagram": "flowgraph.viz",
    "DiagramEdge": "flowgraph.viz",
    "DiagramNode": "flowgraph.viz",
    "build_diagram": "flowgraph.viz",
    "render": "flowgraph.viz",
    "to_ascii": "flowgraph.viz",
    "to_dot": "flowgraph.viz",
    "to_html": "flowgraph.viz",
    "to_mermaid": "flowgraph.viz",
    "to_mermaid_sequence": "flowgraph.viz",
    "to_svg": "flowgraph.viz",
}
"""Names loaded on first use, so `import flowgraph` stays quick (a cold process that
resumes a thread pays for neither httpx nor the diagram code)."""


__getattr__, __dir__ = _lazy_exports("flowgraph", _LAZY, globals())


def _install_lazy_diagrams() -> None:
    """Point the compiled graph's diagram methods at `flowgraph.viz`, imported on first use.

    Importing `flowgraph.viz` registers its own functions, replacing these.
    """

    def through_viz(name: str) -> _typing.Any:
        def call(*args: _typing.Any) -> _typing.Any:
            import flowgraph.viz  # noqa: F401  # registers the real diagram functions

            return getattr(_diagrams.diagram_functions(), name)(*args)

        return call

    _diagrams.register_diagram_functions(
        _diagrams.DiagramFunctions(
            to_mermaid=through_viz("to_mermaid"),
            to_dot=through_viz("to_dot"),
            to_ascii=through_viz("to_ascii"),
            to_mermaid_sequence=through_viz("to_mermaid_sequence"),
            render=through_viz("render"),
        )
    )


_install_lazy_diagrams()


__all__ = [
    "END",
    "REMOVE_ALL_MESSAGES",
    "START",
    "AIContentPart",
    "AIMessage",
    "AIMessageChunk",
    "Agent",
    "AnthropicChatModel",
    "AnyMessage",
    "AssistantMessage",
    "AudioPart",
    "AuthenticationError",
    "BadRequestError",
    "BaseMessage",
    "Budget",
    "BudgetExceededError",
    "CachePolicy",
    "ChatModel",
    "ChatOptions",
    "Command",
    "CompiledGraph",
    "ConcurrentRunError",
    "ContentPart",
    "DeserializationError",
    "Diagram",
    "DiagramEdge",
    "DiagramError",
    "DiagramNode",
    "FilePart",
    "FlowgraphError",
    "GraphRecursionError",
    "GraphValidationError",
    "HumanMessage",
    "ImagePart",
    "InMemoryCache",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "Interrupt",
    "InvalidMessageError",
    "InvalidToolCall",
    "InvalidUpdateError",
    "MCPConnectionError",
    "MCPError",
    "MCPTimeoutError",
    "MalformedResponseError",
    "MediaPart",
    "MessageLike",
    "MessageList",
    "MessagesState",
    "ModelConnectionError",
    "ModelError",
    "ModelNode",
    "ModelRouter",
    "ModelTimeoutError",
    "NotFoundError",
    "OllamaChatModel",
    "OpenAIChatModel",
    "PermissionDeniedError",
    "PersonaSwitch",
    "PromptTemplate",
    "RateLimitError",
    "ReasoningPart",
    "RemainingSteps",
    "RemoveMessage",
    "RetryPolicy",
    "Router",
    "RunnableConfig",
    "Runtime",
    "ScriptedChatModel",
    "Send",
    "SerializationError",
    "ServerError",
    "StateGraph",
    "StateSnapshot",
    "StoreError",
    "StreamMode",
    "StreamPart",
    "SystemMessage",
    "SystemPromptTemplate",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolCallChunk",
    "ToolCallPart",
    "ToolError",
    "ToolMessage",
    "ToolNode",
    "ToolResponseMessage",
    "ToolRuntime",
    "Usage",
    "UserMessage",
    "VideoPart",
    "add_messages",
    "aonce",
    "build_diagram",
    "count_tokens_approximately",
    "create_react_agent",
    "from_openai",
    "get_config",
    "get_runtime",
    "init_chat_model",
    "interrupt",
    "messages_from_dicts",
    "messages_to_dicts",
    "once",
    "render",
    "tiktoken_counter",
    "to_ascii",
    "to_dot",
    "to_html",
    "to_mermaid",
    "to_mermaid_sequence",
    "to_openai",
    "to_svg",
    "tool",
    "tools_condition",
    "trim_messages",
]
