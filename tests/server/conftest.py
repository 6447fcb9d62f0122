"""Real server processes for the API tests: `flowgraph serve` in a subprocess on a free port.

`serve(store, *apps, token=None)` starts one (apps default: every graph of
`apps.py`) and waits until `/ok` answers; the fixture stops every server it
started (SIGTERM, then SIGKILL). The official `langgraph-sdk` clients drive
them. Stores: a SQLite file in the test's directory, or the throw-away
PostgreSQL / Redis servers (FLOWGRAPH_TEST_POSTGRES_URL / _REDIS_URL) with a
schema or key prefix of the test's own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from models._loopback import LoopbackServer, Recorded, Reply, free_port, sse

APPS = Path(__file__).with_name("apps.py")
GRAPHS = ("agent", "slow", "chat", "fail", "configured")
ROOT = Path(__file__).resolve().parents[2]
POSTGRES_URL = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL")
REDIS_URL = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")


class ServerProcess:
    """One `flowgraph serve` process; `url` once it answers."""

    def __init__(
        self,
        db: str,
        apps: tuple[str, ...],
        *,
        token: str | None,
        cwd: Path,
        env: dict[str, str],
        extra: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = cwd / f"server-{self.port}.log"
        command = [sys.executable, "-m", "flowgraph.cli", "--db", db, "serve", *apps,
                   "--port", str(self.port), *extra]  # fmt: skip
        if token:
            command += ["--auth-token", token]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited ({self.process.returncode}):\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not answer /ok in {timeout} s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the process dies mid-whatever, as in a crash."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


Serve = Callable[..., ServerProcess]
Connect = Callable[..., SyncLangGraphClient]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    started: list[ServerProcess] = []

    def start(
        db: str | None = None,
        *graphs: str,
        token: str | None = None,
        env: dict[str, str] | None = None,
        extra: tuple[str, ...] = (),
    ) -> ServerProcess:
        apps = tuple(f"{g}={APPS}:{g}" for g in (graphs or GRAPHS))
        server = ServerProcess(
            db or str(tmp_path / "store.db"), apps, token=token, cwd=tmp_path, env=env or {},
            extra=extra,
        )  # fmt: skip
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def connect() -> Iterator[Callable[..., SyncLangGraphClient]]:
    """`connect(server, api_key=None)`: the official sync client, closed after the test."""
    opened: list[SyncLangGraphClient] = []

    def make(server: ServerProcess, api_key: str | None = None) -> SyncLangGraphClient:
        # a minute, not the SDK's five: a run that never starts fails its test instead of
        # hanging the suite
        client = get_sync_client(url=server.url, api_key=api_key, timeout=(5, 60, 60, 5))
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()


class FakeLLM:
    """An OpenAI-compatible provider on loopback that answers `words`, streamed one by one.

    A streaming request gets one SSE chunk per word, `delay` seconds apart; a
    plain request gets the whole reply at once. `FG_TEST_LLM_URL` points the
    `chat` graph of apps.py at it.
    """

    def __init__(self, words: list[str], delay: float) -> None:
        self.words = words
        self.delay = delay
        self.server = LoopbackServer().start()
        self.server.handler = self._answer
        self.url = f"{self.server.url}/v1"

    def _answer(self, request: Recorded) -> Reply:
        if request.json.get("stream"):
            pieces = [sse(_chunk({"content": w}), done=False) for w in self.words]
            pieces.append(sse(_chunk({}, "stop"), done=True))
            return Reply(pieces=pieces, piece_delay=self.delay, content_type="text/event-stream")
        return Reply.json({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "loopback",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "".join(self.words)}}],
        })  # fmt: skip


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "loopback",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    fake = FakeLLM(["Streaming ", "one ", "word ", "at ", "a ", "time."], delay=0.05)
    yield fake
    fake.server.stop()


def store_urls() -> dict[str, str | None]:
    """Every backend the multi-process tests run on (None: its server is not configured)."""
    return {"sqlite": "sqlite", "postgres": POSTGRES_URL, "redis": REDIS_URL}


def store_location(backend: str, tmp_path: Path) -> str:
    """A store of `backend` for one test.

    PostgreSQL: a database of these tests' own (`fg_server_tests`, made once),
    so the schema version other suites migrate `public` to does not matter;
    Redis: database 11 of the server. Tests tell their threads apart by id.
    """
    if backend == "sqlite":
        return str(tmp_path / f"{uuid.uuid4().hex[:10]}.db")
    url = store_urls()[backend]
    if url is None:
        pytest.skip(f"no {backend} server: FLOWGRAPH_TEST_{backend.upper()}_URL is not set")
    if backend == "postgres":
        return _own_database(url, "fg_server_tests")
    return url.rsplit("/", 1)[0] + "/11"


def _own_database(url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found is None:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"
