"""The long-term store API, tested the same way on every backend (see conftest.BACKENDS)."""

from __future__ import annotations

import asyncio
import math
import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from flowgraph import HumanMessage
from flowgraph.errors import SerializationError, StoreError
from flowgraph.store import BaseStore, Item
from flowgraph.store._filter import json_view, matches, parse_filter

from .conftest import Backend

VOCABULARY = ["coffee", "tea", "dark", "light", "paris", "london", "cat", "dog"]


def embed(texts: list[str]) -> list[list[float]]:
    """A bag-of-words 'embedding' over a fixed vocabulary: similarity is predictable."""
    return [[float(text.lower().count(word)) for word in VOCABULARY] for text in texts]


def keys(items: list[Item]) -> list[str]:
    return [item.key for item in items]


# -- put / get / delete -------------------------------------------------------------------


def test_put_then_get_returns_the_value_exactly(store: BaseStore) -> None:
    value = {
        "text": "likes dark roast",
        "when": datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        "pair": (1, "a"),
        "raw": b"\x00\x01",
        "message": HumanMessage("hi", id="m1"),
        "tags": {"x", "y"},
        "big": 2**80,
    }
    store.put(("users", "u1"), "k", value)
    item = store.get(("users", "u1"), "k")
    assert item is not None
    assert item.value == value
    assert type(item.value["pair"]) is tuple and type(item.value["message"]) is HumanMessage
    assert item.namespace == ("users", "u1") and item.key == "k" and item.score is None
    assert item.created_at.tzinfo is UTC
    assert abs(item.created_at.timestamp() - time.time()) < 60
    assert store.get(("users", "u1"), "other") is None
    assert store.get(("users",), "k") is None  # a namespace is exact for get


