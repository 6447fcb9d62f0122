"""What only RedisCheckpointer has: expiry, namespaces, the key layout, connections, forks.

The protocol itself is tested by the conformance suite (conftest.BACKENDS);
these tests look at the raw keys on a real server (FLOWGRAPH_TEST_REDIS_URL),
each under a key prefix of its own so parallel workers never meet.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flowgraph import HumanMessage
from flowgraph.checkpoint.base import CheckpointRecord, PendingWrite, new_checkpoint_id
from flowgraph.errors import ConcurrentRunError, DeserializationError

redis = pytest.importorskip("redis", reason="the `redis` extra (redis-py) is not installed")
from redis.crc import key_slot  # noqa: E402 - only once redis-py is known to be there

from flowgraph.checkpoint.redis import RedisCheckpointer  # noqa: E402

from ._apps import chat_app  # noqa: E402

URL = os.environ.get("FLOWGRAPH_TEST_REDIS_URL", "")
pytestmark = pytest.mark.skipif(
    not URL, reason="set FLOWGRAPH_TEST_REDIS_URL to a throw-away Redis server to run these"
)

Make = Callable[..., RedisCheckpointer]


@pytest.fixture
def admin() -> Iterator[Any]:
    """A plain client of the test server, for looking at keys behind the store's back."""
    with redis.Redis.from_url(URL) as client:
        yield client


@pytest.fixture
def make(admin: Any) -> Iterator[Make]:
    """Stores under prefixes unique to this test; every key under them is removed afterwards."""
    made: list[RedisCheckpointer] = []
    prefixes: set[str] = set()

    def factory(*, prefix: str | None = None, **options: Any) -> RedisCheckpointer:
        prefix = prefix or f"fgtest-{uuid.uuid4().hex[:12]}:"
        prefixes.add(prefix)
        store = RedisCheckpointer(URL, prefix=prefix, **options)
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()
    for prefix in prefixes:
        keys = list(admin.scan_iter(match=prefix + "*", count=1000))
        if keys:
            admin.unlink(*keys)


def record(thread_id: str, parent: CheckpointRecord | None = None, payload: bytes = b"p") -> Any:
    checkpoint_id = new_checkpoint_id()
    return CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=None if parent is None else parent.checkpoint_id,
        step=0 if parent is None else parent.step + 1,
        created_at=time.time(),
        base_id=checkpoint_id if parent is None else parent.base_id,
        payload=payload,
    )


def extend(store: RedisCheckpointer, thread_id: str, n: int) -> list[CheckpointRecord]:
    out: list[CheckpointRecord] = []
    for i in range(n):
        rec = record(thread_id, out[-1] if out else None)
        store.put(rec, expected_head=store.head(thread_id), messages={f"m{i}": b"message"})
        out.append(rec)
    return out


def raw(admin: Any, store: RedisCheckpointer, thread_id: str) -> dict[str, object]:
    """Everything stored for a thread, read with plain commands."""
    keys = store.thread_keys(thread_id)
    return {
        "head": admin.get(keys["head"]),
        "ids": admin.zrange(keys["ids"], 0, -1),
        "links": admin.hgetall(keys["links"]),
        "records": admin.hgetall(keys["records"]),
        "messages": admin.hgetall(keys["messages"]),
        "pending": admin.hgetall(keys["pending"]),
    }


# -- expiry ---------------------------------------------------------------------------------


def test_every_key_of_a_thread_gets_one_deadline(make: Make, admin: Any) -> None:
    store = make(ttl=60)
    first, _ = extend(store, "t", 2)
    store.put_pending("t", first.checkpoint_id, [PendingWrite(task_index=0, payload=b"w")])
    keys = list(store.thread_keys("t").values())
    assert admin.exists(*keys) == len(keys) == 6
    deadlines = {admin.pexpiretime(key) for key in keys}
    assert len(deadlines) == 1, deadlines  # the same millisecond: they expire together
    ttl_ms = admin.pttl(keys[0])
    assert 50_000 < ttl_ms <= 60_000


