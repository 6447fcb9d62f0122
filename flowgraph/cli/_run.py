"""Running an app from the command line: live progress, the answer, and human input.

Progress (model tokens as they arrive, one line per finished step) goes to
stderr and the final answer to stdout, so `answer=$(flowgraph run ...)`
captures just the answer while a person watching sees everything. A run
that pauses on `interrupt()` asks for the resume value when stdin is a
terminal; otherwise it exits (status 3) printing the command that resumes it.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from pydantic import BaseModel

from flowgraph.cli._errors import EXIT_PAUSED
from flowgraph.cli._format import Style, describe_value, tool_call
from flowgraph.graph import Command, CompiledGraph, StateSnapshot, StreamPart
from flowgraph.graph._core.types import MISSING
from flowgraph.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

__all__ = [
    "STOPPED",
    "Console",
    "Hint",
    "execute",
    "final_messages",
    "message_field",
    "parse_value",
    "pause_input",
]


def parse_value(text: str, *, lenient: bool = False) -> Any:
    """A resume value from JSON; with `lenient` (typed at a prompt), plain text is a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if lenient:
            return text
        raise ValueError(
            f"--value is not valid JSON ({exc.msg} at column {exc.colno}): {text!r}; "
            "a string needs quotes: --value '\"yes\"'"
        ) from exc


def message_field(fields: Iterable[str]) -> str | None:
    """The state's conversation: the `messages` field, else its only message field."""
    fields = sorted(fields)
    if "messages" in fields:
        return "messages"
    return fields[0] if len(fields) == 1 else None


def final_messages(values: Any, fields: Iterable[str]) -> list[BaseMessage]:
    name = message_field(fields)
    if name is None:
        return []
    raw = values.get(name) if isinstance(values, dict) else getattr(values, name, None)
    return list(raw or [])


@dataclass(slots=True)
class Console:
    """Where a command writes, and whether it may ask the person at the keyboard."""

    out: IO[str] = field(default_factory=lambda: sys.stdout)
    err: IO[str] = field(default_factory=lambda: sys.stderr)
    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    quiet: bool = False

    @property
    def interactive(self) -> bool:
        isatty = getattr(self.stdin, "isatty", None)
        return bool(isatty and isatty())

    def ask(self, prompt: str) -> str | None:
        """A line typed by the person (None at end of input)."""
        self.err.write(prompt)
        self.err.flush()
        line = self.stdin.readline()
        return None if not line else line.rstrip("\n")


@dataclass(slots=True)
class _Step:
    """What the nodes of one step did, gathered from the stream until the step is over."""

    number: int
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def node(self, name: str) -> dict[str, Any]:
        return self.nodes.setdefault(
            name,
            {
                "duration": 0.0,
                "messages": 0,
                "tokens": 0,
                "notes": [],
                "error": None,
                "paused": False,
                "reused": set(),
            },
        )


