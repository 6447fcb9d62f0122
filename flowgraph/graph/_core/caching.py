"""What node caching is told: a policy per node, and a store for the results.

`add_node(..., cache_policy=CachePolicy(ttl=60))` marks a node, and
`compile(cache=InMemoryCache())` gives the graph a place to keep results
(see `_engine.cache` for how a cached node runs).
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph._lazy import LazyModule

if TYPE_CHECKING:
    import hashlib

    from flowgraph.checkpoint import serde
else:  # only a node with a cache policy encodes and hashes: they load with the first one
    hashlib = LazyModule("hashlib")
    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = ["BaseCache", "CachePolicy", "InMemoryCache", "default_cache_key"]


def default_cache_key(arg: Any) -> str:
    """A digest of the node's input as the checkpoint codec encodes it.

    A pydantic state counts by its field values. Message ids are part of
    the state, so two threads with the same text rarely share a key: give
    `key_func` to say what makes two inputs the same.
    """
    if isinstance(arg, BaseModel):
        arg = [type(arg).__qualname__, dict(arg.__dict__)]
    return hashlib.blake2b(serde.dumps(arg), digest_size=16).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class CachePolicy:
    """How a node's results are cached: by what key, and for how long.

    `key_func(input)` returns a str (or bytes) naming the input; `ttl` is in
    seconds (None: kept until the cache is cleared).
    """

    key_func: Callable[[Any], str | bytes] = default_cache_key
    ttl: float | None = None

    def __post_init__(self) -> None:
        if self.ttl is not None and self.ttl <= 0:
            raise ValueError(
                f"CachePolicy.ttl must be a positive number of seconds, not {self.ttl}"
            )


class BaseCache(ABC):
    """Where cached node results live: bytes by (namespace, key), each with an expiry.

    The namespace is the node's (its name and function), so two nodes never
    read each other's results. Implement these three methods for another
    backend; they are called from the run's thread (or a node's worker thread).
    """

    @abstractmethod
    def get(self, namespace: tuple[str, ...], key: str) -> bytes | None:
        """The value stored under (namespace, key), or None if absent or expired."""

    @abstractmethod
    def set(self, namespace: tuple[str, ...], key: str, value: bytes, ttl: float | None) -> None:
        """Store `value`, to expire `ttl` seconds from now (None: never)."""

    @abstractmethod
    def clear(self, namespaces: Sequence[tuple[str, ...]] | None = None) -> None:
        """Forget the given namespaces' entries (None: everything)."""


class InMemoryCache(BaseCache):
    """A cache in this process's memory (thread-safe); it lives as long as the object."""

    def __init__(self) -> None:
        self._entries: dict[tuple[tuple[str, ...], str], tuple[bytes, float | None]] = {}
        self._lock = threading.Lock()

    def get(self, namespace: tuple[str, ...], key: str) -> bytes | None:
        with self._lock:
            entry = self._entries.get((namespace, key))
            if entry is None:
                return None
            value, expires = entry
            if expires is not None and expires <= time.monotonic():
                del self._entries[(namespace, key)]
                return None
            return value

    def set(self, namespace: tuple[str, ...], key: str, value: bytes, ttl: float | None) -> None:
        expires = None if ttl is None else time.monotonic() + ttl
        with self._lock:
            self._entries[(namespace, key)] = (value, expires)

    def clear(self, namespaces: Sequence[tuple[str, ...]] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._entries.clear()
                return
            gone = set(namespaces)
            for entry in [e for e in self._entries if e[0] in gone]:
                del self._entries[entry]