def test_put_again_replaces_the_value_and_keeps_created_at(store: BaseStore) -> None:
    store.put(("n",), "k", {"v": 1})
    first = store.get(("n",), "k")
    time.sleep(0.01)
    store.put(("n",), "k", {"v": 2})
    second = store.get(("n",), "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


def test_delete_removes_the_item_and_a_missing_one_is_fine(store: BaseStore) -> None:
    store.put(("n",), "k", {"v": 1})
    store.put(("n",), "other", {"v": 2})
    store.delete(("n",), "k")
    store.delete(("n",), "never-stored")
    assert store.get(("n",), "k") is None
    assert keys(store.search(("n",))) == ["other"]
    assert store.list_namespaces() == [("n",)]
    store.delete(("n",), "other")
    assert store.list_namespaces() == []


def test_a_second_client_of_the_same_storage_sees_the_items(backend: Backend) -> None:
    if not backend.shared:
        pytest.skip("memory: an InMemoryStore's items live in that one object")
    backend.make().put(("shared",), "k", {"v": 1})
    item = backend.make().get(("shared",), "k")
    assert item is not None and item.value == {"v": 1}


@pytest.mark.parametrize(
    ("namespace", "key", "value", "match"),
    [
        ((), "k", {}, "at least one label"),
        ("users", "k", {}, "tuple of labels"),
        (("users", ""), "k", {}, "non-empty string"),
        (("users", 3), "k", {}, "non-empty string"),
        (("a\x1fb",), "k", {}, "control character"),
        (("a",), "", {}, "non-empty string"),
        (("a",), "k\n", {}, "control character"),
        (("a",), "\ud800", {}, "not valid Unicode"),
        (("a",), "k", ["not", "a", "dict"], "is a dict, not list"),
    ],
)
def test_bad_namespaces_keys_and_values_are_store_errors(
    store: BaseStore, namespace: Any, key: Any, value: Any, match: str
) -> None:
    with pytest.raises(StoreError, match=match):
        store.put(namespace, key, value)
    assert store.list_namespaces() == []


def test_a_value_the_codec_cannot_write_fails_before_anything_is_stored(store: BaseStore) -> None:
    with pytest.raises(SerializationError, match=r"notes\[0\]"):
        store.put(("a",), "k", {"notes": [object()]})
    assert store.get(("a",), "k") is None


def test_labels_may_hold_dots_slashes_and_any_printable_text(store: BaseStore) -> None:
    odd = ("bob@example.com", "a/b", "ünï cödé", "*")
    store.put(odd, "k.1", {"v": 1})
    assert store.get(odd, "k.1") is not None
    assert store.list_namespaces() == [odd]
    assert keys(store.search(odd[:2])) == ["k.1"]


# -- search: prefix, order, window ----------------------------------------------------------


def test_search_takes_a_namespace_prefix_by_labels_not_by_text(store: BaseStore) -> None:
    store.put(("a",), "top", {})
    store.put(("a", "b"), "child", {})
    store.put(("a", "b", "c"), "grandchild", {})
    store.put(("ab",), "sibling", {})
    store.put(("a ",), "space", {})
    assert sorted(keys(store.search(("a",)))) == ["child", "grandchild", "top"]
    assert sorted(keys(store.search(("a", "b")))) == ["child", "grandchild"]
    assert keys(store.search(("a", "b", "c", "d"))) == []
    assert len(store.search((), limit=100)) == 5


def test_search_lists_the_newest_write_first_with_limit_and_offset(store: BaseStore) -> None:
    for i in range(7):
        store.put(("n", f"sub{i % 2}"), f"k{i}", {"i": i})
    store.put(("n", "sub0"), "k2", {"i": 2, "again": True})  # now the newest
    assert keys(store.search(("n",), limit=100)) == ["k2", "k6", "k5", "k4", "k3", "k1", "k0"]
    assert keys(store.search(("n",), limit=3)) == ["k2", "k6", "k5"]
    assert keys(store.search(("n",), limit=3, offset=5)) == ["k1", "k0"]
    assert keys(store.search(("n",), limit=0)) == []
    assert len(store.search(("n",))) == 7  # the default limit is 10
    with pytest.raises(StoreError, match="limit must be an int >= 0"):
        store.search(("n",), limit=-1)


# -- search: filters ---------------------------------------------------------------------

FILTER_ITEMS: dict[str, dict[str, Any]] = {
    "pref": {"kind": "pref", "stars": 5, "lang": "fr", "profile": {"city": "Paris", "age": 41}},
    "fact": {"kind": "fact", "stars": 3, "lang": "en", "profile": {"city": "London"}},
    "float": {"kind": "fact", "stars": 3.0, "tags": ["a", "b"]},
    "bool": {"kind": "flag", "stars": True, "done": None},
    "text": {"kind": "note", "stars": "5", "when": datetime(2024, 1, 1)},
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"kind": "fact"}, {"fact", "float"}),
        ({"kind": "fact", "lang": "en"}, {"fact"}),
        ({"stars": 3}, {"fact", "float"}),  # 3 == 3.0
        ({"stars": 1}, set()),  # True is not 1
        ({"stars": True}, {"bool"}),
        ({"stars": "5"}, {"text"}),  # a string is not a number
        ({"done": None}, {"bool"}),
        ({"profile.city": "Paris"}, {"pref"}),
        ({"profile": {"city": "London"}}, {"fact"}),
        ({"tags": ["a", "b"]}, {"float"}),
        ({"tags": ["b", "a"]}, set()),
        ({"tags": "a"}, set()),  # equality is exact, not "contains"
        ({"stars": {"$gt": 3}}, {"pref"}),
        ({"stars": {"$gte": 3}}, {"pref", "fact", "float"}),  # not True, not "5"
        ({"stars": {"$lt": 5, "$gte": 3}}, {"fact", "float"}),
        ({"stars": {"$lte": 3.0}}, {"fact", "float"}),
        ({"lang": {"$gt": "en"}}, {"pref"}),
        ({"lang": {"$gte": "a"}}, {"pref", "fact"}),
        ({"kind": {"$ne": "fact"}}, {"pref", "bool", "text"}),
        ({"lang": {"$ne": "fr"}}, {"fact", "float", "bool", "text"}),  # missing counts as "not"
        ({"kind": {"$in": ["pref", "flag"]}}, {"pref", "bool"}),
        ({"kind": {"$in": []}}, set()),
        ({"kind": {"$nin": ["pref", "flag"]}}, {"fact", "float", "text"}),
        ({"lang": {"$exists": True}}, {"pref", "fact"}),
        ({"lang": {"$exists": False}}, {"float", "bool", "text"}),
        ({"done": {"$exists": True}}, {"bool"}),  # a stored None exists
        ({"when": {"$exists": True}}, set()),  # a datetime is not in the JSON view
        ({"profile.age": {"$gt": 40}, "kind": "pref"}, {"pref"}),
        ({"profile": {"age": {"$lt": 40}}}, set()),
        ({"stars": {"$eq": 5}}, {"pref"}),
        ({"tags": {"$eq": ["a", "b"]}}, {"float"}),
        ({"tags": {"$in": [["a", "b"], "x"]}}, {"float"}),
        ({"nothing.here": 1}, set()),
        ({}, {"pref", "fact", "float", "bool", "text"}),
    ],
)
def test_filter(store: BaseStore, spec: dict[str, Any], expected: set[str]) -> None:
    for key, value in FILTER_ITEMS.items():
        store.put(("f",), key, value)
    store.put(("other",), "pref", FILTER_ITEMS["pref"])
    assert set(keys(store.search(("f",), filter=spec, limit=100))) == expected


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"stars": {"$gt": 1, "kind": 2}}, "mixes operators"),
        ({"stars": {"$regex": "x"}}, "Unknown filter operator '\\$regex'"),
        ({"stars": {"$gt": [1]}}, "compares with a number or a string"),
        ({"stars": {"$gt": math.nan}}, "needs a finite number"),
        ({"stars": {"$in": 3}}, "takes a list"),
        ({"stars": {"$exists": 1}}, "takes True or False"),
        ({"when": datetime(2024, 1, 1)}, "not JSON-like"),
        ({"a..b": 1}, "not a field name"),
        ({3: 1}, "not a field name"),
    ],
)
def test_a_malformed_filter_is_a_store_error(
    store: BaseStore, spec: dict[Any, Any], match: str
) -> None:
    with pytest.raises(StoreError, match=match):
        store.search(("f",), filter=spec)


