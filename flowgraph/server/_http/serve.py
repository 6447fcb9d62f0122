"""`serve`: run the app with uvicorn, refusing to expose an unauthenticated API by accident."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph import CompiledGraph, StateGraph
from flowgraph.server._http.auth import is_loopback

if TYPE_CHECKING:
    import uvicorn

    from flowgraph.store import BaseStore

__all__ = ["TOKEN_ENV", "ExposureError", "running", "serve"]

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
    queue: str | None = None,
    cors_origins: Sequence[str] = (),
    store: BaseStore | None = None,
) -> None:
    """Serve `graphs` until interrupted (Ctrl-C or SIGTERM stop it cleanly)."""
    import uvicorn

    from flowgraph.server._http.app import create_app

    token = auth_token or os.environ.get(TOKEN_ENV) or None
    check_exposure(host, token, allow_unauthenticated=allow_unauthenticated)
    app = create_app(
        graphs,
        checkpointer=checkpointer,
        auth_token=token,
        queue=queue,
        cors_origins=cors_origins,
        store=store,
    )
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=10
    )
    _announcing_server()(config).run()


def inspector_url(host: str, port: int) -> str:
    """Where a browser on this machine finds the inspector of a server bound to host:port."""
    if host in ("", "0.0.0.0", "::"):  # every interface: this machine reaches it on loopback
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/ui/"


def _announcing_server() -> type[uvicorn.Server]:
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        """Says where the inspector is once the socket is bound (the port may have been 0)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.started or not self.servers:
                return
            port = self.servers[0].sockets[0].getsockname()[1]
            print(f"Inspector: {inspector_url(self.config.host, port)}", flush=True)

    return AnnouncingServer


@contextlib.contextmanager
def running(
    graphs: Mapping[str, CompiledGraph | StateGraph],
    *,
    checkpointer: BaseCheckpointer | None = None,
    port: int = 0,
    auth_token: str | None = None,
    store: BaseStore | None = None,
) -> Iterator[str]:
    """Serve `graphs` on 127.0.0.1 from a background thread; yields the base URL.

    For notebooks, scripts and tests that want the API and a client in one
    process; `port=0` takes a free port. Leaving the block stops the server
    (runs still going are asked to stop at their next step).
    """
    import uvicorn

    from flowgraph.server._http.app import create_app

    app = create_app(graphs, checkpointer=checkpointer, auth_token=auth_token, store=store)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        bound = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("The server did not start; see the log above")
            time.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{bound}"
        finally:
            server.should_exit = True
            thread.join(30)
