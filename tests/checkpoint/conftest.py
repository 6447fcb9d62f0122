"""Fixtures for the checkpoint tests: every backend behind one `checkpointer` fixture.

A backend joins the conformance suite by adding one entry to `BACKENDS`.
Postgres and Redis are listed already: they run when their URL is in the
environment (`FLOWGRAPH_TEST_POSTGRES_URL`, `FLOWGRAPH_TEST_REDIS_URL`)
and their module exists, and are skipped with the reason otherwise.
Shared servers keep data between tests, so every test names its threads
with the `tid` fixture (unique per test).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

WORKER = Path(__file__).with_name("_crash_worker.py")


@dataclass
class Backend:
    """One storage backend under test, and what the suite may do to it besides the protocol."""

    name: str
    make: Callable[[], BaseCheckpointer]
    """A checkpointer on this test's store (a second call: another client of the same store)."""
    path: Path | None = None
    """The SQLite file, for tests that look at the file itself."""
    shared_store: bool = True
    """Two `make()` calls see the same data (False for the in-process memory store)."""
    corrupt: Callable[[str, str, object], None] | None = None
    """Overwrite a stored checkpoint payload (thread, checkpoint, value) behind the API."""
    size: Callable[[], int] | None = None
    """Bytes the store occupies on disk, for the compact test (default: the SQLite file)."""
    spec: dict[str, Any] | None = None
    """How another process opens this store: {"module", "cls", "args", "kwargs"}."""
    cleanup: Callable[[], None] | None = None
    """Run after the test: drop what the test's store left on a server."""


def _sqlite(tmp_path: Path) -> Backend:
    path = tmp_path / "c.db"

    def corrupt(thread_id: str, checkpoint_id: str, value: object) -> None:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(
                "UPDATE checkpoints SET payload = ? WHERE thread_id = ? AND checkpoint_id = ?",
                (value, thread_id, checkpoint_id),
            )

    return Backend("sqlite", lambda: SQLiteCheckpointer(path), path=path, corrupt=corrupt)


def _memory(tmp_path: Path) -> Backend:
    store = MemoryCheckpointer()
    return Backend("memory", lambda: store, shared_store=False)


def _server(name: str, env: str, module: str, cls: str) -> Callable[[Path], Backend]:
    def make(tmp_path: Path) -> Backend:
        url = os.environ.get(env)
        if not url:
            pytest.skip(f"{name}: set {env} to a test server URL to run this backend")
        try:
            backend_module = importlib.import_module(module)
        except ImportError as exc:
            pytest.skip(f"{name}: {module} is not importable yet ({exc})")
        factory = getattr(backend_module, cls)
        return Backend(name, lambda: factory(url))

    return make


def _postgres(tmp_path: Path) -> Backend:
    """A schema of its own per test: sizes and VACUUM see only this test's tables."""
    url = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("postgres: set FLOWGRAPH_TEST_POSTGRES_URL to a test server URL")
    try:
        import psycopg

        from flowgraph.checkpoint.postgres import PostgresCheckpointer
    except ImportError as exc:
        pytest.skip(f"postgres: psycopg is not installed ({exc})")
    schema = f"fg_test_{uuid.uuid4().hex[:12]}"

    def execute(sql: str, *args: object) -> list[tuple[Any, ...]]:
        with psycopg.connect(url, autocommit=True) as db:
            cursor = db.execute(sql, args)
            return cursor.fetchall() if cursor.description else []

    def corrupt(thread_id: str, checkpoint_id: str, value: object) -> None:
        data = value if isinstance(value, bytes) else str(value).encode()  # a bytea column
        execute(
            f"UPDATE {schema}.flowgraph_checkpoints SET payload = %s "
            "WHERE thread_id = %s AND checkpoint_id = %s",
            data,
            thread_id,
            checkpoint_id,
        )

    def size() -> int:
        rows = execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            schema,
        )
        return int(rows[0][0] or 0)

    def drop() -> None:
        execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    return Backend(
        "postgres",
        lambda: PostgresCheckpointer(url, schema=schema),
        corrupt=corrupt,
        size=size,
        spec={
            "module": "flowgraph.checkpoint.postgres",
            "cls": "PostgresCheckpointer",
            "args": [url],
            "kwargs": {"schema": schema},
        },
        cleanup=drop,
    )


