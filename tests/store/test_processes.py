"""Several processes on one store at once: a SQLite file, a PostgreSQL schema, a Redis prefix.

Real interpreters, started together on a store none of them has created
yet, so they also race to create its tables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
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


def test_a_forked_child_uses_connections_of_its_own(backend: Backend) -> None:
    """gunicorn --preload, Celery prefork: a store opened before fork() works on both sides."""
    if backend.spec is None:
        pytest.skip("memory: a forked child has a copy of the items, not the same store")
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork (POSIX)")
    store = backend.make()
    store.put(("fork",), "parent", {"v": 1})  # the parent's connections are open now
    with warnings.catch_warnings():  # 3.12+ warns that fork() with threads may deadlock
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        code = 1
        try:
            item = store.get(("fork",), "parent")
            store.put(("fork",), "child", {"v": 2})
            code = 0 if item is not None and item.value == {"v": 1} else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sorted(item.key for item in store.search(("fork",))) == ["child", "parent"]
    store.put(("fork",), "after", {"v": 3})  # the parent's connections still work
    assert store.get(("fork",), "after") is not None
