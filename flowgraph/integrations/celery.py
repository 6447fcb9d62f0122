"""Many workers on one store: flowgraph threads run as Celery tasks.

A web process enqueues a run (`enqueue_run(task, thread_id, input)`); any
number of Celery workers, on any number of machines, run it against one
shared checkpoint store (PostgreSQL or Redis; a SQLite file for the workers
of one machine). Celery does the queueing, routing and redelivery; flowgraph
adds nothing of its own but what makes redelivery exact:

- Delivery is at least once. The task acknowledges late (`acks_late`,
  `reject_on_worker_lost`, one prefetched message per worker process), so a
  task whose worker dies is delivered again, and the worker that gets it
  resumes the thread from its last checkpoint. A node that was cut off
  mid-way runs again, as after any crash; steps already checkpointed do not.
- Every step is one compare-and-set on the thread's head, so two runs on a
  thread (a redelivery meeting a run still going elsewhere, or two inputs
  for one thread) never interleave a history: the one that loses gets
  ConcurrentRunError, stores nothing, and its task retries a little later.
- A run has an id (`run_id`, also its Celery task id) that the engine keeps
  in its checkpoints' metadata. A delivery whose run is already in the
  thread does not apply its input again: it resumes the thread (a no-op
  when the run finished) and returns the state.
- Traced (`flowgraph.integrations.opentelemetry.instrument()` in both
  processes), `enqueue_run` sends the current trace context along in the
  task's `trace_context` argument, and the worker's run continues that trace:
  its `invoke_agent` span is a child of the span that enqueued it.

Celery ships no type hints, so its objects are typed `Any` here; nothing in
this module imports celery, which the caller's app has already done.
"""

from __future__ import annotations

import importlib
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import flowgraph._hooks as _hooks
from flowgraph.checkpoint import BaseCheckpointer, open_checkpointer
from flowgraph.errors import ConcurrentRunError
from flowgraph.graph import Command, CompiledGraph, StateGraph

__all__ = [
    "DEFAULT_TASK_NAME",
    "enqueue_run",
    "load_graph",
    "make_thread_task",
    "run_thread",
]

DEFAULT_TASK_NAME = "flowgraph.run_thread"
STORE_ENV = "FLOWGRAPH_DB"
"""Where a worker finds its store URL when `make_thread_task(store=...)` is not given."""
_HISTORY_PAGE = 16


def _import(spec: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"Graph spec {spec!r} must be 'package.module:attribute'")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(
                f"Graph spec {spec!r}: module '{module_name}' has no attribute '{attr}'"
            ) from None
    return target


def load_graph(graph: str | Callable[..., Any], store: str | None = None) -> CompiledGraph:
    """The compiled app a worker runs, built in this process with its own store connection.

    `graph` is an import path "module:attr" (or the object itself) naming a
    `StateGraph` (compiled here with the store), a function taking the store
    and returning a `CompiledGraph`, or a function of no arguments returning
    one that already has its checkpointer (when `store` and $FLOWGRAPH_DB are
    both unset). `store` is a URL for `open_checkpointer`; default
    $FLOWGRAPH_DB. Build it in the worker process, never before a fork: a
    database connection must not be shared by two processes.
    """
    target = _import(graph) if isinstance(graph, str) else graph
    url = store if store is not None else os.environ.get(STORE_ENV)
    if isinstance(target, CompiledGraph):
        raise ValueError(
            f"{graph!r} is an already compiled app; point at its StateGraph, or at a function "
            "that takes the checkpointer and compiles it, so each worker process opens its "
            "own connection to the store"
        )
    if isinstance(target, StateGraph):
        if not url:
            raise ValueError(
                f"The graph {graph!r} is a StateGraph: give make_thread_task(store=...) or set "
                f"${STORE_ENV} to the URL of the store every worker shares"
            )
        app = target.compile(checkpointer=open_checkpointer(url))
    elif callable(target):
        app = target(open_checkpointer(url)) if url else target()
    else:
        raise ValueError(f"{graph!r} is neither a StateGraph nor a function building an app")
    if not isinstance(app, CompiledGraph) or app.checkpointer is None:
        raise ValueError(
            f"{graph!r} built {type(app).__name__}, not a compiled app with a checkpointer; "
            "workers resume each other's threads only through a shared store"
        )
    return app


def _in_history(
    store: BaseCheckpointer, app: CompiledGraph, thread_id: str, run_id: str, since: float | None
) -> bool:
    """Whether a checkpoint of `run_id` is in the thread (looking back to `since` only).

    A run's checkpoints cannot be older than its enqueueing, so the walk
    from the newest stops at the first one written before `since`; only the
    checkpoints inside that window are rebuilt to read their metadata, and a
    redelivered run is usually found at the first, the head.
    """
    before = None
    while True:
        page = store.history(thread_id, limit=_HISTORY_PAGE, before=before)
        for record in page:
            if since is not None and record.created_at < since:
                return False
            if app.get_state(thread_id, record.checkpoint_id).metadata.get("run_id") == run_id:
                return True
        if len(page) < _HISTORY_PAGE:
            return False
        before = page[-1].checkpoint_id


