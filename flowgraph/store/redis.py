"""RedisStore: long-term memory in Redis, shared by every process that reaches the server.

Key layout (every key carries the hash tag `{prefix}`, so on a Redis Cluster
one store lives in one slot, where its scripts may touch all its keys)::

    {prefix}item:<member>   hash: data (codec bytes), vectors, created, updated, ttl (ms)
    {prefix}index           sorted set of every item's <member>, all score 0 (by text)
    {prefix}expiry          sorted set of the members that have a TTL, by expiry (ms)

A member is the encoded namespace, U+001E, and the key: namespaces sort
before their children and a namespace prefix is one lexicographic range of
the index. Redis itself expires an item's hash (PEXPIRE); the expiry set
lets a sweep drop the index entries of expired items (every
`list_namespaces`, and at most every `sweep_interval` on `put`), and a
search skips an entry whose hash is gone meanwhile. Writes, reads that
refresh a TTL and sweeps are Lua scripts (atomic, server time for expiry).

Plain Redis has no query engine: a search reads every item under the
prefix and filters in Python (the rules of `_filter`), which suits
memories per user or per agent; keep namespaces narrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flowgraph.checkpoint.redis import _Script
from flowgraph.store._filter import Condition
from flowgraph.store.base import BaseStore, NewRow, Row

try:
    import redis
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.retry import Retry
except ImportError as exc:  # pragma: no cover - the `redis` extra is missing
    raise ImportError("RedisStore needs redis-py: pip install 'flowgraph[redis]'") from exc

__all__ = ["DEFAULT_PREFIX", "RedisStore"]

DEFAULT_PREFIX = "flowgraph:store:"
_KEY_END = "\x1e"
"""Between a member's namespace and its key: sorts before U+001F, the label separator."""
_BATCH = 500

