"""`serve`: run the app with uvicorn, refusing to expose an unauthenticated API by accident."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph import CompiledGraph, StateGraph
from flowgraph.server._auth import is_loopback

__all__ = ["TOKEN_ENV", "ExposureError", "serve"]

TOKEN_ENV = "FLOWGRAPH_API_TOKEN"
log = logging.getLogger("flowgraph.server")


class ExposureError(ValueError):
    """Serving without a token on an address other machines reach, without being told to."""


def check_exposure(host: str, token: str | None, *, allow_unauthenticated: bool) -> None:
    """Refuse a non-loopback host without a token unless `allow_unauthenticated`; log why."""
    if token or is_loopback(host) or allow_unauthenticated:
        if not token and not is_loopback(host):
            log.warning(
                "Serving on %s without a token: anyone who reaches this address can run the "
                "graphs and read every thread",
                host,
            )
        return
    message = (
        f"Refusing to serve on {host} without a token: anyone who reaches it could run the "
        f"graphs and read every thread. Pass --auth-token (or set ${TOKEN_ENV}), bind "
        "127.0.0.1, or pass --allow-unauthenticated if a proxy in front checks callers."
    )
    log.error(message)
    raise ExposureError(message)


def serve(
    graphs: Mapping[str, CompiledGraph | StateGraph],
    *,
    checkpointer: BaseCheckpointer | None = None,
    host: str = "127.0.0.1",
    port: int = 2024,
    auth_token: str | None = None,
    allow_unauthenticated: bool = False,
    log_level: str = "info",
) -> None:
    """Serve `graphs` until interrupted (Ctrl-C or SIGTERM stop it cleanly)."""
    import uvicorn

    from flowgraph.server._app import create_app

    token = auth_token or os.environ.get(TOKEN_ENV) or None
    check_exposure(host, token, allow_unauthenticated=allow_unauthenticated)
    app = create_app(graphs, checkpointer=checkpointer, auth_token=token)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=10)