def _redis(tmp_path: Path) -> Backend:
    """A key prefix of its own per test: sizes and cleanup see only this test's keys."""
    url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not url:
        pytest.skip("redis: set FLOWGRAPH_TEST_REDIS_URL to a test server URL")
    try:
        import redis

        from flowgraph.checkpoint.redis import RedisCheckpointer
    except ImportError as exc:
        pytest.skip(f"redis: redis-py is not installed ({exc})")
    prefix = f"fgtest-{uuid.uuid4().hex[:12]}:"

    def with_client(action: Callable[[redis.Redis], int | None]) -> int | None:
        with redis.Redis.from_url(url) as client:
            return action(client)

    def corrupt(thread_id: str, checkpoint_id: str, value: object) -> None:
        with RedisCheckpointer(url, prefix=prefix) as store:
            key = store.thread_keys(thread_id)["records"]
            store.client.hset(key, checkpoint_id, value)  # type: ignore[arg-type]

    def size() -> int:
        """MEMORY USAGE of the test's keys: Redis frees a deleted field at once (no compact)."""

        def measure(r: redis.Redis) -> int:
            keys = list(r.scan_iter(match=prefix + "*", count=1000))
            return sum(r.memory_usage(k, samples=0) or 0 for k in keys)

        return with_client(measure) or 0

    def drop() -> None:
        def unlink(r: redis.Redis) -> int:
            keys = list(r.scan_iter(match=prefix + "*", count=1000))
            return r.unlink(*keys) if keys else 0

        with_client(unlink)

    return Backend(
        "redis",
        lambda: RedisCheckpointer(url, prefix=prefix),
        corrupt=corrupt,
        size=size,
        spec={
            "module": "flowgraph.checkpoint.redis",
            "cls": "RedisCheckpointer",
            "args": [url],
            "kwargs": {"prefix": prefix},
        },
        cleanup=drop,
    )


BACKENDS: dict[str, Callable[[Path], Backend]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "postgres": _postgres,
    "redis": _redis,
}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    made = BACKENDS[request.param](tmp_path)
    yield made
    if made.cleanup is not None:
        made.cleanup()


@pytest.fixture
def checkpointer(backend: Backend, tid: ThreadIds) -> Iterator[BaseCheckpointer]:
    store = backend.make()
    try:
        yield store
    finally:
        if backend.path is None and backend.shared_store:  # a server: leave it as we found it
            for thread_id in store.threads():
                if thread_id.startswith(tid.prefix):
                    store.delete_thread(thread_id)
        close_quietly(store)


def close_quietly(store: BaseCheckpointer) -> None:
    """Close, tolerating the known bug covered by test_close_after_use_from_other_threads.

    Without this, every test that touches a store from a second thread would
    end in a teardown error instead of testing what it is about.
    """
    with contextlib.suppress(sqlite3.ProgrammingError):
        store.close()


class ThreadIds:
    """Thread ids unique to one test, so tests can share a server-backed store."""

    def __init__(self) -> None:
        self.prefix = f"test-{uuid.uuid4().hex[:10]}-"

    def __call__(self, name: str = "t") -> str:
        return self.prefix + name


@pytest.fixture
def tid() -> ThreadIds:
    return ThreadIds()


def xfail_on(
    request: pytest.FixtureRequest, backend: Backend, names: set[str], reason: str
) -> None:
    """Mark this test a strict xfail for the given backends only."""
    if backend.name in names:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


# -- a fork server: real processes that start in milliseconds ------------------------


class ForkServer:
    """A Python process that imported flowgraph once and forks a child per job.

    Starting an interpreter and importing the package takes seconds on a
    loaded machine; forking a warm one takes a millisecond, so crash tests
    can run many trials. Children are real processes: they open their own
    SQLite connections and die by SIGKILL like any other.
    """

    def __init__(self, worker: Path = WORKER) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(worker), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.expect("READY", timeout=60)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("EOF")

    def submit(self, job: dict[str, Any]) -> str:
        """Start a job (a JSON-able dict, see `_crash_worker.run_job`); returns its id."""
        job = {"id": uuid.uuid4().hex[:8], **job}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        return str(job["id"])

    def next_line(self, timeout: float) -> list[str]:
        line = self.lines.get(timeout=timeout)
        if line == "EOF":
            raise RuntimeError("the fork server exited")
        return line.split(" ", 2)

    def expect(self, word: str, *, job: str | None = None, timeout: float = 20) -> list[str]:
        """Read lines until one with `word` (of `job`); earlier lines are dropped."""
        while True:
            parts = self.next_line(timeout)
            if parts[0] == word or (len(parts) > 1 and parts[0] == job and parts[1] == word):
                return parts

    def kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=10)
        self.proc.stdout.close()


def serving(worker: Path = WORKER) -> Iterator[ForkServer]:
    """A fork server of `worker` for a session fixture: skipped without os.fork."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork (POSIX)")
    server = ForkServer(worker)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def fork_server() -> Iterator[ForkServer]:
    yield from serving()
