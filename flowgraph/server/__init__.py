"""Agents over HTTP: the LangGraph Server API served from flowgraph's own store.

    from flowgraph.server import create_app
    asgi = create_app({"agent": app}, checkpointer=SQLiteCheckpointer("chat.db"))

or from the command line: `flowgraph serve agent=agent.py --db chat.db`.
Needs the `server` extra: pip install 'flowgraph[server]'.
"""

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        f"flowgraph.server needs Starlette and uvicorn: pip install 'flowgraph[server]' ({exc})"
    ) from exc

from flowgraph.server._http.app import create_app
from flowgraph.server._http.serve import running, serve

__all__ = ["create_app", "running", "serve"]
