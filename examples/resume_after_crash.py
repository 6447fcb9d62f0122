"""Resume after a crash: the process is killed mid-run, a new one finishes the thread.

The script re-launches itself as a child process that runs a tool-using
agent on a SQLite file and SIGKILLs itself inside the agent node, at its
second model call -- after the first checkpoints are written, like a
machine losing power. This process then opens the same file, looks at the
last checkpoint, and resumes the thread with invoke(None, thread_id=...).

What it shows: the messages written before the kill are all there with the
same ids; after the resume every id is distinct and every tool call has
exactly one result; and the tools, which had already run, did not run again.

Runs offline with a scripted model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/resume_after_crash.py [path/to/checkpoints.db]

The same from the command line: CRASH_AT_MODEL_CALL=2 makes `flowgraph run`
kill itself at its second model call; `flowgraph resume` finishes the thread.

    CRASH_AT_MODEL_CALL=2 flowgraph run examples/resume_after_crash.py \
        "Fetch the release notes of versions 1.0 and 2.0." --thread notes
    flowgraph resume notes
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flowgraph import CompiledGraph, HumanMessage, create_react_agent, tool
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ChatModelListener, ScriptedChatModel, init_chat_model

THREAD = "release-notes"
QUESTIONS = [
    "Fetch the release notes of versions 1.0 and 2.0 and compare them.",
    "Which one should I install?",
]
NOTES = {"1.0": "first release: SQLite checkpoints", "2.0": "adds resume and diagrams"}


def side_effect_log(db: Path) -> Path:
    """A file the tool appends to, so we can count how often it really ran."""
    return db.with_name(db.name + ".fetches")


def make_fetch(log: Path | None) -> Any:
    @tool
    def fetch_release_notes(version: str) -> str:
        """Fetch the release notes of a version.

        Args:
            version: The version, e.g. "1.0".
        """
        if log is not None:
            with log.open("a", encoding="utf-8") as out:
                out.write(version + "\n")
        return NOTES.get(version, "no such version")

    return fetch_release_notes


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model, a function of the conversation (so a new process continues it)."""
    last = messages[-1]
    if last.type == "tool":
        calls = [m for m in messages if m.type == "ai"][-1].tool_calls
        results = {m.tool_call_id: m.text for m in messages if m.type == "tool"}
        return "; ".join(f"{c.args['version']} {results[c.id]}" for c in calls) + "."
    if "install" in last.text:
        return "Install 2.0: it can resume after a crash."
    versions = re.findall(r"\b\d+\.\d+\b", last.text)
    if not versions:
        return (
            "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); "
            'I compare releases: "Fetch the release notes of versions 1.0 and 2.0."'
        )
    calls = [
        {"name": "fetch_release_notes", "args": {"version": v}, "id": f"fetch_{v}"}
        for v in versions
    ]
    return {"tool_calls": calls}


class KillAtCall(ChatModelListener):
    """SIGKILL this process when the model is called the `n`-th time (a machine losing power)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    def on_request(self, event: Any) -> None:
        self.calls += 1
        if self.calls == self.n:
            message = f"  model call {self.n}, inside the agent node: SIGKILL now"
            print(message, file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)


def build_app(
    log: Path | None = None, listeners: Sequence[ChatModelListener] = ()
) -> CompiledGraph:
    """The agent; `log` counts the tool's real runs, `listeners` watch the model."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        model: Any = init_chat_model(listeners=listeners)
    else:
        model = ScriptedChatModel(scripted_reply, listeners=listeners)
    return create_react_agent(
        model,
        [make_fetch(log)],
        system="You compare software releases. Use the tool to read release notes.",
    )


# What `flowgraph run` loads. With CRASH_AT_MODEL_CALL=2 set, that run is killed at its
# second model call, like the child below; `flowgraph resume THREAD` then finishes it.
CRASH_AT = int(os.environ.get("CRASH_AT_MODEL_CALL") or 0)
app = build_app(listeners=[KillAtCall(CRASH_AT)] if CRASH_AT else [])


def child(db: Path) -> int:
    """The doomed run: two turns, killed at its second model call."""
    agent = build_app(side_effect_log(db), [KillAtCall(2)])
    agent = agent.with_checkpointer(SQLiteCheckpointer(db))
    for question in QUESTIONS:
        print(f"  [child] user > {question}", flush=True)
        agent.invoke({"messages": [HumanMessage(question)]}, thread_id=THREAD)
    print("  [child] finished without being killed", flush=True)
    return 0


def show(messages: list[Any]) -> None:
    for message in messages:
        if message.type == "ai" and message.tool_calls:
            text = "calls " + ", ".join(f"{c.name}({c.args})" for c in message.tool_calls)
        else:
            text = message.text
        print(f"  {message.type:>6} {message.id}: {text}")


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "crash.db"
    if sys.argv[2:] == ["--crash"]:
        return child(db)

    agent = build_app(side_effect_log(db)).with_checkpointer(SQLiteCheckpointer(db))
    agent.delete_thread(THREAD)  # a fresh start when the file is reused
    side_effect_log(db).unlink(missing_ok=True)

    print("Running the agent in a child process that will kill itself...")
    done = subprocess.run([sys.executable, __file__, str(db), "--crash"], check=False)
    print(f"child exit status: {done.returncode} (SIGKILL is -{int(signal.SIGKILL)})\n")
    if done.returncode not in (0, -signal.SIGKILL):
        print("The child failed on its own (see above); nothing to resume.", file=sys.stderr)
        return 1

    print("Checkpoints the child left on disk, oldest first:")
    for snapshot in reversed(list(agent.get_state_history(THREAD))):
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        print(f"  step {snapshot.step}: ran {nodes:<9} next {', '.join(snapshot.next)}")
    before = agent.get_state(THREAD)
    print(f"\nThe last one (step {before.step}) holds {len(before.values.messages)} messages:")
    show(before.values.messages)
    kept = [m.id for m in before.values.messages]

    # Resume the crashed turn where it stopped, then finish the conversation.
    state = agent.invoke(None, thread_id=THREAD)
    for question in QUESTIONS:
        if question not in {m.text for m in state.messages if m.type == "human"}:
            state = agent.invoke({"messages": [HumanMessage(question)]}, thread_id=THREAD)
    print("\nAfter invoke(None, thread_id=...) and the rest of the conversation:")
    show(state.messages)

    ids = [m.id for m in state.messages]
    answers = Counter(m.tool_call_id for m in state.messages if m.type == "tool")
    calls = [c.id for m in state.messages if m.type == "ai" for c in m.tool_calls]
    log = side_effect_log(db)
    fetches = sorted(log.read_text(encoding="utf-8").split()) if log.exists() else []
    print()
    same = ids[: len(kept)] == kept
    print(f"kept: the {len(kept)} messages written before the kill, same ids: {same}")
    print(f"no duplicates: {len(ids)} messages, {len(set(ids))} distinct ids")
    print(f"every tool call answered exactly once: {all(answers[c] == 1 for c in calls)}")
    print(f"the tool ran {len(fetches)} times for {len(calls)} calls: {fetches}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
