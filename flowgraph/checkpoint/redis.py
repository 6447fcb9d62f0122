"""RedisCheckpointer: checkpoints in Redis, shared by every process that reaches the server.

Each write is one Lua script on the thread's own keys, holding the
compare-and-set on the thread's head, the record, the new messages, the
clearing of pending writes and the expiry refresh, so a step is stored
whole or not at all; a run's first step also takes the thread's lease in its
script, and its last gives it back. A thread's keys share the `{thread}` hash
tag: on a Redis Cluster they live in one slot, where a script may touch them
all.

The thread index (for `threads()`) is a sorted set in another slot, so it is
kept apart from the scripts: a thread's first put adds it after the script,
`delete_thread` removes it, and `threads()` lists only entries whose thread
still has a head, purging those whose thread expired or vanished. The key
layout is in `flowgraph.checkpoint._redis_scripts`.
"""

from __future__ import annotations

import hashlib
import math
import struct
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from flowgraph.checkpoint import _redis_scripts as scripts
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    ThreadLease,
    chain_from_rows,
    concurrent_run_error,
    kept_after_prune,
)
from flowgraph.errors import DeserializationError

try:
    import redis
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.exceptions import NoScriptError, ResponseError
    from redis.retry import Retry
except ImportError as exc:  # pragma: no cover - the `redis` extra is missing
    raise ImportError("RedisCheckpointer needs redis-py: pip install 'flowgraph[redis]'") from exc

__all__ = ["RedisCheckpointer"]

DEFAULT_PREFIX = "flowgraph:"
_HEADER = struct.Struct(">qd")
"""A record's value starts with its step and created_at; the payload follows."""
_BATCH = 1000
"""Keys per HMGET / EXISTS batch, so one reply never holds a whole huge thread."""


class _Script:
    """A Lua script called by its SHA1, loaded into the server the first time it is missing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, client: redis.Redis, keys: Sequence[str], args: Sequence[object]) -> Any:
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)  # type: ignore[arg-type]
        except NoScriptError:  # a new or restarted server, or SCRIPT FLUSH
            client.script_load(self.source)
            return client.evalsha(self.sha, len(keys), *keys, *args)  # type: ignore[arg-type]


_PUT = _Script(scripts.PUT)
_PUT_AND_ACQUIRE = _Script(scripts.PUT_AND_ACQUIRE)
_PUT_AND_RELEASE = _Script(scripts.PUT_AND_RELEASE)
_PUT_PENDING = _Script(scripts.PUT_PENDING)
_PRUNE = _Script(scripts.PRUNE)
_FORGET = _Script(scripts.FORGET)
_HISTORY = _Script(scripts.HISTORY)
_CHAIN = _Script(scripts.CHAIN)
_PURGE_INDEX = _Script(scripts.PURGE_INDEX)
_ACQUIRE_LEASE = _Script(scripts.ACQUIRE_LEASE)
_RENEW_LEASE = _Script(scripts.RENEW_LEASE)
_RELEASE_LEASE = _Script(scripts.RELEASE_LEASE)


def _ms(seconds: float) -> str:
    return str(max(1, math.ceil(seconds * 1000)))


def _tag(thread_id: str) -> str:
    """The thread id as a hash tag's content: braces and `%` escaped, never empty.

    A `}` inside the tag would end it early, and an empty tag `{}` hashes the
    whole key, so both would scatter a thread over slots; the escape keeps
    distinct threads distinct.
    """
    escaped = thread_id.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")
    return escaped or "%"


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _raw_score(score: object) -> bytes:
    """A score as the server spelled it (RESP2) or as its repr (RESP3's doubles), for Lua."""
    return score if isinstance(score, bytes) else repr(score).encode()


def _lease_of(thread_id: str, run: object, owner: object, left_ms: object) -> ThreadLease:
    """A lease as a script or HMGET reads it: run, owner and the key's PTTL (ms left)."""
    return ThreadLease(
        thread_id=thread_id,
        run_id=_text(run),
        owner=_text(owner or b""),
        expires_at=time.time() + max(int(cast(int, left_ms)), 0) / 1000,
    )


def _decode_record(
    thread_id: str, checkpoint_id: str, link: object, value: object
) -> CheckpointRecord:
    if not isinstance(link, bytes) or not isinstance(value, bytes) or len(value) < _HEADER.size:
        raise DeserializationError(
            f"Checkpoint {checkpoint_id!r} of thread {thread_id!r} is damaged in Redis (its "
            "record or link is missing or too short); delete the thread or restore it"
        )
    step, created_at = _HEADER.unpack_from(value)
    base, _, parent = link.decode().partition("\n")
    return CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=parent or None,
        step=step,
        created_at=created_at,
        base_id=base,
        payload=value[_HEADER.size :],
    )