_NOW_MS = (
    "local clock = redis.call('TIME') "
    "local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) "
)
_PUT = _Script(
    # KEYS: item, index, expiry; ARGV: member, data, vectors, now (s), ttl (ms, 0: none)
    "local created = redis.call('HGET', KEYS[1], 'created') or ARGV[4] "
    "redis.call('DEL', KEYS[1]) "
    "redis.call('HSET', KEYS[1], 'data', ARGV[2], 'created', created, 'updated', ARGV[4], "
    "'ttl', ARGV[5]) "
    "if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'vectors', ARGV[3]) end "
    "redis.call('ZADD', KEYS[2], 0, ARGV[1]) "
    "local ttl = tonumber(ARGV[5]) "
    "if ttl > 0 then " + _NOW_MS + "redis.call('PEXPIRE', KEYS[1], ttl) "
    "redis.call('ZADD', KEYS[3], now + ttl, ARGV[1]) "
    "else redis.call('ZREM', KEYS[3], ARGV[1]) end"
)
_GET = _Script(
    # KEYS: item, expiry; ARGV: member, refresh ("1" or "0")
    "local found = redis.call('HMGET', KEYS[1], 'data', 'created', 'updated', 'ttl') "
    "if not found[1] then return false end "
    "local ttl = tonumber(found[4] or '0') "
    "if ARGV[2] == '1' and ttl > 0 then " + _NOW_MS + "redis.call('PEXPIRE', KEYS[1], ttl) "
    "redis.call('ZADD', KEYS[2], now + ttl, ARGV[1]) end "
    "return {found[1], found[2], found[3]}"
)
_REFRESH = _Script(
    # KEYS: expiry, then the items; ARGV: their members
    _NOW_MS + "for i, member in ipairs(ARGV) do "
    "local ttl = tonumber(redis.call('HGET', KEYS[i + 1], 'ttl') or '0') "
    "if ttl > 0 then redis.call('PEXPIRE', KEYS[i + 1], ttl) "
    "redis.call('ZADD', KEYS[1], now + ttl, member) end end"
)
_SWEEP = _Script(
    # KEYS: index, expiry; ARGV: the item keys' prefix, how many at most
    _NOW_MS + "local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, "
    "tonumber(ARGV[2])) "
    "local gone = 0 "
    "for _, member in ipairs(due) do "
    "if redis.call('EXISTS', ARGV[1] .. member) == 0 then "
    "redis.call('ZREM', KEYS[1], member) redis.call('ZREM', KEYS[2], member) gone = gone + 1 "
    "end end "
    "return {gone, #due}"
)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisStore(BaseStore):
    """Long-term memory in Redis (or a Redis-compatible server) at `url`.

    `prefix` namespaces every key, so apps can share a server. Connections
    come from one blocking pool of `max_connections` (threads wait up to
    `pool_timeout` seconds for one); other keyword options go to redis-py,
    and the options every store takes to BaseStore.
    """

    _STORE_OPTIONS = frozenset(
        {"index", "embed", "fields", "default_ttl", "refresh_on_read", "sweep_interval"}
    )

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_connections: int = 50,
        pool_timeout: float = 20.0,
        **options: Any,
    ) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(
                f"prefix {prefix!r} must not contain braces: the store wraps it in the hash "
                "tag that keeps its keys in one cluster slot"
            )
        if options.get("decode_responses"):
            raise ValueError("decode_responses=True cannot be used: values are stored as bytes")
        super().__init__(**{k: v for k, v in options.items() if k in self._STORE_OPTIONS})
        client_options = {k: v for k, v in options.items() if k not in self._STORE_OPTIONS}
        client_options.setdefault(
            "retry", Retry(ExponentialWithJitterBackoff(cap=1.0, base=0.05), 3)
        )
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **client_options
        )
        self.client: redis.Redis = redis.Redis.from_pool(pool)
        """The redis-py client (thread-safe, pooled); for looking at keys, not writing them."""
        self.prefix = prefix
        tag = "{" + prefix + "}"
        self._items = tag + "item:"
        self._index = tag + "index"
        self._expiry = tag + "expiry"

    def close(self) -> None:
        """Disconnect every pooled connection (a later call opens new ones)."""
        self.client.close()

    def _member(self, namespace: str, key: str) -> str:
        return namespace + _KEY_END + key

    # -- primitives -------------------------------------------------------------------

    def _put(self, row: NewRow) -> None:
        member = self._member(row.namespace, row.key)
        ttl_ms = 0 if row.ttl is None else max(1, math.ceil(row.ttl * 1000))
        _PUT(
            self.client,
            [self._items + member, self._index, self._expiry],
            [member, row.data, row.vectors, repr(row.now), ttl_ms],
        )

    def _get(self, namespace: str, key: str, now: float, refresh: bool) -> Row | None:
        member = self._member(namespace, key)
        found = _GET(
            self.client, [self._items + member, self._expiry], [member, "1" if refresh else "0"]
        )
        if not found:
            return None
        data, created, updated = found
        return Row(namespace, key, data, float(created), float(updated))

    def _delete(self, namespace: str, key: str) -> None:
        member = self._member(namespace, key)
        with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._items + member)
            pipe.zrem(self._index, member)
            pipe.zrem(self._expiry, member)
            pipe.execute()

    def _members(self, prefix: str | None) -> list[str]:
        """Index entries at `prefix` or below it (of live items, and of some just expired)."""
        if prefix is None:
            low, high = "-", "+"
        else:  # the namespace itself (then U+001E) and below it (U+001F), up to U+0020
            low, high = "[" + prefix + _KEY_END, "(" + prefix + "\x20"
        return [_text(m) for m in self.client.zrangebylex(self._index, low, high)]

    def _search(
        self,
        prefix: str | None,
        conditions: Sequence[Condition],
        now: float,
        window: tuple[int, int] | None,
        vectors: bool,
    ) -> tuple[list[Row], bool]:
        fields = ["data", "created", "updated", *(["vectors"] if vectors else [])]
        members = self._members(prefix)
        rows = []
        for start in range(0, len(members), _BATCH):
            batch = members[start : start + _BATCH]
            with self.client.pipeline(transaction=False) as pipe:
                for member in batch:
                    pipe.hmget(self._items + member, fields)
                replies = pipe.execute()
            for member, reply in zip(batch, replies, strict=True):
                if reply[0] is None:
                    continue  # expired since the last sweep
                namespace, _, key = member.partition(_KEY_END)
                rows.append(
                    Row(
                        namespace,
                        key,
                        reply[0],
                        float(reply[1]),
                        float(reply[2]),
                        reply[3] if vectors else None,
                    )
                )
        return rows, False  # the caller filters, ranks and windows

    def _refresh(self, items: Sequence[tuple[str, str]], now: float) -> None:
        members = [self._member(namespace, key) for namespace, key in items]
        _REFRESH(self.client, [self._expiry, *(self._items + m for m in members)], members)

    def _namespaces(self, prefix: str | None, now: float) -> list[str]:
        self._sweep(now)
        return sorted({member.partition(_KEY_END)[0] for member in self._members(prefix)})

    def _sweep(self, now: float) -> int:
        total = 0
        while True:
            gone, due = _SWEEP(self.client, [self._index, self._expiry], [self._items, _BATCH])
            total += int(gone)
            if int(due) < _BATCH or not gone:
                return total
