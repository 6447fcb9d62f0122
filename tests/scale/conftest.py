"""Fixtures of the scale tests: stores every process can reach, and real worker processes.

Stores: a SQLite file (always), PostgreSQL and Redis when
$FLOWGRAPH_TEST_POSTGRES_URL / $FLOWGRAPH_TEST_REDIS_URL name test servers
and their checkpointer modules import (skipped with that reason otherwise).
Workers are subprocesses started with tests/ on PYTHONPATH, so they import
`scale._graph`, `scale._worker` and `scale._celery_app` as a user's worker
would import its own project. Shared servers keep data between runs, so
every thread id starts with a prefix unique to the test.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from flowgraph.checkpoint import open_checkpointer
from flowgraph.graph import CompiledGraph
from flowgraph.integrations.celery import load_graph

from ._graph import MARKERS_ENV

TESTS = Path(__file__).resolve().parents[1]
SERVERS = {
    "postgres": ("FLOWGRAPH_TEST_POSTGRES_URL", "flowgraph.checkpoint.postgres"),
    "redis": ("FLOWGRAPH_TEST_REDIS_URL", "flowgraph.checkpoint.redis"),
}
BACKENDS = ["sqlite", *SERVERS]


def server_url(name: str) -> str | None:
    """The test server URL of a backend, or None (with why) when it cannot run here."""
    env, module = SERVERS[name]
    url = os.environ.get(env)
    if not url:
        return None
    try:
        importlib.import_module(module)
    except ImportError:
        return None
    return url


def skip_reason(name: str) -> str:
    env, module = SERVERS[name]
    if not os.environ.get(env):
        return f"{name}: set {env} to a test server URL to run this backend"
    return f"{name}: {module} is not importable"


def redis_db_url(url: str, db: int) -> str:
    """The same Redis server, another database number (the broker's own, apart from the store)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, parts.fragment))


class Prefix:
    """Thread ids unique to one test; its threads are deleted from shared servers afterwards."""

    def __init__(self) -> None:
        self.value = f"scale-{uuid.uuid4().hex[:10]}-"

    def __call__(self, name: str) -> str:
        return self.value + name


@pytest.fixture
def prefix() -> Prefix:
    return Prefix()


@pytest.fixture
def stores(tmp_path: Path, prefix: Prefix) -> Iterator[Callable[[str], str]]:
    """`stores(name)`: the URL of that backend's store for this test (skips if unavailable)."""
    used: list[str] = []

    def url_of(name: str) -> str:
        if name == "sqlite":
            return str(tmp_path / "store.db")
        url = server_url(name)
        if url is None:
            pytest.skip(skip_reason(name))
        used.append(url)
        return url

    yield url_of
    for url in used:
        store = open_checkpointer(url)
        try:
            for thread_id in store.threads():
                if thread_id.startswith(prefix.value):
                    store.delete_thread(thread_id)
        finally:
            store.close()


@pytest.fixture
def all_stores(stores: Callable[[str], str]) -> dict[str, str]:
    """Every store this machine can run, by backend name (SQLite at least).

    Tests that use them all at once do not skip a missing server; the
    per-backend tests (test_run_ids) show those skips and their reasons.
    """
    urls = {"sqlite": stores("sqlite")}
    for name in SERVERS:
        if server_url(name) is not None:
            urls[name] = stores(name)
    return urls


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    return path


def worker_env(markers: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWGRAPH_SCALE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    env[MARKERS_ENV] = str(markers)
    env.update(extra)
    return env


def stop(proc: subprocess.Popen[Any], *, sig: int = signal.SIGTERM, timeout: float = 60) -> None:
    """End a process this test started: `sig` first, SIGKILL if it does not go in time."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class DirectWorkers:
    """`python -m scale._worker` processes, each forking one worker per list of jobs."""

    def __init__(self, tmp_path: Path, markers: Path) -> None:
        self.tmp_path = tmp_path
        self.markers = markers
        self.procs: list[subprocess.Popen[str]] = []
        self.pids: set[int] = set()
        """The pids of the forked workers that reported DONE."""
        self._files = 0

    def start(self, job_lists: list[list[dict[str, Any]]]) -> subprocess.Popen[str]:
        """One process whose forked workers run a list of jobs each (the list's index: seed)."""
        paths = []
        for jobs in job_lists:
            path = self.tmp_path / f"jobs-{self._files}.json"
            self._files += 1
            path.write_text(json.dumps(jobs))
            paths.append(str(path))
        proc = subprocess.Popen(
            [sys.executable, "-m", "scale._worker", *paths],
            env=worker_env(self.markers),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: close() ends the forked workers too
        )
        self.procs.append(proc)
        return proc

    def finish(
        self, proc: subprocess.Popen[str], *, timeout: float = 240, ok: bool = True
    ) -> dict[int, tuple[int, int]]:
        """Wait for the process; {worker: (jobs, conflicts)} of the workers that reported DONE.

        With `ok`, every worker must have ended well.
        """
        out, err = proc.communicate(timeout=timeout)
        if ok:
            assert proc.returncode == 0, f"{out}\n{err[-3000:]}"
        done = {}
        for line in out.splitlines():
            words = line.split()
            if words and words[0] == "DONE":
                done[int(words[1])] = (int(words[2]), int(words[3]))
                self.pids.add(int(words[4]))
        return done

    def close(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def direct_workers(tmp_path: Path, markers: Path) -> Iterator[DirectWorkers]:
    workers = DirectWorkers(tmp_path, markers)
    try:
        yield workers
    finally:
        workers.close()


class CeleryWorkers:
    """Real `celery worker` processes (prefork pool) on a queue unique to this test."""

    def __init__(self, tmp_path: Path, markers: Path, broker: str) -> None:
        self.tmp_path = tmp_path
        self.markers = markers
        self.broker = broker
        self.queue = f"flowgraph-scale-{uuid.uuid4().hex[:10]}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    def start(self, stores: dict[str, str], *, count: int = 2, concurrency: int = 2) -> None:
        env = worker_env(
            self.markers,
            FLOWGRAPH_SCALE_BROKER=self.broker,
            FLOWGRAPH_SCALE_STORES=json.dumps(stores),
        )
        for i in range(count):
            log = self.tmp_path / f"celery-{len(self.procs)}.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "scale._celery_app",
                        "worker",
                        "--pool=prefork",
                        f"--concurrency={concurrency}",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                        "--loglevel=INFO",
                        f"--queues={self.queue}",
                        f"--hostname=w{i}-{self.queue}@localhost",
                    ],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            self.procs.append(proc)
            self.logs.append(log)

    def log_tail(self, chars: int = 4000) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-chars:]}" for p in self.logs)

    def close(self) -> None:
        # a warm shutdown (SIGTERM) lets running tasks finish; by now none should be left
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            stop(proc, timeout=60)
        import redis

        client = redis.Redis.from_url(self.broker)
        try:
            client.delete(self.queue)
        finally:
            client.close()


@pytest.fixture
def celery_workers(tmp_path: Path, markers: Path) -> Iterator[CeleryWorkers]:
    url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not url:
        pytest.skip("Celery: set FLOWGRAPH_TEST_REDIS_URL to a Redis server for the broker")
    workers = CeleryWorkers(tmp_path, markers, redis_db_url(url, 1))
    try:
        yield workers
    finally:
        workers.close()


def wait_until(check: Callable[[], bool], *, timeout: float, what: Callable[[], str]) -> None:
    """Poll `check` until true; fail with `what()` after `timeout` seconds (never a timing test)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:g} s waiting: {what()}")
        time.sleep(0.2)


@pytest.fixture
def graphs() -> Iterator[Callable[[str], CompiledGraph]]:
    """The test's own app per store URL (`load_graph`), each store closed at the end.

    A store left to the garbage collector may be collected on one of its
    connection pool's own threads, which cannot close the pool from there.
    """
    built: dict[str, CompiledGraph] = {}

    def graph(url: str) -> CompiledGraph:
        if url not in built:
            built[url] = load_graph("scale._graph:builder", url)
        return built[url]

    yield graph
    for app in built.values():
        assert app.checkpointer is not None
        app.checkpointer.close()