def _decode_rows(thread_id: str, flat: Sequence[object]) -> list[CheckpointRecord]:
    """Records from a script's flat (id, link, record) reply; ids pruned meanwhile are skipped."""
    out = []
    for i in range(0, len(flat), 3):
        checkpoint_id, link, value = flat[i : i + 3]
        if link is None and value is None:
            continue
        out.append(_decode_record(thread_id, _text(checkpoint_id), link, value))
    return out


def _decode_pending(thread_id: str, checkpoint_id: str, data: bytes) -> list[PendingWrite]:
    """Parse `<index> <length>\\n<bytes>`... (the format PUT_PENDING writes)."""
    writes = []
    pos = 0
    try:
        while pos < len(data):
            newline = data.index(b"\n", pos)
            index, size = (int(part) for part in data[pos:newline].split(b" "))
            payload = data[newline + 1 : newline + 1 + size]
            if len(payload) != size:
                raise ValueError("truncated")
            writes.append(PendingWrite(task_index=index, payload=payload))
            pos = newline + 1 + size
    except ValueError as exc:
        raise DeserializationError(
            f"The pending writes of checkpoint {checkpoint_id!r} of thread {thread_id!r} are "
            "damaged in Redis; delete the thread or restore it"
        ) from exc
    return writes


class RedisCheckpointer(BaseCheckpointer):
    """Checkpoints in Redis (or a Redis-compatible server) at `url`, e.g. `redis://host:6379/0`.

    `ttl` (seconds): every key of a thread expires that long after the
    thread's last write, all at once; None keeps threads until deleted.
    `prefix` namespaces every key, so apps can share a server. Connections
    come from one blocking pool of `max_connections` (threads wait for a
    free one up to `pool_timeout` seconds); the pool reconnects after a
    dropped connection and starts afresh in a forked child. Other keyword
    options go to redis-py (`ssl_ca_certs`, `socket_timeout`, `client_name`...).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float | None = None,
        prefix: str = DEFAULT_PREFIX,
        max_connections: int = 50,
        pool_timeout: float = 20.0,
        lease_s: float | None = None,
        **options: Any,
    ) -> None:
        if ttl is not None and not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds or None, not {ttl!r}")
        if "{" in prefix or "}" in prefix:
            raise ValueError(
                f"prefix {prefix!r} must not contain braces: they would make the hash tag "
                "that keeps a thread's keys in one cluster slot"
            )
        if options.get("decode_responses"):
            raise ValueError("decode_responses=True cannot be used: records and messages are bytes")
        self.ttl = ttl
        if lease_s is not None:
            self.lease_s = lease_s
        self.prefix = prefix
        self._ttl_ms = "0" if ttl is None else str(max(1, math.ceil(ttl * 1000)))
        options.setdefault("retry", Retry(ExponentialWithJitterBackoff(cap=1.0, base=0.05), 3))
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **options
        )
        self.client: redis.Redis = redis.Redis.from_pool(pool)
        """The redis-py client (thread-safe, pooled); for inspecting keys, not for writing them."""
        self._index = prefix + "threads"

    # -- keys -----------------------------------------------------------------------

    def thread_keys(self, thread_id: str) -> dict[str, str]:
        """The keys that hold the thread, by kind, in the order the scripts take them.

        For looking at a thread from outside (`MEMORY USAGE`, `PTTL`); the
        layout is described in `flowgraph.checkpoint._redis_scripts`.
        """
        base = f"{self.prefix}{{{_tag(thread_id)}}}:"
        return {kind: base + kind for kind in scripts.THREAD_KEYS}

    def _keys(self, thread_id: str) -> list[str]:
        return list(self.thread_keys(thread_id).values())

    def _lease_key(self, thread_id: str) -> str:
        return f"{self.prefix}{{{_tag(thread_id)}}}:lease"

    def close(self) -> None:
        """Disconnect every pooled connection (a later call opens new ones)."""
        self.client.close()

    def __enter__(self) -> RedisCheckpointer:
        return self

    # -- writing ------------------------------------------------------------------

    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        self._put(_PUT, record, expected_head, messages, [])

    def _put_and_acquire(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
        lease_s: float,
    ) -> ThreadLease | None:
        reply = self._put(
            _PUT_AND_ACQUIRE, record, expected_head, messages, [run_id, owner, _ms(lease_s)]
        )
        return None if reply[0] != 2 else _lease_of(record.thread_id, *reply[1:])

    def _put_and_release(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        self._put(_PUT_AND_RELEASE, record, expected_head, messages, [run_id, owner])
        return True

    def _put(
        self,
        script: _Script,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        lease: list[object],
    ) -> Any:
        """A step by `script`: PUT, or with `lease` (its arguments) one that also takes or
        gives back the thread's lease. Its reply, unless the head moved (then raises)."""
        thread_id = record.thread_id
        if "\n" in record.base_id:
            raise ValueError(f"base id {record.base_id!r} of thread {thread_id!r} holds a newline")
        link = (
            record.base_id if record.parent_id is None else f"{record.base_id}\n{record.parent_id}"
        )
        args: list[object] = [
            "0" if expected_head is None else "1",
            expected_head or "",
            record.checkpoint_id,
            link,
            _HEADER.pack(record.step, record.created_at) + record.payload,
            record.parent_id or "",
            self._ttl_ms,
        ]
        for key, data in messages.items():
            args += (key, data)
        args += lease
        keys = self._keys(thread_id)
        if lease:
            keys.append(self._lease_key(thread_id))
        if expected_head is None:
            reply = self._put_listed(script, thread_id, keys, args)
        else:
            reply = script(self.client, keys, args)
        if reply[0] == 0:
            head = reply[1]
            raise concurrent_run_error(
                thread_id, expected_head, None if head is None else _text(head)
            )
        return reply

    def _put_listed(
        self, script: _Script, thread_id: str, keys: list[str], args: list[object]
    ) -> Any:
        """The `script` of a thread's first step, between two index entries, in one round trip.

        The entry before the script keeps the thread listed if this process
        dies right after it; the one after (a higher score) survives a
        `threads()` purge that read the index before the script ran.
        """
        score = time.time_ns() // 1000

        def attempt() -> Any:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.zadd(self._index, {thread_id: score})
                pipe.evalsha(script.sha, len(keys), *keys, *args)  # type: ignore[arg-type]
                pipe.zadd(self._index, {thread_id: score + 1})
                return pipe.execute(raise_on_error=False)[1]

        reply = attempt()
        if isinstance(reply, NoScriptError):  # a new or restarted server, or SCRIPT FLUSH
            self.client.script_load(script.source)
            reply = attempt()
        if isinstance(reply, Exception):
            raise reply
        return reply

    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        args: list[object] = [checkpoint_id, self._ttl_ms]
        for write in writes:
            args += (write.task_index, write.payload)
        try:
            _PUT_PENDING(self.client, self._keys(thread_id), args)
        except ResponseError as exc:
            if "DAMAGED" not in str(exc):
                raise
            raise DeserializationError(
                f"The pending writes of checkpoint {checkpoint_id!r} of thread {thread_id!r} "
                "are damaged in Redis; delete the thread or restore it"
            ) from exc

    # -- leases (expiry by the server's clock, so hosts' clocks need not agree) -------

    def acquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        dead = [takeover.run_id, takeover.owner] if takeover is not None else ["", ""]
        reply = _ACQUIRE_LEASE(
            self.client, [self._lease_key(thread_id)], [run_id, owner, _ms(lease_s), *dead]
        )
        return None if reply[0] == 1 else _lease_of(thread_id, *reply[1:])

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        key = [self._lease_key(thread_id)]
        return bool(_RENEW_LEASE(self.client, key, [run_id, owner, _ms(lease_s)]))

    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        _RELEASE_LEASE(self.client, [self._lease_key(thread_id)], [run_id, owner])

    def read_lease(self, thread_id: str) -> ThreadLease | None:
        key = self._lease_key(thread_id)
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hmget(key, ["run", "owner"])
            pipe.pttl(key)
            (run, owner), left_ms = pipe.execute()
        if run is None or int(left_ms) <= 0:
            return None
        return _lease_of(thread_id, run, owner, left_ms)

    # -- reading ------------------------------------------------------------------

    def head(self, thread_id: str) -> str | None:
        head = self.client.get(self.thread_keys(thread_id)["head"])
        return None if head is None else _text(head)

    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        _, _, links, records, _, _ = self._keys(thread_id)
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hget(links, checkpoint_id)
            pipe.hget(records, checkpoint_id)
            link, value = pipe.execute()
        if link is None and value is None:
            return None
        return _decode_record(thread_id, checkpoint_id, link, value)

    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        _, _, links, records, _, _ = self._keys(thread_id)
        rows = _decode_rows(thread_id, _CHAIN(self.client, [links, records], [checkpoint_id]))
        return chain_from_rows(rows, checkpoint_id, thread_id)

    def messages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = list(keys)
        key = self.thread_keys(thread_id)["messages"]
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            values = cast("list[bytes | None]", self.client.hmget(key, batch))
            found.update((k, v) for k, v in zip(batch, values, strict=True) if v is not None)
        return found

    def pending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        data = cast(
            "bytes | None", self.client.hget(self.thread_keys(thread_id)["pending"], checkpoint_id)
        )
        return [] if data is None else _decode_pending(thread_id, checkpoint_id, data)

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        if limit is not None and limit <= 0:
            return []
        _, ids, links, records, _, _ = self._keys(thread_id)
        upper = "+" if before is None else "(" + before
        flat = _HISTORY(self.client, [ids, links, records], [upper, -1 if limit is None else limit])
        return _decode_rows(thread_id, flat)

    def threads(self) -> list[str]:
        entries = cast(
            "list[tuple[bytes, bytes]]",
            self.client.zrange(self._index, 0, -1, withscores=True, score_cast_func=_raw_score),
        )
        live: list[str] = []
        stale: list[object] = []
        for start in range(0, len(entries), _BATCH):
            batch = entries[start : start + _BATCH]
            with self.client.pipeline(transaction=False) as pipe:
                for name, _ in batch:
                    pipe.exists(self.thread_keys(name.decode())["head"])
                found = pipe.execute()
            for (name, score), exists in zip(batch, found, strict=True):
                if exists:
                    live.append(name.decode())
                else:  # expired with its TTL, or deleted by a call that died half-way
                    stale += (name, score)
        if stale:
            _PURGE_INDEX(self.client, [self._index], stale)
        return sorted(live)

    # -- housekeeping -------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        keys = self._keys(thread_id)
        with self.client.pipeline(transaction=False) as pipe:
            pipe.delete(*keys)
            pipe.zrem(self._index, thread_id)
            pipe.exists(keys[0])
            *_, recreated = pipe.execute()
        if recreated:  # a first put on the same id ran between the delete and the unlisting
            self.client.zadd(self._index, {thread_id: time.time_ns() // 1000})

    def prune(self, thread_id: str, keep_last: int) -> int:
        keys = self._keys(thread_id)
        while True:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.get(keys[0])
                pipe.hgetall(keys[2])
                head, links = pipe.execute()
            if head is None:
                return 0
            rows = []
            for cid, link in links.items():
                base, _, parent = link.decode().partition("\n")
                rows.append((cid.decode(), parent or None, base))
            keep = kept_after_prune(rows, head.decode(), keep_last)
            dropped = [cid for cid, _, _ in rows if cid not in keep]
            if not dropped:
                return 0
            removed = int(_PRUNE(self.client, keys, [head, self._ttl_ms, *dropped]))
            if removed >= 0:
                return removed
            # the head moved while we chose: choose again from the new head

    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        keys = self._keys(thread_id)
        while True:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.get(keys[0])
                pipe.hkeys(keys[4])
                head, stored = pipe.execute()
            gone = [key for key in (k.decode() for k in stored) if key not in keep]
            if head is None or not gone:
                return 0
            forgotten = int(_FORGET(self.client, keys, [head, self._ttl_ms, *gone]))
            if forgotten >= 0:
                return forgotten

    def compact(self) -> None:
        """Nothing to do: Redis frees a deleted field's memory at once.

        The server's append-only file is compacted by the server
        (BGREWRITEAOF, or its auto-rewrite), not by one of its clients.
        """
