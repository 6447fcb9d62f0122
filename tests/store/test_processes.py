"""Several processes on one store at once: a SQLite file, a PostgreSQL schema, a Redis prefix.

Real interpreters, started together on a store none of them has created
yet, so they also race to create its tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Backend

WORKER = Path(__file__).with_name("_worker.py")
PROCESSES = 4
WRITES = 25


def test_processes_writing_at_once_lose_nothing(backend: Backend, tmp_path: Path) -> None:
    if backend.spec is None:
        pytest.skip("memory: an InMemoryStore cannot be shared between processes")
    gate = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(backend.spec), f"w{n}", str(WRITES), gate],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline().strip()
            assert line == "READY", worker.communicate(timeout=60)[1]
        gate.touch()
        for worker in workers:
            out, err = worker.communicate(timeout=180)
            assert worker.returncode == 0, err
            assert out.strip() == "DONE"
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()

    store = backend.make()
    names = [f"w{n}" for n in range(PROCESSES)]
    assert store.list_namespaces(("proc",)) == [("proc", "shared"), *(("proc", n) for n in names)]
    for name in names:
        items = store.search(("proc", name), limit=100)
        assert sorted(item.value["i"] for item in items) == list(range(WRITES))
        assert all(item.value["by"] == name for item in items)
    [last] = store.search(("proc", "shared"))
    assert last.value["by"] in names and last.value["i"] == WRITES - 1
    assert last.created_at < last.updated_at
    assert len(store.search(("warmup",), limit=100)) == PROCESSES