def test_each_kind_of_write_refreshes_the_deadline(make: Make, admin: Any) -> None:
    store = make(ttl=60)
    made = extend(store, "t", 3)
    keys = list(store.thread_keys("t").values())

    def put_snapshot() -> None:
        head = store.get("t", made[-1].checkpoint_id)
        assert head is not None
        snap = dataclasses.replace(record("t", head), base_id="")
        snap = dataclasses.replace(snap, base_id=snap.checkpoint_id)
        store.put(snap, expected_head=head.checkpoint_id, messages={})

    pending = [PendingWrite(task_index=1, payload=b"")]
    writes: list[Callable[[], object]] = [
        put_snapshot,
        lambda: store.put_pending("t", made[0].checkpoint_id, pending),
        lambda: store.prune("t", 1),  # drops the three before the snapshot
        lambda: store.forget_messages("t", set()),
    ]
    for write in writes:
        for key in keys:
            admin.pexpire(key, 5_000)
        write()
        assert all(50_000 < admin.pttl(key) <= 60_000 for key in keys if admin.exists(key))
    assert len(store.history("t")) == 1
    # a read is not a write: it leaves the deadline alone
    for key in keys:
        admin.pexpire(key, 5_000)
    store.history("t")
    store.messages("t", ["m0"])
    assert all(admin.pttl(key) <= 5_000 for key in keys if admin.exists(key))


def test_a_failed_put_does_not_refresh_the_deadline(make: Make, admin: Any) -> None:
    store = make(ttl=60)
    first, _ = extend(store, "t", 2)
    keys = list(store.thread_keys("t").values())
    for key in keys:
        admin.pexpire(key, 5_000)
    with pytest.raises(ConcurrentRunError):
        store.put(record("t", first), expected_head=first.checkpoint_id, messages={})
    assert all(0 < admin.pttl(key) <= 5_000 for key in keys if admin.exists(key))


def test_an_expired_thread_is_gone_whole_and_its_id_starts_afresh(make: Make, admin: Any) -> None:
    store = make(ttl=0.3)
    extend(store, "short", 3)
    long_lived = make(ttl=60, prefix=store.prefix)  # same namespace, another app's setting
    extend(long_lived, "long", 1)
    assert store.threads() == ["long", "short"]
    deadline = time.monotonic() + 10
    while store.head("short") is not None:
        assert time.monotonic() < deadline, "the thread never expired"
        time.sleep(0.05)
    assert admin.exists(*store.thread_keys("short").values()) == 0
    assert store.history("short") == []
    assert store.threads() == ["long"]
    assert admin.zscore(store.prefix + "threads", "short") is None  # the index forgot it
    extend(store, "short", 1)  # the id is free again
    assert store.threads() == ["long", "short"]


def test_without_a_ttl_a_write_makes_the_thread_persistent(make: Make, admin: Any) -> None:
    expiring = make(ttl=60)
    (first,) = extend(expiring, "t", 1)
    keeping = make(prefix=expiring.prefix)
    keeping.put(record("t", first), expected_head=first.checkpoint_id, messages={"x": b"x"})
    keys = [key for key in keeping.thread_keys("t").values() if admin.exists(key)]
    assert len(keys) == 5  # nothing pending
    assert {admin.pttl(key) for key in keys} == {-1}


