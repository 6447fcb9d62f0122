"""The one exception tree of flowgraph.

Every error is also the builtin a caller already catches, and carries the
context that located it (node, key, tool call id, thread) as attributes::

    FlowgraphError
    ├── InvalidMessageError        (ValueError)    a message or role that cannot be built
    ├── InvalidUpdateError         (ValueError)    a node update the state rejects
    ├── GraphValidationError       (ValueError)    compile() found a broken graph
    ├── GraphRecursionError        (RecursionError) recursion_limit reached
    ├── BudgetExceededError        (RuntimeError)  a run used more than its Budget
    ├── ConcurrentRunError         (RuntimeError)  two writers on one thread
    ├── SerializationError         (TypeError)     a value the codec cannot encode
    ├── DeserializationError       (ValueError)    bytes the codec cannot decode
    ├── DiagramError               (ValueError)    a diagram that cannot be drawn
    ├── StoreError                 (ValueError)    a long-term store request it cannot serve
    ├── ToolError                  (RuntimeError)  a tool failed (handle_errors=False)
    │   └── MCPError                               an MCP server or one of its tools failed
    │       ├── MCPConnectionError (also ConnectionError)  would not start, unreachable, dropped
    │       └── MCPTimeoutError    (also TimeoutError)     a call outlived its timeout
    └── ModelError                 (RuntimeError)  a chat model call failed
        ├── AuthenticationError        401
        ├── PermissionDeniedError      403
        ├── NotFoundError              404
        ├── BadRequestError            400 / 422, or a body saying the request is malformed
        ├── RateLimitError             429
        ├── ServerError                5xx
        ├── ModelTimeoutError          (also TimeoutError)
        ├── ModelConnectionError       (also ConnectionError)
        └── MalformedResponseError     a reply that does not parse
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceededError",
    "ConcurrentRunError",
    "DeserializationError",
    "DiagramError",
    "FlowgraphError",
    "GraphRecursionError",
    "GraphValidationError",
    "InvalidMessageError",
    "InvalidUpdateError",
    "MCPConnectionError",
    "MCPError",
    "MCPTimeoutError",
    "MalformedResponseError",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "SerializationError",
    "ServerError",
    "StoreError",
    "ToolError",
]


class FlowgraphError(Exception):
    """Root of every error flowgraph raises on purpose."""


class InvalidMessageError(FlowgraphError, ValueError):
    """A message, role or message list that cannot be built or merged."""

    def __init__(self, message: str, *, message_id: str | None = None) -> None:
        super().__init__(message)
        self.message_id = message_id


class InvalidUpdateError(FlowgraphError, ValueError):
    """A node returned an update the state schema rejects."""

    def __init__(self, message: str, *, node: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.node = node
        self.key = key


class GraphValidationError(FlowgraphError, ValueError):
    """The graph cannot run as built; the message names the node and the fix."""

    def __init__(self, message: str, *, node: str | None = None) -> None:
        super().__init__(message)
        self.node = node


class GraphRecursionError(FlowgraphError, RecursionError):
    """A run took more supersteps than its recursion_limit."""

    def __init__(self, message: str, *, limit: int, nodes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.limit = limit
        self.nodes = nodes


class BudgetExceededError(FlowgraphError, RuntimeError):
    """A run used more model calls, tool calls or tokens than its Budget allows.

    The run stops after its last complete step, which is checkpointed and
    resumable with a larger budget.
    """

    def __init__(self, message: str, *, limit_name: str, limit: int, used: int) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.limit = limit
        self.used = used


class ConcurrentRunError(FlowgraphError, RuntimeError):
    """Another run holds (or wrote to) the same thread; nothing of this run was stored.

    `run_id` names the run that holds the thread, when it is known.
    """

    def __init__(self, message: str, *, thread_id: str, run_id: str | None = None) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.run_id = run_id


class SerializationError(FlowgraphError, TypeError):
    """A value the checkpoint codec cannot encode; `path` says where it sits."""

    def __init__(self, message: str, *, path: str = "", type_name: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.type_name = type_name


class DeserializationError(FlowgraphError, ValueError):
    """Bytes that are not a checkpoint this codec wrote, or name an unregistered type."""


class DiagramError(FlowgraphError, ValueError):
    """A diagram that cannot be drawn: a thread with no history, an unknown format."""

    def __init__(self, message: str, *, thread_id: str | None = None) -> None:
        super().__init__(message)
        self.thread_id = thread_id


class StoreError(FlowgraphError, ValueError):
    """A long-term store request that cannot be served: a bad namespace, key, value,
    filter, or an embedding that does not fit the store's index."""

    def __init__(
        self, message: str, *, namespace: tuple[str, ...] | None = None, key: str | None = None
    ) -> None:
        super().__init__(message)
        self.namespace = namespace
        self.key = key


class ToolError(FlowgraphError, RuntimeError):
    """A tool call failed and the ToolNode was asked not to turn it into a message."""

    def __init__(
        self, message: str, *, tool_name: str | None = None, tool_call_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id


class MCPError(ToolError):
    """An MCP server could not serve a request; `server` names it, `tool_name` the tool."""

    def __init__(
        self,
        message: str,
        *,
        server: str,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        super().__init__(message, tool_name=tool_name, tool_call_id=tool_call_id)
        self.server = server


class MCPConnectionError(MCPError, ConnectionError):
    """An MCP server would not start, could not be reached, or dropped the connection twice."""


class MCPTimeoutError(MCPError, TimeoutError):
    """An MCP request outlived its timeout; the server was asked to cancel it."""


class ModelError(FlowgraphError, RuntimeError):
    """A chat model call failed; `status_code` and `provider_message` say how."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        provider_message: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.provider_message = provider_message
        self.retry_after = retry_after


class AuthenticationError(ModelError):
    """The provider rejected the API key (401); check FLOWGRAPH_API_KEY or api_key=."""


class PermissionDeniedError(ModelError):
    """The key is valid but may not use this model or endpoint (403)."""


class NotFoundError(ModelError):
    """The model or endpoint does not exist (404); check the model name and base_url."""


class BadRequestError(ModelError):
    """The provider refused the request (400/422, or any status whose body says the request
    itself is malformed); `provider_message` says why. Never retried."""


class RateLimitError(ModelError):
    """Too many requests (429); retried with backoff honouring Retry-After."""


class ServerError(ModelError):
    """The provider failed (5xx); retried with backoff."""


class ModelTimeoutError(ModelError, TimeoutError):
    """The provider did not answer within the configured timeout."""


class ModelConnectionError(ModelError, ConnectionError):
    """The provider could not be reached; check base_url and the network."""


class MalformedResponseError(ModelError):
    """The provider answered with something that is not its documented format."""
