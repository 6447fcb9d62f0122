"""The `flowgraph` command: run an app, and inspect, resume, fork, export and tidy its threads.

    flowgraph run agent.py "Weather in Paris?" --thread t1
    flowgraph history t1
    flowgraph show t1
    flowgraph resume t1 --value '"yes"'

Global options (`--db PATH_OR_URL`, also `FLOWGRAPH_DB`; `--debug`) are
accepted before or after the subcommand. Exit status: 0 done, 1 an error
(one line on stderr; `--debug` adds the traceback), 2 a usage error, 3 a
run paused waiting for a resume value, 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from flowgraph.cli._commands import COMMANDS
from flowgraph.cli._errors import EXIT_BUSY, EXIT_ERROR, EXIT_USAGE, CliError
from flowgraph.cli._mcp import add_mcp_parser, cmd_mcp
from flowgraph.cli._run import Console
from flowgraph.cli._serve import add_serve_parser, cmd_serve
from flowgraph.cli._store import open_store
from flowgraph.errors import ConcurrentRunError

__all__ = ["main"]

_READS = {"threads", "history", "show", "export", "delete", "prune"}
_APP_HELP = "the app: FILE.py[:NAME] or package.module[:NAME] (NAME defaults to `app`)"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus the usage) and status 2 via CliError."""

    def error(self, message: str) -> None:  # type: ignore[override]  # raises instead
        raise _ParseError(f"{message} (see `{self.prog} --help`)")


class _ParseError(CliError):
    code = EXIT_USAGE


def _globals(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--db",
        metavar="PATH_OR_URL",
        default=default,
        help="checkpoint store: a SQLite file (default ./flowgraph.db, or $FLOWGRAPH_DB), "
        "postgresql://... or redis://...",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="show the traceback of an error",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flowgraph",
        description="Run flowgraph apps and inspect, resume, fork and tidy their threads.",
    )
    _globals(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        _globals(sub, suppress=True)
        return sub

    run = command("run", "run an app on a prompt, streaming its steps")
    run.add_argument("app", metavar="APP", help=_APP_HELP)
    run.add_argument("prompt", metavar="PROMPT", nargs="?", help="the user message (or stdin)")
    run.add_argument("--thread", metavar="ID", help="thread to run on (default: a new one)")
    run.add_argument("--input", metavar="JSON", help="state fields as a JSON object")
    run.add_argument("-q", "--quiet", action="store_true", help="print only the answer")

    resume = command("resume", "continue a paused or stopped thread")
    resume.add_argument("thread", metavar="THREAD")
    resume.add_argument("--value", metavar="JSON", help="what the pending interrupt() returns")
    resume.add_argument("--app", metavar="APP", help=_APP_HELP + "; default: the one run used")
    resume.add_argument("-q", "--quiet", action="store_true", help="print only the answer")
    resume.add_argument(
        "--rerun-tools",
        action="store_true",
        help="run again tool calls another branch of the thread already ran (default: reuse "
        "their stored results)",
    )

    fork = command("fork", "run a thread again from an earlier checkpoint (a new branch)")
    fork.add_argument("thread", metavar="THREAD")
    fork.add_argument("prompt", metavar="PROMPT", nargs="?", help="a new user message there")
    fork.add_argument("--checkpoint", metavar="ID", required=True, help="id or unique prefix")
    fork.add_argument("--value", metavar="JSON", help="answer the interrupt pending there")
    fork.add_argument("--app", metavar="APP", help=_APP_HELP + "; default: the one run used")
    fork.add_argument("-q", "--quiet", action="store_true", help="print only the answer")
    fork.add_argument(
        "--rerun-tools",
        action="store_true",
        help="run again tool calls another branch of the thread already ran (default: reuse "
        "their stored results)",
    )

    threads = command("threads", "list the store's threads")
    threads.add_argument("--app", metavar="APP", help="read with the app's schema")

    history = command("history", "a thread's checkpoints, one per step")
    history.add_argument("thread", metavar="THREAD")
    history.add_argument("--app", metavar="APP", help="read with the app's schema")

    show = command("show", "a thread's conversation")
    show.add_argument("thread", metavar="THREAD")
    show.add_argument("--checkpoint", metavar="ID", help="id or unique prefix (default: head)")
    show.add_argument("--app", metavar="APP", help="read with the app's schema")

    export = command("export", "a thread's messages as JSON lines")
    export.add_argument("thread", metavar="THREAD")
    export.add_argument("--checkpoint", metavar="ID", help="id or unique prefix (default: head)")
    export.add_argument("--format", choices=["flowgraph", "openai"], default="flowgraph")
    export.add_argument("--app", metavar="APP", help="read with the app's schema")

    delete = command("delete", "forget a thread and everything stored for it")
    delete.add_argument("thread", metavar="THREAD")

    prune = command("prune", "keep only a thread's newest checkpoints")
    prune.add_argument("thread", metavar="THREAD")
    prune.add_argument("--keep-last", metavar="N", type=int, required=True)
    prune.add_argument("--compact", action="store_true", help="then give the space back")

    draw = command("draw", "draw an app's graph (.mmd, .dot, .svg, .html, .png)")
    draw.add_argument("app", metavar="APP", help=_APP_HELP)
    draw.add_argument("-o", "--output", metavar="OUT", required=True)
    draw.add_argument("--thread", metavar="ID", help="overlay the path this thread took")

    add_serve_parser(command("serve", "serve apps over HTTP (the LangGraph Server API)"))
    add_mcp_parser(command("mcp", "serve apps as the tools of an MCP server (stdio or HTTP)"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `flowgraph` script; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    store = None
    try:
        args = _parse(build_parser(), args_list)
        debug = args.debug
        console = Console(quiet=getattr(args, "quiet", False))
        if args.command != "draw" or args.thread:
            store = open_store(args.db, must_exist=args.command in _READS or args.command == "draw")
        commands = {**COMMANDS, "mcp": cmd_mcp, "serve": cmd_serve}
        return commands[args.command](args, store, console)
    except KeyboardInterrupt:
        sys.stderr.write("flowgraph: interrupted\n")
        return 130
    except CliError as exc:
        return _fail(exc, exc.code, debug)
    except ConcurrentRunError as exc:  # a run holds the thread: worth trying again later
        return _fail(exc if debug else CliError(str(exc)), EXIT_BUSY, debug)
    except Exception as exc:
        return _fail(exc, EXIT_ERROR, debug)
    finally:
        if store is not None:
            store.close()


def _parse(parser: argparse.ArgumentParser, args_list: list[str]) -> argparse.Namespace:
    """`parse_args`, except that a PROMPT after options is the prompt.

    argparse matches an optional positional only together with the one
    before it, so `run APP --db X "hi"` would leave "hi" over as unrecognized.
    """
    args, extra = parser.parse_known_args(args_list)
    if len(extra) == 1 and not extra[0].startswith("-") and getattr(args, "prompt", "") is None:
        args.prompt = extra.pop()
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _fail(exc: BaseException, code: int, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc)
    message = str(exc) if isinstance(exc, CliError) else f"{type(exc).__name__}: {exc}"
    first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    hint = "" if debug or isinstance(exc, CliError) else " (--debug shows the traceback)"
    sys.stderr.write(f"flowgraph: error: {first}{hint}\n")
    return code