class _Progress:
    """Writes tokens as they stream and a line per node when its step is over."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.style = Style(console.err)
        self.step: _Step | None = None
        self.streaming: tuple[int, str, str | None] | None = None
        """The reply whose tokens are being written: step, node, message id."""

    def write(self, text: str) -> None:
        if not self.console.quiet:
            self.console.err.write(text)
            self.console.err.flush()

    def _end_tokens(self) -> None:
        if self.streaming is not None:
            self.write("\n")
            self.streaming = None

    def feed(self, part: StreamPart) -> None:
        if self.step is None or part.step != self.step.number:
            self.flush()
            self.step = _Step(part.step)
        if part.node == "__interrupt__":
            for item in part.data if isinstance(part.data, list) else ():
                self.step.node(getattr(item, "node", "") or "?")["paused"] = True
            return
        node = self.step.node(part.node or "?")
        if part.mode == "messages" and isinstance(part.data, AIMessageChunk):
            text = part.data.text
            if text:
                # by message too: the workers a Send fans out share a node and a step
                key = (part.step, part.node or "?", part.data.id)
                if self.streaming != key:
                    self._end_tokens()
                    self.write(self.style(f"{part.node}> ", "cyan", "bold"))
                    self.streaming = key
                self.write(text)
        elif part.mode == "events" and isinstance(part.data, dict):
            if part.data.get("event") in ("end", "error"):
                node["duration"] += float(part.data.get("duration", 0.0))
            if part.data.get("event") == "error":
                node["error"] = str(part.data.get("error"))
            elif part.data.get("event") == "reused":
                node["reused"].add(part.data.get("tool_call_id"))
                node["notes"].append(
                    f"{part.data.get('name')}: not run again, reused the result stored at "
                    f"checkpoint {part.data.get('checkpoint_id')} (--rerun-tools runs it)"
                )
        elif part.mode == "updates" and isinstance(part.data, dict):
            for value in part.data.values():
                for item in value if isinstance(value, list) else [value]:
                    self._count(node, item)

    def _count(self, node: dict[str, Any], item: Any) -> None:
        if not isinstance(item, BaseMessage):
            return
        node["messages"] += 1
        if isinstance(item, AIMessage):
            if item.usage is not None:
                node["tokens"] += item.usage.total_tokens
            node["notes"].extend(f"calls {tool_call(c.name, c.args)}" for c in item.tool_calls)
        elif isinstance(item, ToolMessage) and item.tool_call_id not in node["reused"]:
            node["notes"].append(f"{item.name or 'tool'}: {item.status}")

    def flush(self) -> None:
        """Print the lines of the step gathered so far (called when the next one starts)."""
        self._end_tokens()
        step, self.step = self.step, None
        if step is None:
            return
        for name, info in step.nodes.items():
            took = "paused" if info["paused"] else f"{info['duration'] * 1000:.1f} ms"
            cells = [f"step {step.number}", name, took, f"+{info['messages']} msg"]
            if info["tokens"]:
                cells.append(f"{info['tokens']} tokens")
            if info["error"]:
                cells.append(self.style(f"failed: {info['error']}", "red"))
            cells.extend(info["notes"])
            self.write(self.style("  " + "  ".join(cells), "dim") + "\n")


@dataclass(frozen=True, slots=True)
class Hint:
    """How to continue a thread from the shell: the command prefix with --db if needed."""

    thread_id: str
    prefix: list[str]
    """`flowgraph` and the global options the next command needs (e.g. `--db x.db`)."""
    needs_app: str | None = None

    def resume(self, value: str | None) -> str:
        words = [*self.prefix, "resume", self.thread_id]
        if value is not None:
            words += ["--value", value]
        text = " ".join(shlex.quote(w) for w in words)
        if self.needs_app:
            text += " --app " + shlex.quote(self.needs_app)
        return text


STOPPED: Any = object()
"""What pause_input returns when the run cannot continue now."""


def execute(
    app: CompiledGraph,
    input: Any,
    *,
    thread_id: str,
    checkpoint_id: str | None,
    console: Console,
    hint: Hint,
    answer: Any = MISSING,
    rerun_tools: bool = False,
) -> int:
    """Run (and keep resuming while the person answers); print the answer; the exit status.

    `answer`, if given, resumes the first interrupt the run reaches (a fork
    re-running a step that asks again). `rerun_tools`: a branch runs again the
    tool calls another branch of the thread already ran, instead of reusing
    their results.
    """
    progress = _Progress(console)
    store = app.checkpointer
    assert store is not None, "the CLI binds every app it runs to its store"
    while True:
        head = store.head(thread_id)
        stream = app.stream(
            input,
            mode=["messages", "updates", "events"],
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            rerun_tool_calls=rerun_tools,
        )
        try:
            for part in stream:
                progress.feed(part)
        finally:
            progress.flush()
            close: Callable[[], None] | None = getattr(stream, "close", None)
            if close is not None:
                close()
        # a fork that paused before writing a step is still at its checkpoint, not the head
        if checkpoint_id is not None and store.head(thread_id) != head:
            checkpoint_id = None
        snapshot = app.get_state(thread_id, checkpoint_id)
        if not snapshot.next:
            _answer(app, snapshot, console)
            return 0
        if answer is not MISSING and snapshot.interrupts:
            input, answer = Command(resume=answer), MISSING
            continue
        input = pause_input(snapshot, console, hint, progress.style)
        if input is STOPPED:
            return EXIT_PAUSED


def pause_input(snapshot: StateSnapshot, console: Console, hint: Hint, style: Style) -> Any:
    """The input that continues a paused run: the person's answer, or STOPPED."""
    err = console.err
    if not snapshot.interrupts:
        nodes = ", ".join(snapshot.next)
        err.write(
            f"Thread {hint.thread_id} stopped before {nodes}. Continue it with:\n"
            f"  {hint.resume(None)}\n"
        )
        return STOPPED
    for item in snapshot.interrupts:
        err.write(
            style(f"interrupt from {item.node or 'a node'}", "yellow", "bold")
            + f" [{item.id}]: {describe_value(item.value)}\n"
        )
    if console.interactive:
        answers = {}
        for item in snapshot.interrupts:
            line = console.ask(style("resume value (JSON or text)> ", "bold"))
            if line is None or not line.strip():
                break
            answers[item.id] = parse_value(line, lenient=True)
        else:
            if len(answers) == 1:
                return Command(resume=next(iter(answers.values())))
            return Command(resume=answers)
        err.write("\n")
    several = len(snapshot.interrupts) > 1
    example = "'{\"<interrupt id>\": ...}'" if several else "JSON"
    err.write(
        f"Thread {hint.thread_id} is waiting for input. Resume it with:\n"
        f"  {hint.resume(None)} --value {example}\n"
        "(e.g. --value '\"yes\"' or --value '{\"approved\": true}')\n"
    )
    return STOPPED


def _answer(app: CompiledGraph, snapshot: StateSnapshot, console: Console) -> None:
    messages = final_messages(snapshot.values, app.engine.state.message_fields)
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            console.out.write(message.text + "\n")
            return
    values = snapshot.values
    if isinstance(values, str):  # a workflow that answers with text
        console.out.write(values + "\n")
        return
    if isinstance(values, BaseModel):
        values = values.model_dump(mode="json")
    console.out.write(describe_value(values) + "\n")
