"""Worker processes racing on shared stores, and workers killed inside a node.

No queue here: `scale._worker` processes run jobs through `run_thread`,
the body of the Celery task, so a job given to two processes is a
duplicate delivery racing its twin. Every process works on every store at
once (a SQLite file, and PostgreSQL and Redis when their test servers are
set). Every thread must end exactly as one delivery would leave it
(`check_thread`): no step lost or applied twice, one linear history.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flowgraph.graph import CompiledGraph

from ._graph import STEPS, check_thread, entries, start_input
from .conftest import DirectWorkers, Prefix, wait_until

PROCESSES = 4
THREADS = 16
"""Threads per store; each goes to two of the four workers (with three stores: 4 x 24 jobs)."""


def test_four_processes_deliver_every_thread_twice(
    all_stores: dict[str, str],
    prefix: Prefix,
    direct_workers: DirectWorkers,
    graphs: Callable[[str], CompiledGraph],
) -> None:
    jobs: list[list[dict[str, Any]]] = [[] for _ in range(PROCESSES)]
    expected: list[tuple[str, str, str]] = []
    for name, url in all_stores.items():
        for i in range(THREADS):
            thread = prefix(f"{name}-{i}")
            job = {"store": url, "thread": thread, "run_id": f"run-{i}"}
            job["input"] = start_input(thread)
            for p in (i % PROCESSES, (i + 1) % PROCESSES):
                jobs[p].append(job)
            expected.append((url, thread, f"run-{i}"))
    reports = direct_workers.finish(direct_workers.start(jobs))
    assert {i: done for i, (done, _) in reports.items()} == dict(enumerate(map(len, jobs)))
    apps = {url: graphs(url) for url in all_stores.values()}
    for url, thread, run_id in expected:
        check_thread(apps[url], thread, run_id)
    for url, app in apps.items():
        mine = sorted(t for t in app.threads() if t.startswith(prefix.value))
        assert mine == sorted(t for u, t, _ in expected if u == url)


def blocked_pid(marker: Path, proc: subprocess.Popen[str]) -> int:
    """The pid written to a blocked node's marker, once it is there."""
    wait_until(
        lambda: marker.exists() and marker.read_text() != "",
        timeout=120,
        what=lambda: f"{marker.name} to appear (worker exit code {proc.poll()})",
    )
    return int(marker.read_text())


def test_workers_killed_inside_a_node_are_finished_by_another(
    all_stores: dict[str, str],
    prefix: Prefix,
    direct_workers: DirectWorkers,
    markers: Path,
    graphs: Callable[[str], CompiledGraph],
) -> None:
    """One worker per store blocks in step 3 and is killed; a fresh worker finishes them all."""
    jobs = {
        url: {
            "store": url,
            "thread": prefix(f"killed-{name}"),
            "run_id": f"run-{name}",
            "input": start_input(prefix(f"killed-{name}"), block_at=3),
        }
        for name, url in all_stores.items()
    }
    proc = direct_workers.start([[job] for job in jobs.values()])
    for job in jobs.values():
        pid = blocked_pid(markers / f"{job['thread']}.blocked", proc)
        assert pid != proc.pid, "blocked in a forked worker"
        os.kill(pid, signal.SIGKILL)
    assert direct_workers.finish(proc, ok=False) == {}  # every worker was killed
    assert proc.returncode == 1
    for url, job in jobs.items():
        cut = graphs(url).get_state(job["thread"])
        assert (cut.step, cut.next, cut.values.count) == (2, ("work",), 2)
    rescuer = direct_workers.start([list(jobs.values())])
    assert direct_workers.finish(rescuer) == {0: (len(jobs), 0)}
    for url, job in jobs.items():
        check_thread(graphs(url), job["thread"], job["run_id"])
        # steps 1 and 2 were checkpointed and did not run again; step 3 was cut off, ran again
        assert entries(markers, job["thread"]) == [1, 2, 3, *range(3, STEPS + 1)]
