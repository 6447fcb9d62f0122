"""A run a Celery worker picks up continues the trace of the request that enqueued it.

A real `celery worker` (prefork pool, Redis broker) whose pool process traces
its runs with the OpenTelemetry SDK, writing spans to a file; this process
traces too, and enqueues the run inside a span of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

from flowgraph.checkpoint import open_checkpointer
from flowgraph.integrations.celery import enqueue_run
from flowgraph.integrations.opentelemetry import instrument, uninstrument

from ._traced_celery_app import make_app
from .conftest import redis_db_url, stop, wait_until, worker_env


def _spans(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in folder.glob("spans.*")
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def test_a_worker_run_continues_the_trace_that_enqueued_it(tmp_path: Path) -> None:
    redis_url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("Celery: set FLOWGRAPH_TEST_REDIS_URL to a Redis server for the broker")
    broker = redis_db_url(redis_url, 1)
    store = str(tmp_path / "store.db")
    queue = f"flowgraph-trace-{uuid.uuid4().hex[:10]}"
    env = worker_env(
        tmp_path,
        FLOWGRAPH_TRACE_BROKER=broker,
        FLOWGRAPH_TRACE_STORE=store,
        FLOWGRAPH_TRACE_SPANS=str(tmp_path / "spans"),
    )
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "scale._traced_celery_app",
                "worker",
                "--pool=prefork",
                "--concurrency=1",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                f"--queues={queue}",
                f"--hostname=trace-{queue}@localhost",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    app, task = make_app(broker, store)
    provider = TracerProvider()
    instrument(provider)
    try:
        with provider.get_tracer("the-web-app").start_as_current_span("POST /chat") as request:
            enqueue_run(
                task, "t-traced", {"messages": [{"role": "user", "content": "hi"}]}, queue=queue
            )
        wait_until(
            lambda: any(s["name"] == "answer" for s in _spans(tmp_path)),
            timeout=120,
            what=lambda: f"no span from the worker; its log:\n{log.read_text()[-3000:]}",
        )
    finally:
        uninstrument()
        stop(worker)
        app.close()
        import redis

        client = redis.Redis.from_url(broker)
        try:
            client.delete(queue)
        finally:
            client.close()

    spans = {s["name"]: s for s in _spans(tmp_path)}
    run, node = spans["invoke_agent MessagesState"], spans["answer"]
    context = request.get_span_context()
    assert run["context"]["trace_id"] == f"0x{context.trace_id:032x}"
    assert run["parent_id"] == f"0x{context.span_id:016x}"
    assert node["parent_id"] == run["context"]["span_id"]
    assert run["attributes"]["gen_ai.conversation.id"] == "t-traced"
    checkpoints = open_checkpointer(store)
    try:
        assert run["attributes"]["flowgraph.checkpoint_id"] == checkpoints.head("t-traced")
    finally:
        checkpoints.close()