@pytest.mark.parametrize("ttl", [0, -1.5])
def test_a_ttl_must_be_positive(ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        RedisCheckpointer(URL, ttl=ttl)


# -- namespaces and the key layout ----------------------------------------------------------


def test_two_prefixes_on_one_server_never_see_each_other(make: Make, admin: Any) -> None:
    a, b = (
        make(prefix=f"fgtest-{uuid.uuid4().hex[:8]}-a:"),
        make(prefix=f"fgtest-{uuid.uuid4().hex[:8]}-b:"),
    )
    a.put(record("t", payload=b"A"), expected_head=None, messages={"m": b"from a"})
    b.put(record("t", payload=b"B"), expected_head=None, messages={"m": b"from b"})
    extend(b, "only-b", 1)
    assert a.threads() == ["t"]
    assert b.threads() == ["only-b", "t"]
    assert [r.payload for r in a.history("t")] == [b"A"]
    assert a.messages("t", ["m"]) == {"m": b"from a"}
    a.delete_thread("t")
    assert a.threads() == []
    assert [r.payload for r in b.history("t")] == [b"B"]
    assert b.messages("t", ["m"]) == {"m": b"from b"}
    for store in (a, b):
        assert all(
            k.decode().startswith(store.prefix) for k in admin.scan_iter(match=store.prefix + "*")
        )


@pytest.mark.parametrize("thread_id", ["t", "", "a{b}c", "}{", "{x}", "%7B", "%", "日本語:1"])
def test_all_keys_of_a_thread_share_one_cluster_slot(
    make: Make, admin: Any, thread_id: str
) -> None:
    store = make()
    keys = store.thread_keys(thread_id)
    assert len({key_slot(k.encode()) for k in keys.values()}) == 1
    # distinct threads get distinct keys, even when escaping is involved
    others = {"t", "", "a{b}c", "}{", "{x}", "%7B", "%", "%25", "日本語:1"} - {thread_id}
    for other in others:
        assert set(store.thread_keys(other).values()).isdisjoint(keys.values())
    # and the protocol keeps every key it writes for the thread among them
    first, _ = extend(store, thread_id, 2)
    store.put_pending(thread_id, first.checkpoint_id, [PendingWrite(task_index=0, payload=b"")])
    written = {k.decode() for k in admin.scan_iter(match=store.prefix + "*")}
    assert written == {*keys.values(), store.prefix + "threads"}
    assert store.threads() == [thread_id]
    assert len(store.history(thread_id)) == 2


def test_a_prefix_with_braces_is_refused() -> None:
    with pytest.raises(ValueError, match="braces"):
        RedisCheckpointer(URL, prefix="app{1}:")


def test_the_store_needs_only_its_prefix_and_no_keyspace_scans(make: Make, admin: Any) -> None:
    """A Redis user that may touch only `prefix*` and may not SCAN or KEYS runs everything.

    threads() reads the index, never the keyspace; every script names the
    keys it touches (the ACL checks each command a script runs).
    """
    prefix = f"fgtest-{uuid.uuid4().hex[:12]}:"
    user = f"fgtest-{uuid.uuid4().hex[:8]}"
    admin.acl_setuser(
        user,
        enabled=True,
        nopass=True,
        keys=[f"{prefix}*"],
        commands=["+@all", "-scan", "-keys", "-randomkey"],
    )
    try:
        limited = make(prefix=prefix, ttl=600, username=user)
        first, second, third = extend(limited, "t", 3)
        limited.put_pending("t", third.checkpoint_id, [PendingWrite(task_index=0, payload=b"x")])
        extend(limited, "u", 1)
        assert limited.threads() == ["t", "u"]
        assert limited.history("t", limit=2, before=third.checkpoint_id) == [second, first]
        assert limited.chain("t", third.checkpoint_id) == [first, second, third]
        assert limited.pending("t", third.checkpoint_id) == [
            PendingWrite(task_index=0, payload=b"x")
        ]
        assert limited.prune("t", 1) == 0  # one snapshot at the root: all are needed
        assert limited.forget_messages("t", {"m0"}) == 2
        limited.delete_thread("u")
        assert limited.threads() == ["t"]
        with pytest.raises(redis.exceptions.NoPermissionError):
            limited.client.scan(0)  # the restriction is real
    finally:
        admin.acl_deluser(user)


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throw-away one-node Redis Cluster on loopback: it owns every slot, and so it
    refuses any command or script whose keys span two slots (CROSSSLOT) like a real one."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (the CI installs it)")
    workdir = tmp_path_factory.mktemp("cluster")
    for _attempt in range(5):  # a free port may be taken between probing and binding it
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", str(workdir / f"nodes-{port}.conf"), "--dir", str(workdir),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{port}/0"
        with redis.Redis.from_url(url) as client:
            deadline = time.monotonic() + 60
            while server.poll() is None:
                try:
                    client.ping()
                    break
                except redis.exceptions.ConnectionError:
                    assert time.monotonic() < deadline, "redis-server did not start"
                    time.sleep(0.05)
        if server.poll() is None:
            break
    else:
        pytest.fail(f"redis-server exited at once five times (last code {server.returncode})")
    try:
        with redis.Redis.from_url(url) as client:
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            while client.cluster("info")["cluster_state"] != "ok":
                assert time.monotonic() < deadline, "the one-node cluster never came up"
                time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_every_call_runs_on_a_cluster_node_that_refuses_cross_slot_keys(cluster_url: str) -> None:
    with redis.Redis.from_url(cluster_url) as client:
        with pytest.raises(redis.exceptions.ClusterCrossSlotError):
            client.delete("a", "b")  # the check is real
    with RedisCheckpointer(cluster_url, ttl=600) as store:
        first, second, third = extend(store, "t", 3)
        store.put_pending("t", third.checkpoint_id, [PendingWrite(task_index=0, payload=b"x")])
        store.put_pending("t", third.checkpoint_id, [PendingWrite(task_index=1, payload=b"y")])
        extend(store, "u", 1)
        assert store.threads() == ["t", "u"]
        assert store.get("t", second.checkpoint_id) == second
        assert store.history("t", limit=2, before=third.checkpoint_id) == [second, first]
        assert store.chain("t", third.checkpoint_id) == [first, second, third]
        assert len(store.pending("t", third.checkpoint_id)) == 2
        assert store.messages("t", ["m0", "m2"]) == {"m0": b"message", "m2": b"message"}
        snap = dataclasses.replace(record("t", third), base_id="")
        snap = dataclasses.replace(snap, base_id=snap.checkpoint_id)
        store.put(snap, expected_head=third.checkpoint_id, messages={})
        assert store.prune("t", 1) == 3
        assert store.forget_messages("t", set()) == 3
        with pytest.raises(ConcurrentRunError):
            store.put(record("t", first), expected_head=first.checkpoint_id, messages={})
        store.delete_thread("u")
        store.delete_thread("t")
        assert store.threads() == []


