"""Bridges to other systems; each submodule is imported on its own, by name.

- `flowgraph.integrations.celery`: runs threads as Celery tasks, so any number
  of worker processes on any number of machines share one checkpoint store
  (`pip install 'flowgraph[celery]'`).
- `flowgraph.integrations.mcp`: the tools of MCP servers as flowgraph tools
  (`MCPClient`), and flowgraph apps as the tools of an MCP server
  (`create_mcp_server`, `flowgraph mcp APP`) (`pip install 'flowgraph[mcp]'`).
- `flowgraph.integrations.opentelemetry`: traces runs, node steps, model and
  tool calls as OpenTelemetry spans with the GenAI semantic conventions
  (`pip install 'flowgraph[otel]'`).

Nothing is imported here: `import flowgraph.integrations` never pulls in an
optional dependency.
"""

__all__: list[str] = []
