"""`flowgraph mcp [NAME=]APP ...`: the apps as tools of an MCP server (stdio, or HTTP with --port).

A host (a desktop assistant, an IDE) starts `flowgraph mcp agent.py` as a
stdio server, or connects to `flowgraph mcp agent.py --port 8000` at
http://127.0.0.1:8000/mcp. The conversations are threads in the CLI's store
(`--db`), so `flowgraph threads`, `show` and `resume` see them too.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys

from flowgraph.cli._errors import CliError, UsageError
from flowgraph.cli._loader import load_app, named_spec
from flowgraph.cli._run import Console
from flowgraph.cli._store import Store
from flowgraph.graph import CompiledGraph

__all__ = ["add_mcp_parser", "cmd_mcp", "tool_name_of"]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""What MCP accepts as a tool name."""
tool_name_of = named_spec
"""(tool name, app spec) of `NAME=APP`; without NAME: the app's NAME, file stem or module."""


def add_mcp_parser(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "apps",
        metavar="[NAME=]APP",
        nargs="+",
        help="an app to serve as the tool NAME (default: its NAME, else the file stem or "
        "module name) = FILE.py[:NAME] or package.module[:NAME]",
    )
    command.add_argument(
        "--port", type=int, help="serve streamable HTTP on this port (default: stdio)"
    )
    command.add_argument("--host", default="127.0.0.1", help="address for --port (127.0.0.1)")


def cmd_mcp(args: argparse.Namespace, store: Store | None, console: Console) -> int:
    assert store is not None, "main() opens the store for every command but draw"
    try:
        from flowgraph.integrations.mcp import create_mcp_server, run_mcp_server
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    apps: dict[str, CompiledGraph] = {}
    specs: dict[str, str] = {}
    # a stdio server's stdout is the protocol: whatever an app prints on import goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
        for given in args.apps:
            name, spec = tool_name_of(given)
            if not _NAME.fullmatch(name):
                raise UsageError(f"{name!r} is not a valid MCP tool name; name it: NAME=APP")
            if name in apps:
                raise UsageError(f"Two apps are served as tool {name!r}; name them: NAME=APP")
            loaded = load_app(spec)
            apps[name] = store.bind(loaded.app)
            specs[name] = loaded.spec
    server = create_mcp_server(
        apps, on_new_thread=lambda tool, thread_id: store.record_app(thread_id, specs[tool])
    )
    where = "stdio" if args.port is None else f"http://{args.host}:{args.port}/mcp"
    console.err.write(
        f"flowgraph: MCP server on {where}, tools: {', '.join(apps)}; threads in {store.location}\n"
    )
    if args.port is not None and args.host not in ("127.0.0.1", "localhost", "::1"):
        console.err.write(
            f"flowgraph: warning: --host {args.host} serves the agents without "
            "authentication to anyone who can reach this address\n"
        )
    console.err.flush()
    import anyio

    anyio.run(lambda: run_mcp_server(server, port=args.port, host=args.host))
    return 0
