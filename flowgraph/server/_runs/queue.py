"""`--queue`: runs handed to Celery workers instead of run in the server process.

The server schedules nothing itself: each run is sent with
`flowgraph.integrations.celery.enqueue_run` to the task that
`make_thread_task` registers in the workers (`flowgraph.run_thread`, or
`flowgraph.run_thread.<graph id>` when the server serves several graphs),
with the run's id as the Celery task id. Workers deliver at least once and
retry a busy thread; the integration makes a redelivered run apply its
input once.

The server learns how a run went from what every process can read: a
checkpoint written by the run (it is running), the thread stopping there
(finished, or paused at an interrupt: success), and, when the Celery app
has a result backend, the task's state (a failure is an error with its
message). Without a result backend a failed run stays `running`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowgraph.graph import Command
from flowgraph.integrations.celery import DEFAULT_TASK_NAME, enqueue_run
from flowgraph.messages import BaseMessage

if TYPE_CHECKING:
    from flowgraph.server._records.registry import RunRecord
    from flowgraph.server._runs.graphs import GraphEntry

__all__ = ["QUEUE_OWNER", "UNSUPPORTED", "CeleryQueue"]

QUEUE_OWNER = "queue:celery"
"""The owner written in a run handed to Celery (no server process holds it)."""
UNSUPPORTED = ("interrupt_before", "interrupt_after", "checkpoint_id")
"""Run options a Celery worker's task does not take."""


def _plain(value: Any) -> Any:
    """Messages as flowgraph's own dicts: the broker carries JSON."""
    if isinstance(value, BaseMessage):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class CeleryQueue:
    """Sends runs to the workers of a Celery broker (or of a Celery app given ready-made)."""

    def __init__(self, broker: str | Any, graph_ids: list[str]) -> None:
        if isinstance(broker, str):
            try:
                from celery import Celery  # type: ignore[import-untyped]
            except ImportError as exc:
                raise ImportError(
                    f"--queue hands runs to Celery: pip install 'flowgraph[celery]' ({exc})"
                ) from exc
            self.app = Celery("flowgraph-server", broker=broker, backend=broker)
        else:
            self.app = broker
        self.graph_ids = graph_ids

    def task_name(self, graph_id: str) -> str:
        if len(self.graph_ids) == 1:
            return DEFAULT_TASK_NAME
        return f"{DEFAULT_TASK_NAME}.{graph_id}"

    def send(self, entry: GraphEntry, record: RunRecord, input: Any) -> None:
        """Enqueue the run (`input` as the executor would give it to the engine)."""
        task = self.app.signature(self.task_name(entry.graph_id))
        if isinstance(input, Command):
            enqueue_run(task, record.thread_id, None, resume=input.resume, run_id=record.run_id)
        else:
            enqueue_run(task, record.thread_id, _plain(input), run_id=record.run_id)

    def state(self, run_id: str) -> tuple[str, str | None]:
        """The task's Celery state and, for a failure, its error text ("PENDING" if unknown)."""
        try:
            result = self.app.AsyncResult(run_id)
            state = str(result.state)
        except Exception:  # no result backend, or it cannot be reached: nothing to tell
            return "PENDING", None
        return state, (repr(result.result) if state == "FAILURE" else None)
