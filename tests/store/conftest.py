"""Fixtures for the store tests: every backend behind one `backend` fixture.

A backend joins the conformance suite with one entry in `BACKENDS`.
PostgreSQL and Redis run when their URL is in the environment
(`FLOWGRAPH_TEST_POSTGRES_URL`, `FLOWGRAPH_TEST_REDIS_URL`), each test on a
schema or key prefix of its own (dropped afterwards), so tests never see
each other's items on the shared servers.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from flowgraph.store import BaseStore, InMemoryStore, SQLiteStore


@dataclass
class Backend:
    """One store backend under test."""

    name: str
    make: Callable[..., BaseStore]
    """A store on this test's storage, with the given store options (a second call: another
    client of the same storage, except for memory)."""
    spec: dict[str, Any] | None = None
    """How another process opens this storage: {"module", "cls", "args", "kwargs"}."""
    shared: bool = True
    """Two `make()` calls see the same items (False for the in-process memory store)."""
    opened: list[BaseStore] = field(default_factory=list)
    cleanup: Callable[[], None] | None = None


def _memory(tmp_path: Path) -> Backend:
    return Backend("memory", lambda **options: InMemoryStore(**options), shared=False)


def _sqlite(tmp_path: Path) -> Backend:
    path = tmp_path / "store.db"
    return Backend(
        "sqlite",
        lambda **options: SQLiteStore(path, **options),
        spec={"module": "flowgraph.store", "cls": "SQLiteStore", "args": [str(path)]},
    )


def _postgres(tmp_path: Path) -> Backend:
    url = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("postgres: set FLOWGRAPH_TEST_POSTGRES_URL to a test server URL")
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from flowgraph.store.postgres import PostgresStore

    schema = f"fgstore_{uuid.uuid4().hex[:12]}"

    def drop() -> None:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    return Backend(
        "postgres",
        lambda **options: PostgresStore(url, schema=schema, **options),
        spec={
            "module": "flowgraph.store.postgres",
            "cls": "PostgresStore",
            "args": [url],
            "kwargs": {"schema": schema},
        },
        cleanup=drop,
    )


def _redis(tmp_path: Path) -> Backend:
    url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not url:
        pytest.skip("redis: set FLOWGRAPH_TEST_REDIS_URL to a test server URL")
    redis = pytest.importorskip("redis", reason="the `redis` extra (redis-py) is not installed")
    from flowgraph.store.redis import RedisStore

    prefix = f"fgstoretest-{uuid.uuid4().hex[:12]}:"

    def drop() -> None:
        with redis.Redis.from_url(url) as client:
            keys = list(client.scan_iter(match="{" + prefix + "}*", count=1000))
            if keys:
                client.unlink(*keys)

    return Backend(
        "redis",
        lambda **options: RedisStore(url, prefix=prefix, **options),
        spec={
            "module": "flowgraph.store.redis",
            "cls": "RedisStore",
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
    make = made.make

    def tracked(**options: Any) -> BaseStore:
        store = make(**options)
        made.opened.append(store)
        return store

    made.make = tracked
    try:
        yield made
    finally:
        for store in made.opened:
            store.close()
        if made.cleanup is not None:
            made.cleanup()


@pytest.fixture
def store(backend: Backend) -> BaseStore:
    return backend.make()
