"""RedisStore beyond the conformance suite: its keys, expiry, and what it refuses."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

redis = pytest.importorskip("redis", reason="the `redis` extra (redis-py) is not installed")

from flowgraph.store.redis import RedisStore  # noqa: E402

URL = os.environ.get("FLOWGRAPH_TEST_REDIS_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="set FLOWGRAPH_TEST_REDIS_URL to run these")


@pytest.fixture
def store() -> Iterator[RedisStore]:
    made = RedisStore(URL, prefix=f"fgstoretest-{uuid.uuid4().hex[:12]}:")
    yield made
    keys = list(made.client.scan_iter(match="{" + made.prefix + "}*"))
    if keys:
        made.client.unlink(*keys)
    made.close()


def test_every_key_carries_the_prefix_as_its_hash_tag(store: RedisStore) -> None:
    store.put(("users", "u1"), "k", {"v": 1}, ttl=60)
    tag = "{" + store.prefix + "}"
    keys = sorted(k.decode() for k in store.client.scan_iter(match=tag + "*"))
    assert keys == [tag + "expiry", tag + "index", tag + "item:users\x1fu1\x1ek"]
    assert 0 < store.client.pttl(tag + "item:users\x1fu1\x1ek") <= 60_000
    store.put(("users", "u1"), "k", {"v": 2})  # no TTL any more
    assert store.client.pttl(tag + "item:users\x1fu1\x1ek") == -1
    assert store.client.zcard(tag + "expiry") == 0


def test_redis_expires_the_item_and_a_sweep_drops_its_index_entry(store: RedisStore) -> None:
    store.put(("a",), "short", {"v": 1}, ttl=0.1)
    store.put(("a",), "kept", {"v": 2})
    time.sleep(0.3)
    index = "{" + store.prefix + "}index"
    assert store.client.zcard(index) == 2  # the hash is gone, its entry not yet
    assert [item.key for item in store.search(("a",))] == ["kept"]
    assert store.sweep() == 1
    assert store.client.zrange(index, 0, -1) == [b"a\x1ekept"]


def test_what_the_store_refuses() -> None:
    with pytest.raises(ValueError, match="must not contain braces"):
        RedisStore(URL, prefix="{x}")
    with pytest.raises(ValueError, match="decode_responses"):
        RedisStore(URL, decode_responses=True)