def test_scripts_are_loaded_again_after_the_server_forgot_them(cluster_url: str) -> None:
    """A restarted or failed-over server has no scripts cached (a private server: flushing
    the shared one would disturb other workers)."""
    with RedisCheckpointer(cluster_url, prefix=f"fgtest-{uuid.uuid4().hex[:8]}:") as store:
        first, second = extend(store, "t", 2)
        store.put_pending("t", second.checkpoint_id, [PendingWrite(task_index=0, payload=b"")])
        calls: list[Callable[[], object]] = [
            lambda: extend(store, "new", 1),  # the first put of a thread: a pipeline
            lambda: extend(store, "new", 1),  # a later one: the script alone
            lambda: store.put_pending("t", first.checkpoint_id, []),
            lambda: store.put_and_acquire(  # a run's first write, a new thread: a pipeline
                record("run"), expected_head=None, messages={}, run_id="r", owner="o", lease_s=9
            ),
            lambda: store.put_and_release(
                record("run", store.get("run", store.head("run") or "")),
                expected_head=store.head("run"),
                messages={},
                run_id="r",
                owner="o",
            ),
            lambda: store.history("t"),
            lambda: store.chain("t", second.checkpoint_id),
            lambda: store.forget_messages("t", {"m1"}),
            lambda: store.threads(),
        ]
        for call in calls:
            store.client.script_flush()
            call()
        assert store.threads() == ["new", "run", "t"]
        assert len(store.history("new")) == 2 and len(store.history("run")) == 2
        assert store.read_lease("run") is None
        assert store.messages("t", ["m0", "m1"]) == {"m1": b"message"}
        for thread_id in store.threads():
            store.delete_thread(thread_id)


# -- atomicity ------------------------------------------------------------------------------


def test_a_lost_compare_and_set_writes_nothing(make: Make, admin: Any) -> None:
    store = make(ttl=60)
    first, second = extend(store, "t", 2)
    store.put_pending("t", second.checkpoint_id, [PendingWrite(task_index=0, payload=b"kept")])
    before = raw(admin, store, "t")
    deadlines = [admin.pexpiretime(k) for k in store.thread_keys("t").values()]
    late = record("t", second)
    # a stale head: every part of the step would be new, none of it may land
    with pytest.raises(ConcurrentRunError):
        store.put(late, expected_head=first.checkpoint_id, messages={"late": b"x", "m0": b"new"})
    assert raw(admin, store, "t") == before
    assert [admin.pexpiretime(k) for k in store.thread_keys("t").values()] == deadlines
    assert admin.hget(store.thread_keys("t")["messages"], "late") is None


def test_a_failed_put_on_a_missing_thread_creates_no_key(make: Make, admin: Any) -> None:
    store = make()
    with pytest.raises(ConcurrentRunError):
        store.put(record("t"), expected_head="not-there", messages={"m": b"x"})
    assert list(admin.scan_iter(match=store.prefix + "*")) == []


def test_a_retried_put_whose_reply_was_lost_succeeds_once(make: Make) -> None:
    """redis-py resends a command after a dropped connection; the script may have run."""
    store = make()
    (first,) = extend(store, "t", 1)
    again = record("t", first)
    store.put(again, expected_head=first.checkpoint_id, messages={"a": b"1"})
    store.put(again, expected_head=first.checkpoint_id, messages={"a": b"1"})  # the resend
    assert store.history("t") == [again, first]


