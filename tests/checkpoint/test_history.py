"""Racing workers lose nothing: the history checker over many trials (issue #28).

Each trial forks four worker processes (`_history_worker.py`) that share
sixteen threads on one store and loop as a user's scaled-out workers do:
read the state, continue a thread that has work left, send the next turn,
skip a thread another worker has. Every storage call of every worker is
widened by a seeded random pause (`_windows.widen`), so the interleavings
that luck rarely gives (a whole turn of one worker inside another's
read-to-write window) happen in every trial. With `kill`, one worker
SIGKILLs itself at a random node run; the others finish its thread.

The checker (`_history.py`) then proves, per thread: every accepted input
is in the final state exactly once, in the order accepted; every node run
belongs to a stored step (the killed one aside); every side effect to a
stored result; the history is one line.

Trials per (backend, kill) variant: `FLOWGRAPH_HISTORY_TRIALS` (default 2,
as `.ci/run` samples them; the full run is 100:
`FLOWGRAPH_HISTORY_TRIALS=100 python -m pytest -n auto tests/checkpoint/test_history.py`).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import _history
from .conftest import Backend, ForkServer, _sqlite, serving

WORKER = Path(__file__).with_name("_history_worker.py")
TRIALS = int(os.environ.get("FLOWGRAPH_HISTORY_TRIALS", "2"))
WORKERS = 4
THREADS = 16
TURNS = 3
JITTER = (0.3, 0.003)
"""Each storage call pauses with this probability, for up to this many seconds, before
and after: enough for another worker's turn to fit into any window."""


@pytest.fixture(scope="session")
def history_server() -> Iterator[ForkServer]:
    yield from serving(WORKER)


def store_job(backend: Backend) -> dict[str, Any]:
    if backend.path is None and backend.spec is None:
        pytest.skip(f"{backend.name}: no store shared between processes in this suite")
    return {"path": str(backend.path) if backend.path else None, "store": backend.spec}


def run_job(
    server: ForkServer, job: dict[str, Any], go: Path, timeout: float = 300
) -> dict[str, Any]:
    """Run a job of `children` workers; their pids, exit statuses and RESULT lines."""
    job_id = server.submit(job)
    pids: list[int] = []
    statuses: dict[int, int] = {}
    """pid -> its wait status."""
    results: list[str] = []
    errors: list[str] = []
    while True:
        parts = server.next_line(timeout)
        if len(parts) < 2 or parts[0] != job_id:
            continue
        word = parts[1]
        if word == "CHILD":  # the server's line, in child order
            pids.append(int(parts[2]))
            if len(pids) == job.get("children", 1):
                go.touch()
        elif word == "EXIT":  # in child order too (the server waits for each in turn)
            statuses[pids[len(statuses)]] = int(parts[2])
        elif word == "RESULT":
            results.append(parts[2])
        elif word == "ERROR":
            errors.append(" ".join(parts))
        elif word == "ALLDONE":
            return {"pids": pids, "statuses": statuses, "results": results, "errors": errors}


def trial(
    server: ForkServer, backend: Backend, tmp_path: Path, seed: int, *, kill: bool, **extra: Any
) -> tuple[list[str], dict[str, Any]]:
    """One trial; the checker's violations and what the workers said."""
    prefix = f"h{seed}-{os.getpid()}-{random.randrange(1 << 30)}-"
    threads = [f"{prefix}t{i}" for i in range(THREADS)]
    log = tmp_path / f"log-{seed}"
    go = tmp_path / f"go-{seed}"
    rng = random.Random(seed)
    job: dict[str, Any] = {
        **store_job(backend),
        "mode": "worker",
        "children": WORKERS,
        "threads": threads,
        "turns": TURNS,
        "log": str(log),
        "go": str(go),
        "seed": seed,
        "jitter": list(JITTER),
        **extra,
    }
    if kill:
        # one worker dies at one of its first node runs: a worker makes ~36 of the 144,
        # but on a busy store one refused again and again may make only a dozen
        job["kill_child"] = rng.randrange(WORKERS)
        job["kill_at_node"] = rng.randint(1, 6)
    outcome = run_job(server, job, go)
    assert not outcome["errors"], outcome["errors"]
    killed = {outcome["pids"][job["kill_child"]]} if kill else set()
    for pid, status in outcome["statuses"].items():
        # 9: its own SIGKILL; a victim that started late may find the work done before its
        # kill point and exit 0 (the caller then runs the trial again with another seed)
        assert status in ((9, 0) if pid in killed else (0,)), (pid, status)
    outcome["killed"] = any(outcome["statuses"][pid] == 9 for pid in killed)
    store = backend.make()
    try:
        problems = _history.check_threads(store, threads, log, turns=TURNS, killed=killed)
    finally:
        store.close()
    return problems, outcome


@pytest.mark.parametrize("kill", [False, True], ids=["no-kill", "sigkill"])
@pytest.mark.parametrize("number", range(TRIALS))
def test_racing_workers_lose_and_repeat_nothing(
    history_server: ForkServer, backend: Backend, tmp_path: Path, number: int, kill: bool
) -> None:
    seed = number * 2 + kill
    problems, outcome = trial(history_server, backend, tmp_path, seed, kill=kill)
    for retry in range(1, 6):  # a kill trial whose victim never got to its kill point
        if not kill or outcome["killed"]:
            break
        assert problems == [], f"seed {seed}: " + "\n".join(problems)
        seed += 10_000 * retry
        problems, outcome = trial(history_server, backend, tmp_path, seed, kill=kill)
    assert not kill or outcome["killed"], "the victim never reached its kill point"
    assert problems == [], f"seed {seed}: " + "\n".join(problems)
    survivors = [json.loads(r) for r in outcome["results"]]
    assert len(survivors) == WORKERS - kill  # the killed worker says nothing


def test_the_checker_catches_a_turn_run_again(history_server: ForkServer, tmp_path: Path) -> None:
    """The same trials with the redelivery rule switched off (the engine before the fix):
    the checker must see what issue #28 reported, a turn run again on top of itself."""
    backend = _sqlite(tmp_path)
    found: list[str] = []
    for seed in range(1000, 1010):  # the first seed shows it nearly always
        problems, _ = trial(history_server, backend, tmp_path, seed, kill=False, no_redelivery=True)
        found += problems
        if any("transcript" in p for p in problems):
            break
    assert any("transcript" in p for p in found), found
    assert any("answered 2x" in p for p in found), found  # the turn's tool ran again
