"""Direct worker processes: `python -m scale._worker JOBS.json [...]` (tests/ on the path).

No queue: the process imports flowgraph once, then forks one worker per
job file (a JSON list of {"store", "thread", "run_id", "input"}), so the
workers start in a millisecond on a loaded machine and are still real
processes, each opening its own store connections after the fork. A worker
runs its jobs through `run_thread`, in an order shuffled by its index, and
tries a job again after a short pause when another process holds its
thread; several workers given the same job are duplicate deliveries racing
each other. Each prints `DONE <index> <jobs> <conflicts> <pid>`; the parent then
prints `EXIT <index> <status>` per worker and fails if any failed.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from flowgraph.errors import ConcurrentRunError
from flowgraph.integrations.celery import load_graph, run_thread

GRAPH = "scale._graph:builder"


def say(*words: object) -> None:
    """One line in one write, so lines of forked workers never mix."""
    os.write(sys.stdout.fileno(), (" ".join(map(str, words)) + "\n").encode())


def work(index: int, jobs_path: str) -> None:
    jobs: list[dict[str, Any]] = json.loads(Path(jobs_path).read_text())
    random.Random(index).shuffle(jobs)
    apps = {url: load_graph(GRAPH, url) for url in {job["store"] for job in jobs}}
    conflicts = 0
    for job in jobs:
        while True:
            try:
                run_thread(apps[job["store"]], job["thread"], job["input"], run_id=job["run_id"])
                break
            except ConcurrentRunError:
                conflicts += 1
                time.sleep(random.uniform(0.001, 0.02))
    say("DONE", index, len(jobs), conflicts, os.getpid())


def main(paths: list[str]) -> int:
    sys.stdout.flush()
    children = {}
    for index, path in enumerate(paths):
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                work(index, path)
            except BaseException:
                traceback.print_exc()
                status = 1
            finally:
                os._exit(status)
        children[pid] = index
    failed = False
    for pid, index in children.items():
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        say("EXIT", index, code)
        failed |= code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