def _random_value(rng: random.Random) -> dict[str, Any]:
    scalars: list[Any] = [0, 1, 1.0, 2.5, -3, 10**20, True, False, None, "1", "a", "b", "B", "é"]
    value: dict[str, Any] = {}
    for name in ("n", "m"):
        if rng.random() < 0.8:
            value[name] = rng.choice([*scalars, [1, 2], {"x": 1}])
    if rng.random() < 0.7:
        value["meta"] = {"k": rng.choice(scalars)}
    return value


def _random_filter(rng: random.Random) -> dict[str, Any]:
    scalars: list[Any] = [0, 1, 2, 1.0, -3, 10**20, True, None, "1", "a", "b", "é"]
    out: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        field = rng.choice(["n", "m", "meta.k", "missing"])
        op = rng.choice(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"])
        if op in ("$gt", "$gte", "$lt", "$lte"):
            operand: Any = rng.choice([0, 1, 2.5, -3, "a", "b", "A"])
        elif op in ("$in", "$nin"):
            operand = rng.sample([*scalars, [1, 2]], rng.randint(0, 3))
        elif op == "$exists":
            operand = rng.random() < 0.5
        else:
            operand = rng.choice([*scalars, [1, 2], {"x": 1}])
        out[field] = {op: operand}
    return out


def test_every_backend_filters_and_pages_as_the_python_rules_say(store: BaseStore) -> None:
    """Random items and filters; each page must equal the one the rules of `_filter` give."""
    rng = random.Random(17)
    stored = []
    for i in range(40):
        value = _random_value(rng)
        namespace = ("r", rng.choice(["x", "y"]))
        store.put(namespace, f"k{i:02}", value)
        stored.append((f"k{i:02}", value))
    newest_first = list(reversed(stored))
    for _ in range(60):
        spec = _random_filter(rng)
        conditions = parse_filter(spec)
        expected = [key for key, value in newest_first if matches(json_view(value), conditions)]
        offset, limit = rng.randint(0, 3), rng.randint(1, 6)
        got = keys(store.search(("r",), filter=spec, limit=limit, offset=offset))
        assert got == expected[offset : offset + limit], spec


# -- search: query ---------------------------------------------------------------------


def test_a_query_without_an_embedding_function_ranks_by_words(store: BaseStore) -> None:
    store.put(("m",), "coffee", {"text": "Likes dark coffee in the morning"})
    store.put(("m",), "tea", {"text": "Drinks tea", "note": "never coffee after 4pm"})
    store.put(("m",), "city", {"text": "Lives in Paris"})
    found = store.search(("m",), query="coffee dark")
    assert keys(found) == ["coffee", "tea"]  # "city" shares no word: left out
    assert [item.score for item in found] == [1.0, 0.5]
    assert keys(store.search(("m",), query="PAR")) == ["city"]  # case-folded, word prefixes
    assert keys(store.search(("m",), query="coffee", filter={"note": {"$exists": True}})) == ["tea"]
    assert keys(store.search(("m",), query="coffee")) == ["tea", "coffee"]  # ties: newest first
    assert keys(store.search(("m",), query="coffee", limit=1, offset=1)) == ["coffee"]


def test_text_search_looks_only_at_the_index_fields(backend: Backend) -> None:
    store = backend.make(fields=["text"])
    store.put(("m",), "a", {"text": "about tea", "note": "coffee"})
    store.put(("m",), "b", {"text": "about coffee"})
    assert keys(store.search(("m",), query="coffee")) == ["b"]


@pytest.mark.parametrize("spelling", ["index", "embed"])
def test_a_query_ranks_by_embedding_similarity(backend: Backend, spelling: str) -> None:
    if spelling == "index":
        store = backend.make(index={"embed": embed, "dims": len(VOCABULARY), "fields": ["text"]})
    else:
        store = backend.make(embed=embed, fields=["text"])
    store.put(("m", "u1"), "both", {"text": "coffee, dark roast, in Paris"})
    store.put(("m", "u1"), "coffee", {"text": "coffee"})
    store.put(("m", "u2"), "tea", {"text": "tea in London"})
    store.put(("m", "u2"), "silent", {"text": "coffee"}, index=False)
    store.put(("m", "u2"), "other-field", {"text": "tea", "note": "coffee"}, index=["note"])
    found = store.search(("m",), query="coffee")
    assert keys(found) == ["other-field", "coffee", "both", "tea"]
    scores = [item.score for item in found]
    assert scores[:2] == pytest.approx([1.0, 1.0])
    assert scores[2] == pytest.approx(1 / math.sqrt(3))
    assert scores[3] == pytest.approx(0.0)
    assert keys(store.search(("m", "u1"), query="dark Paris", limit=1)) == ["both"]
    assert keys(store.search(("m",), query="coffee", filter={"text": "coffee"})) == ["coffee"]
    assert all(item.score is None for item in store.search(("m",)))


def test_embeddings_from_an_async_function_or_an_embeddings_object(backend: Backend) -> None:
    async def aembed(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return embed(texts)

    class Embeddings:  # the shape of a LangChain Embeddings object
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embed(texts)

        def embed_query(self, text: str) -> list[float]:
            return embed([text])[0]

    for embedder in (aembed, Embeddings()):
        store = backend.make(embed=embedder)
        store.put(("e", type(embedder).__name__), "k", {"text": "a cat and a dog"})
        found = store.search(("e", type(embedder).__name__), query="cat")
        assert [round(item.score or 0, 4) for item in found] == [round(1 / math.sqrt(2), 4)]


def test_an_embedding_of_the_wrong_size_is_a_store_error(backend: Backend) -> None:
    store = backend.make(index={"embed": embed, "dims": 3})
    with pytest.raises(StoreError, match="vector of 8 numbers; the store's index has dims=3"):
        store.put(("e",), "k", {"text": "cat"})
    assert store.get(("e",), "k") is None
    with pytest.raises(StoreError, match=r"embed=\.\.\. or index="):
        backend.make(embed=embed, index={"embed": embed})
    with pytest.raises(StoreError, match="unknown keys"):
        backend.make(index={"embed": embed, "dim": 3})  # type: ignore[typeddict-unknown-key]


# -- TTL ------------------------------------------------------------------------------


def test_an_expired_item_is_never_returned_and_a_sweep_deletes_it(backend: Backend) -> None:
    store = backend.make(sweep_interval=None)
    store.put(("t",), "short", {"v": 1}, ttl=0.3)
    store.put(("t", "deep"), "short2", {"v": 1}, ttl=0.3)
    store.put(("t",), "long", {"v": 2})
    assert sorted(keys(store.search(("t",)))) == ["long", "short", "short2"]
    time.sleep(0.5)
    assert store.get(("t",), "short") is None
    assert keys(store.search(("t",))) == ["long"]
    assert keys(store.search(("t",), filter={"v": 1})) == []
    assert store.list_namespaces() == [("t",)]
    store.sweep()
    assert store.sweep() == 0
    store.put(("t",), "short", {"v": 3})  # written again after it expired: a new item
    item = store.get(("t",), "short")
    long = store.get(("t",), "long")
    assert item is not None and long is not None and item.created_at > long.created_at


def test_a_sweep_counts_the_expired_items_it_deletes(backend: Backend) -> None:
    store = backend.make(sweep_interval=None)
    for i in range(3):
        store.put(("t",), f"k{i}", {"v": i}, ttl=0.2)
    store.put(("t",), "kept", {"v": 0})
    time.sleep(0.4)
    assert store.sweep() == 3
    assert store.sweep() == 0
    assert keys(store.search(("t",))) == ["kept"]


def test_reads_restart_the_ttl_unless_told_not_to(backend: Backend) -> None:
    store = backend.make()
    store.put(("t",), "read", {"v": 1}, ttl=1.5)
    store.put(("t",), "searched", {"v": 2}, ttl=1.5)
    store.put(("t",), "peeked", {"v": 3}, ttl=1.5)
    time.sleep(0.9)
    assert store.get(("t",), "read") is not None
    assert keys(store.search(("t",), filter={"v": 2})) == ["searched"]
    assert store.get(("t",), "peeked", refresh_ttl=False) is not None
    time.sleep(0.9)  # 1.8 s after the puts, 0.9 s after the reads
    assert store.get(("t",), "read") is not None
    assert store.get(("t",), "searched") is not None
    assert store.get(("t",), "peeked") is None


def test_refresh_on_read_false_makes_reads_leave_the_ttl(backend: Backend) -> None:
    store = backend.make(refresh_on_read=False)
    store.put(("t",), "k", {"v": 1}, ttl=0.8)
    time.sleep(0.5)
    assert store.get(("t",), "k") is not None
    assert len(store.search(("t",))) == 1
    time.sleep(0.5)
    assert store.get(("t",), "k") is None
    assert store.get(("t",), "k", refresh_ttl=True) is None  # expired stays expired


def test_default_ttl_applies_unless_a_put_says_otherwise(backend: Backend) -> None:
    store = backend.make(default_ttl=0.3)
    store.put(("t",), "default", {"v": 1})
    store.put(("t",), "forever", {"v": 2}, ttl=math.inf)
    store.put(("t",), "longer", {"v": 3}, ttl=60)
    time.sleep(0.5)
    assert sorted(keys(store.search(("t",)))) == ["forever", "longer"]
    for bad in (0, -1, math.nan, "1", True):
        with pytest.raises(StoreError, match="positive number of seconds"):
            store.put(("t",), "k", {}, ttl=bad)  # type: ignore[arg-type]


def test_puts_sweep_expired_items_at_the_sweep_interval(backend: Backend) -> None:
    store = backend.make(sweep_interval=0.0)  # every put sweeps
    store.put(("t",), "short", {"v": 1}, ttl=0.2)
    time.sleep(0.4)
    store.put(("t",), "next", {"v": 2})
    assert store.sweep() == 0  # the put's sweep took it already


# -- namespaces ----------------------------------------------------------------------


def test_list_namespaces(store: BaseStore) -> None:
    for namespace in [
        ("users", "u1", "memories"),
        ("users", "u1", "profile"),
        ("users", "u2", "memories"),
        ("agents", "planner"),
        ("users",),
    ]:
        store.put(namespace, "k", {})
    assert store.list_namespaces() == [
        ("agents", "planner"),
        ("users",),
        ("users", "u1", "memories"),
        ("users", "u1", "profile"),
        ("users", "u2", "memories"),
    ]
    assert store.list_namespaces(("users", "u1")) == [
        ("users", "u1", "memories"),
        ("users", "u1", "profile"),
    ]
    assert store.list_namespaces(max_depth=2) == [
        ("agents", "planner"),
        ("users",),
        ("users", "u1"),
        ("users", "u2"),
    ]
    assert store.list_namespaces(("users", "*", "memories")) == [
        ("users", "u1", "memories"),
        ("users", "u2", "memories"),
    ]
    assert store.list_namespaces(suffix=("memories",)) == [
        ("users", "u1", "memories"),
        ("users", "u2", "memories"),
    ]
    assert store.list_namespaces(suffix=("*", "profile")) == [("users", "u1", "profile")]
    assert store.list_namespaces(limit=2, offset=1) == [
        ("users",),
        ("users", "u1", "memories"),
    ]
    assert store.list_namespaces(("nobody",)) == []
    with pytest.raises(StoreError, match="max_depth"):
        store.list_namespaces(max_depth=0)


# -- async twins and the item's dict ---------------------------------------------------


def test_the_async_twins_do_what_the_sync_methods_do(store: BaseStore) -> None:
    async def scenario() -> None:
        await asyncio.gather(*(store.aput(("a", str(i)), "k", {"i": i}) for i in range(5)))
        item = await store.aget(("a", "3"), "k")
        assert item is not None and item.value == {"i": 3}
        found = await store.asearch(("a",), filter={"i": {"$gte": 3}})
        assert sorted(item.value["i"] for item in found) == [3, 4]
        assert len(await store.alist_namespaces(("a",))) == 5
        await store.adelete(("a", "3"), "k")
        assert await store.aget(("a", "3"), "k") is None
        assert await store.asweep() == 0

    asyncio.run(scenario())


def test_an_item_as_a_dict_is_json_ready(store: BaseStore) -> None:
    store.put(("a", "b"), "k", {"text": "coffee"})
    [item] = store.search(("a",), query="coffee")
    as_dict = item.to_dict()
    assert as_dict["namespace"] == ["a", "b"] and as_dict["key"] == "k"
    assert as_dict["value"] == {"text": "coffee"} and as_dict["score"] == 1.0
    assert datetime.fromisoformat(as_dict["created_at"]) == item.created_at
    plain = store.get(("a", "b"), "k")
    assert plain is not None and "score" not in plain.to_dict()
