"""The subcommands: each takes the parsed arguments and a Console, returns an exit status.

Commands that only read or tidy a thread (threads, history, show, export,
delete, prune) work on the store alone, without importing the app: a
`StoredThread` rebuilds the messages from the records. `--app` on the
reading commands uses the app's own schema instead (every field exact, and
the codec knows the app's registered classes).
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Callable
from typing import Any

from flowgraph.cli._errors import EXIT_PAUSED, CliError, UsageError
from flowgraph.cli._format import Style, conversation, describe_value, table, timestamp
from flowgraph.cli._loader import load_app
from flowgraph.cli._run import (
    STOPPED,
    Console,
    Hint,
    execute,
    final_messages,
    message_field,
    parse_value,
    pause_input,
)
from flowgraph.cli._store import DEFAULT_DB, Store
from flowgraph.graph import Command, CompiledGraph, Entrypoint, StateSnapshot
from flowgraph.graph._core.types import MISSING
from flowgraph.graph._thread.reader import StoredThread
from flowgraph.graph._thread_api import hold_thread
from flowgraph.messages import BaseMessage, HumanMessage, messages_to_dicts, to_openai

__all__ = ["COMMANDS"]


# -- helpers ------------------------------------------------------------------------


def _value(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return parse_value(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _json_object(text: str | None, option: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{option} is not valid JSON ({exc.msg}): {text!r}") from exc
    if not isinstance(value, dict):
        raise UsageError(f"{option} must be a JSON object of state fields, not {text!r}")
    return value


def _hint(store: Store, thread_id: str, app_spec: str | None) -> Hint:
    prefix = ["flowgraph"]
    if store.location != DEFAULT_DB:
        prefix += ["--db", store.location]
    needs_app = app_spec if store.path is None else None
    return Hint(thread_id, prefix, needs_app)


def _thread(store: Store, thread_id: str) -> StoredThread:
    stored = StoredThread(store.checkpointer, thread_id)
    if not stored.exists:
        raise CliError(
            f"There is no thread {thread_id!r} in {store.location}; "
            "`flowgraph threads` lists the ones there are"
        )
    return stored


def _checkpoint(stored: StoredThread, checkpoint_id: str | None) -> str | None:
    if checkpoint_id is None:
        return None
    try:
        found = stored.resolve(checkpoint_id)
    except LookupError as exc:
        raise CliError(str(exc)) from exc
    if found is None:
        raise CliError(
            f"Thread {stored.thread_id!r} has no checkpoint {checkpoint_id!r}; "
            f"`flowgraph history {stored.thread_id}` lists its checkpoints"
        )
    return found


def _bound_app(store: Store, spec: str, *, runs: bool = True) -> tuple[CompiledGraph, str]:
    loaded = load_app(spec)
    return store.bind(loaded.app, runs=runs), loaded.spec


class _View:
    """A thread read by the app (exact) or from the store alone (messages exact)."""

    def __init__(self, store: Store, thread_id: str, app_spec: str | None) -> None:
        self.stored = _thread(store, thread_id)
        self.app = _bound_app(store, app_spec, runs=False)[0] if app_spec else None

    @property
    def message_fields(self) -> frozenset[str]:
        if self.app is not None:
            return self.app.engine.state.message_fields
        return self.stored.message_fields

    def state(self, checkpoint_id: str | None = None) -> StateSnapshot:
        if self.app is not None:
            return self.app.get_state(self.stored.thread_id, checkpoint_id)
        return self.stored.state(checkpoint_id)

    def history(self) -> list[StateSnapshot]:
        if self.app is not None:
            return list(self.app.get_state_history(self.stored.thread_id, before_inputs=False))
        return self.stored.history()

    def messages(self, snapshot: StateSnapshot) -> list[BaseMessage]:
        return final_messages(snapshot.values, self.message_fields)


def _status(snapshot: StateSnapshot) -> str:
    if snapshot.interrupts:
        nodes = sorted({i.node for i in snapshot.interrupts if i.node})
        return f"waiting: interrupt in {', '.join(nodes) or 'a node'}"
    if snapshot.next:
        return f"stopped before {', '.join(snapshot.next)}"
    return "done"


def _nodes(snapshot: StateSnapshot) -> str:
    names = snapshot.metadata.get("nodes") or []
    shown = {"__start__": "(input)", "__update__": "(update)"}
    return ", ".join(shown.get(n, n) for n in names) or "-"


def _tokens(snapshot: StateSnapshot, parent: StateSnapshot | None) -> int:
    """Tokens the step spent: the run's usage now, less the parent's if the same run wrote it."""

    def spent(s: StateSnapshot) -> int:
        usage = s.metadata.get("usage") or {}
        return int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))

    same_run = parent is not None and parent.metadata.get("run_id") == snapshot.metadata.get(
        "run_id"
    )
    return spent(snapshot) - (spent(parent) if same_run and parent is not None else 0)


# -- commands -----------------------------------------------------------------------


def cmd_run(args: argparse.Namespace, store: Store, console: Console) -> int:
    app, spec = _bound_app(store, args.app)
    values = _json_object(args.input, "--input")
    prompt = args.prompt
    if prompt is None and not values:
        if console.interactive:
            prompt = console.ask("you> ")
        else:
            prompt = console.stdin.read().strip() or None
        if not prompt:
            raise UsageError("Give a PROMPT (or --input JSON, or the prompt on stdin)")
    input: Any = values
    if prompt is not None and isinstance(app, Entrypoint) and not values:
        input = prompt  # a workflow's input is whatever its function takes: here, the text
    elif prompt is not None:
        field = message_field(app.engine.state.message_fields)
        if field is None:
            raise UsageError(
                f"{args.app} keeps no single message list to put the prompt in; "
                "give the state with --input JSON instead"
            )
        values[field] = [*values.get(field, []), HumanMessage(content=prompt)]
    thread_id = args.thread or f"t-{uuid.uuid4().hex[:8]}"
    store.record_app(thread_id, spec)
    if not console.quiet:
        console.err.write(
            Style(console.err)(f"thread {thread_id} in {store.location}", "dim") + "\n"
        )
    return execute(
        app,
        input,
        thread_id=thread_id,
        checkpoint_id=None,
        console=console,
        hint=_hint(store, thread_id, spec),
    )


def _app_for(args: argparse.Namespace, store: Store) -> tuple[CompiledGraph, str]:
    spec = args.app or store.recorded_app(args.thread)
    if spec is None:
        raise CliError(
            f"Which app runs thread {args.thread!r}? Pass --app FILE[:NAME] "
            "(the app is recorded only for threads `flowgraph run` started in a SQLite store)"
        )
    return _bound_app(store, spec)


def cmd_resume(args: argparse.Namespace, store: Store, console: Console) -> int:
    stored = _thread(store, args.thread)
    value = _value(args.value)
    app, spec = _app_for(args, store)
    snapshot = app.get_state(stored.thread_id)
    hint = _hint(store, stored.thread_id, spec)
    if snapshot.interrupts:
        if args.value is None and not console.interactive:
            raise UsageError(
                f"Thread {stored.thread_id} is waiting for a value: "
                f"{describe_value(snapshot.interrupts[0].value)}; give it with "
                f"`{hint.resume(None)} --value JSON`"
            )
        resume: Any = (
            Command(resume=value)
            if args.value is not None
            else pause_input(snapshot, console, hint, Style(console.err))
        )
        if resume is STOPPED:
            return EXIT_PAUSED
    elif snapshot.next:
        if args.value is not None:
            raise CliError(
                f"Thread {stored.thread_id} is not waiting for a value (it stopped before "
                f"{', '.join(snapshot.next)}); resume it without --value"
            )
        resume = None
    else:
        raise CliError(
            f"Thread {stored.thread_id} has finished; nothing to resume. Continue the "
            f"conversation with `flowgraph run APP PROMPT --thread {stored.thread_id}`"
        )
    return execute(
        app,
        resume,
        thread_id=stored.thread_id,
        checkpoint_id=None,
        console=console,
        hint=hint,
        rerun_tools=args.rerun_tools,
    )


def cmd_fork(args: argparse.Namespace, store: Store, console: Console) -> int:
    stored = _thread(store, args.thread)
    checkpoint_id = _checkpoint(stored, args.checkpoint)
    value = _value(args.value)
    app, spec = _app_for(args, store)
    if args.prompt is not None and args.value is not None:
        raise UsageError("fork takes a PROMPT or --value, not both")
    input: Any = None
    answer: Any = MISSING
    at = stored.state(checkpoint_id)
    if args.prompt is not None:
        field = message_field(app.engine.state.message_fields) or "messages"
        input = {field: [HumanMessage(content=args.prompt)]}
    elif args.value is not None and at.interrupts:
        input = Command(resume=value)
    elif args.value is not None:
        answer = value  # the step after it asks again: answer it then
    step = at.step
    console.err.write(f"forking thread {stored.thread_id} at step {step} ({checkpoint_id})\n")
    return execute(
        app,
        input,
        thread_id=stored.thread_id,
        checkpoint_id=checkpoint_id,
        console=console,
        hint=_hint(store, stored.thread_id, spec),
        answer=answer,
        rerun_tools=args.rerun_tools,
    )


def cmd_threads(args: argparse.Namespace, store: Store, console: Console) -> int:
    style = Style(console.out)
    rows = []
    for thread_id in store.checkpointer.threads():
        view = _View(store, thread_id, args.app)
        snapshot = view.state()
        rows.append(
            [
                thread_id,
                str(snapshot.step),
                str(len(view.messages(snapshot))),
                timestamp(snapshot.created_at),
                _status(snapshot),
            ]
        )
    if not rows:
        console.err.write(f"No threads in {store.location}\n")
        return 0
    headers = ["thread", ">steps", ">messages", "updated", "status"]
    console.out.write("\n".join(table(headers, rows, style)) + "\n")
    return 0


def cmd_history(args: argparse.Namespace, store: Store, console: Console) -> int:
    view = _View(store, args.thread, args.app)
    snapshots = list(reversed(view.history()))  # oldest first: read as a story
    by_id = {s.checkpoint_id: s for s in snapshots}
    head = store.checkpointer.head(args.thread)
    style = Style(console.out)
    rows = []
    for snapshot in snapshots:
        parent = by_id.get(snapshot.parent_id)
        before = {m.id for m in view.messages(parent)} if parent else set()
        added = sum(1 for m in view.messages(snapshot) if m.id not in before)
        source = str(snapshot.metadata.get("source", "-"))
        rows.append(
            [
                str(snapshot.step),
                _nodes(snapshot),
                str(snapshot.checkpoint_id),
                timestamp(snapshot.created_at),
                f"+{added}",
                str(_tokens(snapshot, parent)),
                source,
                "*" if snapshot.checkpoint_id == head else "",
            ]
        )
    headers = [">step", "node(s)", "checkpoint", "time", ">messages", ">tokens", "source", ""]
    lines = table(headers, rows, style)
    console.out.write("\n".join(lines) + "\n")
    console.out.write(style("* the thread's head", "dim") + "\n")
    return 0


def cmd_show(args: argparse.Namespace, store: Store, console: Console) -> int:
    view = _View(store, args.thread, args.app)
    checkpoint_id = _checkpoint(view.stored, args.checkpoint)
    snapshot = view.state(checkpoint_id)
    style = Style(console.out)
    header = (
        f"thread {args.thread} · step {snapshot.step} · checkpoint {snapshot.checkpoint_id} · "
        f"{timestamp(snapshot.created_at)} · {_status(snapshot)}"
    )
    lines = [style(header, "bold"), *conversation(view.messages(snapshot), style)]
    for item in snapshot.interrupts:
        lines.append(
            style(f"interrupt from {item.node} [{item.id}]: ", "yellow", "bold")
            + describe_value(item.value)
        )
    console.out.write("\n".join(lines) + "\n")
    return 0


def cmd_export(args: argparse.Namespace, store: Store, console: Console) -> int:
    view = _View(store, args.thread, args.app)
    checkpoint_id = _checkpoint(view.stored, args.checkpoint)
    messages = view.messages(view.state(checkpoint_id))
    records = to_openai(messages) if args.format == "openai" else messages_to_dicts(messages)
    for record in records:
        console.out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


def cmd_delete(args: argparse.Namespace, store: Store, console: Console) -> int:
    stored = _thread(store, args.thread)
    with hold_thread(store.checkpointer, stored.thread_id, doing="be deleted"):
        store.checkpointer.delete_thread(stored.thread_id)
    store.forget_app(stored.thread_id)
    console.err.write(f"Deleted thread {stored.thread_id}\n")
    return 0


def cmd_prune(args: argparse.Namespace, store: Store, console: Console) -> int:
    if args.keep_last < 1:
        raise UsageError("--keep-last must be at least 1 (use `flowgraph delete` to drop a thread)")
    stored = _thread(store, args.thread)
    with hold_thread(store.checkpointer, stored.thread_id, doing="be pruned"):
        dropped, forgotten = stored.prune(args.keep_last)
    kept = len(stored.records)
    console.out.write(
        f"Thread {stored.thread_id}: removed {dropped} checkpoint(s) and {forgotten} "
        f"message version(s); {kept} checkpoint(s) kept\n"
    )
    if args.compact:
        store.checkpointer.compact()
    return 0


def cmd_draw(args: argparse.Namespace, store: Store | None, console: Console) -> int:
    import flowgraph.viz  # noqa: F401  # registers the drawing functions the app's render uses

    app = load_app(args.app).app
    if store is not None:
        app = app.with_checkpointer(store.checkpointer)
        _thread(store, args.thread)
    written = app.render(args.output, thread_id=args.thread)
    console.err.write(f"Wrote {written}\n")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace, Any, Console], int]] = {
    "run": cmd_run,
    "resume": cmd_resume,
    "fork": cmd_fork,
    "threads": cmd_threads,
    "history": cmd_history,
    "show": cmd_show,
    "export": cmd_export,
    "delete": cmd_delete,
    "prune": cmd_prune,
    "draw": cmd_draw,
}