def test_a_runs_first_and_last_writes_carry_its_lease_which_keeps_its_own_expiry(
    make: Make, admin: Any
) -> None:
    """One script each: the lease key (same hash tag) is not given the thread's deadline,
    a resend after a lost reply succeeds, and another run's lease keeps the step out."""
    store = make(ttl=60)
    first = record("t")
    lease_key = store.thread_keys("t")["head"].rsplit(":", 1)[0] + ":lease"
    assert (
        store.put_and_acquire(
            first, expected_head=None, messages={"m": b"q"}, run_id="run-a", owner="h", lease_s=5
        )
        is None
    )
    assert (
        store.put_and_acquire(  # the resend
            first, expected_head=None, messages={"m": b"q"}, run_id="run-a", owner="h", lease_s=5
        )
        is None
    )
    assert 0 < admin.pttl(lease_key) <= 5_000
    assert all(
        50_000 < admin.pttl(key) for key in store.thread_keys("t").values() if admin.exists(key)
    )
    second = record("t", first)
    holder = store.put_and_acquire(
        second, expected_head=first.checkpoint_id, messages={}, run_id="run-b", owner="h", lease_s=5
    )
    assert holder is not None and (holder.run_id, holder.owner) == ("run-a", "h")
    assert 0 < holder.expires_at - time.time() <= 5
    assert store.head("t") == first.checkpoint_id
    assert store.put_and_release(
        second, expected_head=first.checkpoint_id, messages={}, run_id="run-a", owner="h"
    )
    assert admin.exists(lease_key) == 0 and store.head("t") == second.checkpoint_id
    assert store.history("t") == [second, first]


# -- what the conformance suite cannot damage from outside -----------------------------------


def test_a_damaged_message_is_a_clear_error_naming_the_thread(make: Make, admin: Any) -> None:
    store = make()
    app = chat_app(store)
    for t in ("bad", "good"):
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    messages_key = store.thread_keys("bad")["messages"]
    for key in admin.hkeys(messages_key):
        admin.hset(messages_key, key, b"\x01\x02garbage")
    with pytest.raises(DeserializationError) as caught:
        app.get_state("bad")
    assert "bad" in str(caught.value)
    assert len(app.get_state("good").values.messages) == 2


@pytest.mark.parametrize("damage", [b"garbage", b"0 99\nshort", b"x y\n"])
def test_damaged_pending_writes_are_a_deserialization_error(
    make: Make, admin: Any, damage: bytes
) -> None:
    store = make()
    (root,) = extend(store, "t", 1)
    store.put_pending("t", root.checkpoint_id, [PendingWrite(task_index=0, payload=b"ok")])
    admin.hset(store.thread_keys("t")["pending"], root.checkpoint_id, damage)
    with pytest.raises(DeserializationError, match="'t'"):
        store.pending("t", root.checkpoint_id)
    with pytest.raises(DeserializationError, match="'t'"):
        store.put_pending("t", root.checkpoint_id, [PendingWrite(task_index=1, payload=b"")])


def test_a_record_too_short_to_hold_its_header_names_thread_and_checkpoint(
    make: Make, admin: Any
) -> None:
    store = make()
    (root,) = extend(store, "t", 1)
    admin.hset(store.thread_keys("t")["records"], root.checkpoint_id, b"tiny")
    with pytest.raises(DeserializationError, match=f"{root.checkpoint_id}.*'t'"):
        store.get("t", root.checkpoint_id)


# -- the thread index -----------------------------------------------------------------------


def test_threads_drops_index_entries_whose_thread_vanished(make: Make, admin: Any) -> None:
    store = make()
    extend(store, "kept", 1)
    extend(store, "vanished", 1)
    admin.delete(*store.thread_keys("vanished").values())  # as if a delete died half-way
    assert store.threads() == ["kept"]
    assert admin.zrange(store.prefix + "threads", 0, -1) == [b"kept"]


def test_delete_thread_removes_every_key_and_the_index_entry(make: Make, admin: Any) -> None:
    store = make(ttl=60)
    (root,) = extend(store, "t", 1)
    store.put_pending("t", root.checkpoint_id, [PendingWrite(task_index=0, payload=b"")])
    store.delete_thread("t")
    assert list(admin.scan_iter(match=store.prefix + "*")) == []


