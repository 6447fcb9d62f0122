"""A model's connections: httpx clients behind one gate of `max_connections` slots.

Why not one big httpx pool: on every request event httpcore's pool walks
all of its connections (checking each idle one with a `poll` syscall) and
every queued request, so a call costs time proportional to the pool's size
-- measured at 4 ms per call with 10 connections against 38 ms with 100 on
a loaded two-core machine. So a model's `limits.max_connections` are split
into shards of at most `SHARD_SIZE` connections, each an ordinary
`httpx.Client`/`AsyncClient` created when first needed; a call takes the
first shard with a free connection (so a lightly used model keeps using
one shard and its kept-alive connections), and waits at the gate when all
are busy -- never inside httpx, where queued requests would be re-examined
on every event and a long queue would hit the pool timeout.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import httpx

__all__ = ["SHARD_SIZE", "AsyncConnectionPool", "ConnectionPool", "shard_limits"]

SHARD_SIZE = 10

C = TypeVar("C", httpx.Client, httpx.AsyncClient)


def shard_limits(limits: httpx.Limits) -> list[httpx.Limits]:
    """`limits` split into shards of at most SHARD_SIZE connections (one shard if unlimited)."""
    total = limits.max_connections
    if total is None:
        return [limits]
    sizes = [SHARD_SIZE] * (total // SHARD_SIZE) + (
        [total % SHARD_SIZE] if total % SHARD_SIZE else []
    )
    keepalive = limits.max_keepalive_connections
    return [
        httpx.Limits(
            max_connections=size,
            max_keepalive_connections=size if keepalive is None else min(size, keepalive),
            keepalive_expiry=limits.keepalive_expiry,
        )
        for size in sizes or [1]
    ]


class _Shards(Generic[C]):
    """The shards and how busy each is; callers serialise access."""

    def __init__(
        self, make: Callable[[httpx.Limits], C], limits: httpx.Limits, given: C | None
    ) -> None:
        self.limits = [limits] if given is not None else shard_limits(limits)
        self.clients: list[C | None] = [given] + [None] * (len(self.limits) - 1)
        self.busy = [0] * len(self.limits)
        self.make: Callable[[httpx.Limits], C] = make
        self.given: C | None = given

    def take(self) -> C:
        for index, limit in enumerate(self.limits):
            if limit.max_connections is None or self.busy[index] < limit.max_connections:
                break
        else:  # the gate lets no more calls through than there are connections
            raise RuntimeError("no free connection")  # pragma: no cover
        self.busy[index] += 1
        client = self.clients[index]
        if client is None:
            client = self.clients[index] = self.make(limit)
        return client

    def give_back(self, client: C) -> None:
        for index, candidate in enumerate(self.clients):
            if candidate is client:
                self.busy[index] -= 1
                return

    def owned(self) -> list[C]:
        return [c for c in self.clients if c is not None and c is not self.given]


class ConnectionPool:
    """Blocking clients for threads; `acquire` waits while all connections are busy."""

    def __init__(
        self,
        make: Callable[[httpx.Limits], httpx.Client],
        limits: httpx.Limits,
        given: httpx.Client | None = None,
    ) -> None:
        self._shards = _Shards(make, limits, given)
        total = limits.max_connections
        self._slots = threading.Semaphore(total) if total else None
        self._lock = threading.Lock()

    def acquire(self) -> httpx.Client:
        if self._slots is not None:
            self._slots.acquire()
        with self._lock:
            return self._shards.take()

    def release(self, client: httpx.Client) -> None:
        with self._lock:
            self._shards.give_back(client)
        if self._slots is not None:
            self._slots.release()

    def close(self) -> None:
        for client in self._shards.owned():
            client.close()

    @property
    def clients(self) -> list[httpx.Client]:
        """The clients created so far (for tests and introspection)."""
        return [c for c in self._shards.clients if c is not None]


class AsyncConnectionPool:
    """Async clients of one event loop; `acquire` waits while all connections are busy."""

    def __init__(
        self,
        make: Callable[[httpx.Limits], httpx.AsyncClient],
        limits: httpx.Limits,
        given: httpx.AsyncClient | None = None,
    ) -> None:
        self._shards = _Shards(make, limits, given)
        total = limits.max_connections
        self._slots = asyncio.Semaphore(total) if total else None

    async def acquire(self) -> httpx.AsyncClient:
        if self._slots is not None:
            await self._slots.acquire()
        return self._shards.take()

    def release(self, client: httpx.AsyncClient) -> None:
        self._shards.give_back(client)
        if self._slots is not None:
            self._slots.release()

    async def aclose(self) -> None:
        for client in self._shards.owned():
            await client.aclose()

    @property
    def clients(self) -> list[httpx.AsyncClient]:
        """The clients created so far (for tests and introspection)."""
        return [c for c in self._shards.clients if c is not None]
