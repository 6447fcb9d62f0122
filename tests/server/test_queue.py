"""`flowgraph serve --queue BROKER`: runs go to Celery workers, the server follows them.

A real `celery worker` process (solo pool) runs `make_thread_task` on a Redis
broker, against the SQLite file the server uses; the official client cannot
tell the difference, except that the replies come from the worker's process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk.errors import UnprocessableEntityError

from .conftest import REDIS_URL, ROOT, Connect, Serve

HERE = Path(__file__).parent


@pytest.fixture
def broker() -> str:
    if REDIS_URL is None:
        pytest.skip("no redis server (the broker): FLOWGRAPH_TEST_REDIS_URL is not set")
    import redis

    url = REDIS_URL.rsplit("/", 1)[0] + "/12"
    with redis.Redis.from_url(url) as client:
        client.delete("celery")  # messages a killed earlier run may have left
    return url


@pytest.fixture
def worker(broker: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    db = tmp_path / "queue.db"
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "queue_worker", "worker", "-P", "solo",
         "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "info"],
        cwd=HERE, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{HERE}", "FG_TEST_BROKER": broker,
             "FLOWGRAPH_DB": str(db)},
    )  # fmt: skip
    yield process
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    log.close()


def test_runs_handed_to_celery_workers(
    serve: Serve, connect: Connect, broker: str, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    server = serve(str(tmp_path / "queue.db"), "whoami", extra=("--queue", broker))
    client = connect(server)
    thread_id = client.threads.create()["thread_id"]

    paused = client.runs.wait(thread_id, "whoami", input={"messages": [("user", "where?")]})
    (first,) = client.runs.list(thread_id)
    status = client.threads.get(thread_id)["status"]
    done = client.runs.wait(thread_id, "whoami", command={"resume": "yes"})
    with pytest.raises(UnprocessableEntityError, match="'interrupt_before'"):
        client.runs.create(thread_id, "whoami", input={}, interrupt_before=["where"])

    reply = paused["messages"][-1]["content"]
    assert reply == f"ran in process {worker.pid}" and worker.pid != server.process.pid
    assert paused["__interrupt__"][0]["value"] == "Confirm?"
    assert first["status"] == "success" and status == "interrupted"
    assert done["messages"][-1]["content"] == "confirmed: yes"
    for _ in range(40):  # the server brings the record up to date on its next sweep
        if client.threads.get(thread_id)["status"] == "idle":
            break
        time.sleep(0.1)
    assert [r["status"] for r in client.runs.list(thread_id)] == ["success", "success"]
    assert client.threads.get(thread_id)["status"] == "idle"
