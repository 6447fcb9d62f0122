"""`flowgraph serve [ID=]APP ...`: the apps behind the LangGraph Server API (flowgraph.server)."""

from __future__ import annotations

import argparse

from flowgraph.cli._errors import CliError, UsageError
from flowgraph.cli._loader import load_app, named_spec
from flowgraph.cli._run import Console
from flowgraph.cli._store import Store
from flowgraph.graph import CompiledGraph

__all__ = ["add_serve_parser", "cmd_serve"]


def add_serve_parser(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "apps",
        metavar="[ID=]APP",
        nargs="+",
        help="an app to serve, as graph ID (default: its NAME, else the file stem or module "
        "name) = FILE.py[:NAME] or package.module[:NAME]",
    )
    command.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    command.add_argument("--port", type=int, default=2024, help="port to listen on (2024)")
    command.add_argument(
        "--auth-token",
        metavar="TOKEN",
        help="require this token (x-api-key or Authorization: Bearer); also $FLOWGRAPH_API_TOKEN",
    )
    command.add_argument(
        "--cors-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="let web pages of this origin call the API from a browser (repeatable; * for any)",
    )
    command.add_argument(
        "--queue",
        metavar="BROKER_URL",
        help="hand runs to Celery workers (flowgraph.integrations.celery) on this broker",
    )
    command.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve a non-loopback --host without a token (a proxy in front checks callers)",
    )


def cmd_serve(args: argparse.Namespace, store: Store | None, console: Console) -> int:
    assert store is not None, "main() opens the store for every command but draw"
    try:
        from flowgraph.server import serve
        from flowgraph.server._http.serve import ExposureError
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    graphs: dict[str, CompiledGraph] = {}
    for spec in args.apps:
        graph_id, app_spec = named_spec(spec)
        if graph_id in graphs:
            raise UsageError(f"Two apps are served as {graph_id!r}; name them: ID=APP")
        # an app compiled with a long-term store gets the one --db names, as under `run`
        graphs[graph_id] = store.bind(load_app(app_spec).app)
    try:
        serve(
            graphs,
            checkpointer=store.checkpointer,
            host=args.host,
            port=args.port,
            auth_token=args.auth_token,
            allow_unauthenticated=args.allow_unauthenticated,
            queue=args.queue,
            cors_origins=args.cors_origin,
            store=store.long_term(),  # the /store routes serve the store --db names
        )
    except ExposureError as exc:
        raise UsageError(str(exc)) from exc
    return 0