def run_thread(
    app: CompiledGraph,
    thread_id: str,
    input: Mapping[str, Any] | None = None,
    *,
    run_id: str,
    since: float | None = None,
    **resume: Any,
) -> dict[str, Any]:
    """Run (or go on with) `run_id` on a thread, exactly once however often it is delivered.

    The body of the Celery task, usable by any other worker loop. `input` is
    a dict of state fields (None: resume the thread); `resume=value` answers
    an `interrupt()`. If a checkpoint of `run_id` is already in the thread
    (written since `since`, Unix seconds; None looks through the whole
    history), the input is not applied again and the thread resumes instead.
    Raises ConcurrentRunError when another run is writing the thread: try
    again later. Returns a JSON-able summary of where the thread stopped.
    """
    unknown = set(resume) - {"resume"}
    if unknown:
        raise TypeError(f"run_thread() got unexpected keyword argument(s) {sorted(unknown)}")
    store = app.checkpointer
    if store is None:
        raise ValueError(
            f"run_thread() needs an app with a checkpointer (thread {thread_id!r}): runs are "
            "made exact by the store every worker shares"
        )
    given: Any = Command(resume=resume["resume"]) if resume else input
    if given is not None and _in_history(store, app, thread_id, run_id, since):
        given = None  # delivered before: the thread has this run's input already
    app.invoke(given, thread_id=thread_id, run_id=run_id)
    snapshot = app.get_state(thread_id)
    return {
        "thread_id": thread_id,
        "run_id": run_id,
        "checkpoint_id": snapshot.checkpoint_id,
        "step": snapshot.step,
        "next": list(snapshot.next),
        "interrupts": [{"id": i.id, "value": i.value} for i in snapshot.interrupts],
    }


def make_thread_task(
    celery_app: Any,
    graph: str | Callable[..., Any],
    *,
    store: str | None = None,
    name: str = DEFAULT_TASK_NAME,
    retry_delay: float = 0.5,
    max_retry_delay: float = 10.0,
    max_retries: int | None = 100,
    clock_skew: float = 300.0,
    **task_options: Any,
) -> Any:
    """Register the task that runs one thread's run on `celery_app`; returns the task.

    `graph` and `store` are given to `load_graph` once per worker process,
    on its first task (the app is never built in the web process, nor before
    the pool forks). The task acknowledges late and is rejected (so
    redelivered) if its worker process dies; this also sets the app's
    `worker_prefetch_multiplier` to 1, so a worker holds no messages it is
    not running. A task that meets its thread busy retries after
    `retry_delay` seconds, doubling up to `max_retry_delay`, with jitter.
    `clock_skew` bounds how far the machines' clocks may disagree, for the
    already-applied check. Other Celery task options pass through.
    """
    celery_app.conf.worker_prefetch_multiplier = 1
    apps: dict[int, CompiledGraph] = {}
    lock = threading.Lock()

    def app_of_this_process() -> CompiledGraph:
        pid = os.getpid()
        with lock:
            if pid not in apps:
                apps.clear()  # built before a fork: the child opens its own connections
                apps[pid] = load_graph(graph, store)
            return apps[pid]

    options: dict[str, Any] = {
        "acks_late": True,
        "reject_on_worker_lost": True,
        "max_retries": max_retries,
        **task_options,
    }

    def run(
        self: Any,
        thread_id: str,
        input: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        enqueued_at: float | None = None,
        trace_context: Mapping[str, str] | None = None,
        **resume: Any,
    ) -> dict[str, Any]:
        since = None if enqueued_at is None else enqueued_at - clock_skew
        try:
            with _continued(trace_context):
                return run_thread(
                    app_of_this_process(),
                    thread_id,
                    input,
                    run_id=run_id or self.request.id,
                    since=since,
                    **resume,
                )
        except ConcurrentRunError as exc:
            delay = min(retry_delay * 2 ** min(self.request.retries, 16), max_retry_delay)
            raise self.retry(exc=exc, countdown=delay * random.uniform(0.5, 1.5)) from exc

    run.__doc__ = f"Run a thread of {graph!r}: (thread_id, input=None, run_id=None, resume=...)."
    return celery_app.task(name=name, bind=True, **options)(run)


def _continued(carrier: Mapping[str, str] | None) -> AbstractContextManager[None]:
    """The trace the run was enqueued in, continued here when this worker traces runs."""
    observer = _hooks.observer
    if observer is None or not carrier:
        return nullcontext()
    return observer.continued(carrier)


_NOTHING: Any = object()


def enqueue_run(
    task: Any,
    thread_id: str,
    input: Mapping[str, Any] | None = None,
    *,
    resume: Any = _NOTHING,
    run_id: str | None = None,
    **send_options: Any,
) -> Any:
    """Queue a run of `thread_id` for the workers; returns Celery's AsyncResult.

    `input` must travel as the broker's serializer allows (JSON by default:
    messages as `{"role": "user", "content": "..."}` dicts). `resume=value`
    answers an interrupt. `run_id` (default: a fresh id) is also the Celery
    task id, so the caller can find the run's result and its checkpoints;
    enqueueing the same `run_id` twice still applies its input once.
    `send_options` go to `apply_async` (queue, countdown, ...). When runs are
    traced, the current trace context travels along (`trace_context`).
    """
    run_id = run_id or uuid.uuid4().hex
    kwargs: dict[str, Any] = {
        "thread_id": thread_id,
        "input": None if input is None else dict(input),
        "run_id": run_id,
        "enqueued_at": time.time(),
    }
    if resume is not _NOTHING:
        kwargs["resume"] = resume
    observer = _hooks.observer
    carrier = observer.carrier() if observer is not None else None
    if carrier:
        kwargs["trace_context"] = carrier
    return task.apply_async(kwargs=kwargs, task_id=run_id, **send_options)
