"""MCP (Model Context Protocol) both ways, on the official `mcp` SDK.

- `MCPClient`: the tools of MCP servers (stdio or streamable HTTP) as
  flowgraph `Tool`s, for `ToolNode`, `ModelNode` and `create_react_agent`,
  in sync and async runs.
- `create_mcp_server` / `flowgraph mcp APP`: flowgraph apps as tools of an
  MCP server, so an MCP host (a desktop assistant, an IDE) can talk to an
  agent, keeping a conversation going by its thread id.

`pip install 'flowgraph[mcp]'`.
"""

try:
    import mcp as _mcp  # noqa: F401  # the SDK must be there before anything below imports it
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "flowgraph.integrations.mcp needs the MCP SDK: pip install 'flowgraph[mcp]'"
    ) from exc

from flowgraph.integrations.mcp._client import (
    Connection,
    MCPClient,
    StdioConnection,
    StreamableHttpConnection,
)
from flowgraph.integrations.mcp._server import AgentReply, create_mcp_server, run_mcp_server
from flowgraph.integrations.mcp._tool import MCPTool, tool_message

__all__ = [
    "AgentReply",
    "Connection",
    "MCPClient",
    "MCPTool",
    "StdioConnection",
    "StreamableHttpConnection",
    "create_mcp_server",
    "run_mcp_server",
    "tool_message",
]
