"""Celery workers on a Redis broker and direct workers, on shared stores at once.

Two `celery worker` processes (prefork pool) serve a queue unique to this
module, with one task per store (a SQLite file, and PostgreSQL and Redis
when their test servers are set). Every thread is delivered twice: two
Celery messages with one run id, or a message and a direct worker process,
or two direct workers, so duplicates race on every store. Then a pool
process is killed by SIGKILL inside a node: Celery redelivers its message
(late acknowledgement, reject on worker lost) and another process resumes
the thread from its last checkpoint.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint import open_checkpointer
from flowgraph.integrations.celery import enqueue_run, load_graph

from ._celery_app import make_app
from ._graph import STEPS, check_thread, entries, start_input
from .conftest import (
    SERVERS,
    CeleryWorkers,
    DirectWorkers,
    Prefix,
    redis_db_url,
    server_url,
    wait_until,
)

GRAPH = "scale._graph:builder"
THREADS = 16
"""Threads per store (a multiple of 4: one of each delivery plan per 4)."""
WAIT = 240.0
"""Seconds to wait for the workers before failing (generous: a loaded 2-core machine)."""


@dataclass
class Cluster:
    stores: dict[str, str]
    celery: CeleryWorkers
    tasks: dict[str, Any]
    markers: Path
    prefix: Prefix
    tmp_path: Path

    def finished(self, url: str, thread: str) -> bool:
        snapshot = self.apps[url].get_state(thread)
        return snapshot.checkpoint_id is not None and snapshot.next == ()

    @property
    def apps(self) -> dict[str, Any]:
        if not hasattr(self, "_apps"):
            self._apps = {url: load_graph(GRAPH, url) for url in self.stores.values()}
        return self._apps


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    redis_url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("Celery: set FLOWGRAPH_TEST_REDIS_URL to a Redis server for the broker")
    tmp_path = tmp_path_factory.mktemp("celery")
    markers = tmp_path / "markers"
    markers.mkdir()
    stores = {"sqlite": str(tmp_path / "store.db")}
    stores.update({name: url for name in SERVERS if (url := server_url(name)) is not None})
    celery = CeleryWorkers(tmp_path, markers, redis_db_url(redis_url, 1))
    app, tasks = make_app(celery.broker, stores)
    prefix = Prefix()
    built: Cluster | None = None
    try:
        celery.start(stores, count=2, concurrency=2)
        built = Cluster(stores, celery, tasks, markers, prefix, tmp_path)
        yield built
    finally:
        try:
            celery.close()
        finally:
            app.close()
            for checked in getattr(built, "_apps", {}).values():
                checked.checkpointer.close()  # not left to the garbage collector
            for url in stores.values():
                store = open_checkpointer(url)
                try:
                    for thread in store.threads():
                        if thread.startswith(prefix.value):
                            store.delete_thread(thread)
                finally:
                    store.close()


def test_every_thread_runs_exactly_once_however_often_delivered(cluster: Cluster) -> None:
    direct: list[list[dict[str, Any]]] = [[], []]
    expected = []
    celery_only = []
    for name, url in cluster.stores.items():
        for i in range(THREADS):
            thread = cluster.prefix(f"race-{name}-{i}")
            run_id = f"{thread}-run"
            job = {"store": url, "thread": thread, "run_id": run_id, "input": start_input(thread)}
            plan = i % 4  # who delivers it: Celery twice, Celery and a direct worker, ...
            sends = {0: 2, 1: 1, 2: 0, 3: 1}[plan]
            for _ in range(sends):
                enqueue_run(
                    cluster.tasks[name],
                    thread,
                    job["input"],
                    run_id=run_id,
                    queue=cluster.celery.queue,
                )
            if plan in (1, 2):
                direct[0].append(job)
            if plan in (2, 3):
                direct[1].append(job)
            expected.append((url, thread, run_id))
            if plan == 0:
                celery_only.append(thread)
    workers = DirectWorkers(cluster.tmp_path, cluster.markers)
    try:
        proc = workers.start(direct)
        reports = workers.finish(proc, timeout=WAIT)
        assert {i: done for i, (done, _) in reports.items()} == dict(enumerate(map(len, direct)))
    finally:
        workers.close()

    def unfinished() -> list[str]:
        return [t for url, t, _ in expected if not cluster.finished(url, t)]

    wait_until(
        lambda: not unfinished(),
        timeout=WAIT,
        what=lambda: f"{len(unfinished())} threads unfinished\n{cluster.celery.log_tail()}",
    )
    for url, thread, run_id in expected:
        check_thread(cluster.apps[url], thread, run_id)
    # the threads sent only to Celery ran in its pool processes, not here or in a direct worker
    # (the workers' own pids: the entries of their jobs also hold the Celery pids that raced them)
    outside = {os.getpid(), proc.pid, *workers.pids}
    assert len(workers.pids) == len(direct)
    for thread in celery_only:
        pids = {pid for _, pid in entries_with_pids(cluster.markers, thread)}
        assert pids and not pids & outside, (thread, pids)


def entries_with_pids(markers: Path, thread: str) -> list[tuple[int, int]]:
    path = markers / f"{thread}.entries"
    return [(int(a), int(b)) for a, b in (line.split() for line in path.read_text().splitlines())]


def blocked_pid(cluster: Cluster, marker: Path) -> int:
    """The pid a blocked node wrote to its marker, once it is there."""
    wait_until(
        lambda: marker.exists() and marker.read_text() != "",
        timeout=WAIT,
        what=lambda: f"{marker.name} to appear\n{cluster.celery.log_tail()}",
    )
    return int(marker.read_text())


def test_a_pool_process_killed_inside_a_node_is_redelivered_and_resumed(
    cluster: Cluster,
) -> None:
    killed = {}
    for name, url in cluster.stores.items():
        thread = cluster.prefix(f"killed-{name}")
        enqueue_run(
            cluster.tasks[name],
            thread,
            start_input(thread, block_at=2),
            run_id=f"{thread}-run",
            queue=cluster.celery.queue,
        )
        killed[thread] = url
        pid = blocked_pid(cluster, cluster.markers / f"{thread}.blocked")
        assert pid not in {p.pid for p in cluster.celery.procs}, "blocked in a pool process"
        os.kill(pid, signal.SIGKILL)
    for thread, url in killed.items():
        wait_until(
            functools.partial(cluster.finished, url, thread),
            timeout=WAIT,
            what=lambda: f"the killed threads to be finished\n{cluster.celery.log_tail()}",
        )
        check_thread(cluster.apps[url], thread, f"{thread}-run")
        # step 1 was checkpointed and did not run again; step 2 was cut off and ran again
        assert entries(cluster.markers, thread) == [1, 2, *range(2, STEPS + 1)]
    assert "WorkerLostError" in cluster.celery.log_tail(chars=1_000_000)


def test_a_duplicate_meeting_its_run_still_going_elsewhere_waits_its_turn(
    cluster: Cluster,
) -> None:
    """Two deliveries of one run at once: the second is refused until the first is done.

    The first delivery blocks inside step 2 while holding the thread's
    lease; the second (another pool process) is refused at once
    (ConcurrentRunError, nothing stored, no node run) and its task retries
    until the first has finished the run; the retry then finds nothing left
    to do. Step 2 ran once, in the first delivery's process.
    """
    name, url = next(iter(cluster.stores.items()))
    thread = cluster.prefix("busy")
    run_id = f"{thread}-run"
    send = functools.partial(
        enqueue_run,
        cluster.tasks[name],
        thread,
        start_input(thread, block_at=2),
        run_id=run_id,
        queue=cluster.celery.queue,
    )
    send()
    first = blocked_pid(cluster, cluster.markers / f"{thread}.blocked")
    send()

    def refused() -> bool:
        return f"[{run_id}] retry: Retry in" in cluster.celery.log_tail(chars=10_000_000)

    wait_until(
        refused,
        timeout=WAIT,
        what=lambda: f"the second delivery to be refused\n{cluster.celery.log_tail()}",
    )
    assert not cluster.finished(url, thread)
    assert cluster.apps[url].get_state(thread).active_run == run_id
    (cluster.markers / f"{thread}.release").touch()

    def both_done() -> bool:
        return cluster.celery.log_tail(chars=10_000_000).count(f"[{run_id}] succeeded") >= 2

    wait_until(
        both_done,
        timeout=WAIT,
        what=lambda: f"both deliveries to end\n{cluster.celery.log_tail()}",
    )
    check_thread(cluster.apps[url], thread, run_id)
    assert cluster.apps[url].get_state(thread).active_run is None
    pids = [pid for step, pid in entries_with_pids(cluster.markers, thread) if step == 2]
    assert pids == [first]