# -- connections ----------------------------------------------------------------------------


def test_a_connection_killed_by_the_server_is_replaced(make: Make, admin: Any) -> None:
    store = make()
    (first,) = extend(store, "t", 1)
    connection_id = store.client.client_id()
    assert admin.client_kill_filter(_id=connection_id) == 1
    second = record("t", first)
    store.put(second, expected_head=first.checkpoint_id, messages={})
    assert store.history("t") == [second, first]
    assert store.client.client_id() != connection_id


def test_every_pooled_connection_killed_at_once(make: Make, admin: Any) -> None:
    name = f"fgtest-{uuid.uuid4().hex[:8]}"
    store = make(client_name=name)
    barrier = threading.Barrier(4)

    def busy(i: int) -> None:
        barrier.wait()
        extend(store, f"t{i}", 3)

    workers = [threading.Thread(target=busy, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ours = [c for c in admin.client_list() if c["name"] == name]
    assert ours
    for client in ours:
        admin.client_kill_filter(_id=client["id"])
    assert not [c for c in admin.client_list() if c["name"] == name]
    assert store.threads() == ["t0", "t1", "t2", "t3"]
    extend(store, "t4", 2)
    assert len(store.history("t4")) == 2


def test_the_pool_bounds_connections_and_threads_wait_their_turn(make: Make, admin: Any) -> None:
    name = f"fgtest-{uuid.uuid4().hex[:8]}"
    store = make(client_name=name, max_connections=2)
    errors: list[BaseException] = []
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, sum(c["name"] == name for c in admin.client_list()))

    def work(i: int) -> None:
        try:
            extend(store, f"t{i}", 10)
        except BaseException as exc:
            errors.append(exc)

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    watcher.join()
    assert not errors, errors
    assert 1 <= peak <= 2
    assert [len(store.history(f"t{i}")) for i in range(8)] == [10] * 8


def test_close_disconnects_and_a_later_call_reconnects(make: Make, admin: Any) -> None:
    name = f"fgtest-{uuid.uuid4().hex[:8]}"
    store = make(client_name=name)
    extend(store, "t", 1)
    assert any(c["name"] == name for c in admin.client_list())
    store.close()
    deadline = time.monotonic() + 5
    while any(c["name"] == name for c in admin.client_list()):
        assert time.monotonic() < deadline, "close() left a connection open"
        time.sleep(0.02)


def test_a_forked_child_uses_the_store_without_touching_the_parents_connection(
    make: Make,
) -> None:
    """Children inherit the store mid-use; all of them and the parent race on one thread."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork (POSIX)")
    store = make()
    extend(store, "t", 1)  # the parent's pool now holds an open connection
    children, rounds = 3, 20
    reader, writer = os.pipe()
    pids = []
    for c in range(children):
        with warnings.catch_warnings():
            # 3.12+ warns about forking a threaded process (pytest-xdist's workers are);
            # the child here only talks to Redis through its own fresh connections.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                wins = race(store, "t", rounds, f"c{c}")
                os.write(writer, f"{wins}\n".encode())
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(writer)
    parent_wins = race(store, "t", rounds, "parent")
    statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    with os.fdopen(reader) as lines:
        child_wins = [int(line) for line in lines]
    assert statuses == [0] * children
    chain = []
    current = store.head("t")
    records = {r.checkpoint_id: r for r in store.history("t")}
    while current is not None:
        chain.append(records[current])
        current = records[current].parent_id
    assert len(chain) == len(records) == 1 + parent_wins + sum(child_wins)
    assert [r.step for r in chain] == list(range(len(chain) - 1, -1, -1))


def race(store: RedisCheckpointer, thread_id: str, rounds: int, who: str) -> int:
    wins = 0
    for i in range(rounds):
        head = store.head(thread_id)
        assert head is not None
        parent = store.get(thread_id, head)
        assert parent is not None
        try:
            store.put(record(thread_id, parent), expected_head=head, messages={f"{who}-{i}": b""})
            wins += 1
        except ConcurrentRunError:
            pass
    return wins


def test_without_redis_py_the_import_error_says_what_to_install() -> None:
    code = "import sys; sys.modules['redis'] = None; import flowgraph.checkpoint.redis"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "pip install 'flowgraph[redis]'" in out.stderr
