"""The long-term store protocol: what every backend does, and the logic they share.

A store keeps JSON-like documents (dicts) that outlive a thread: what an
agent learned about a user, facts, preferences. An item lives at a
namespace (a tuple of labels, like a folder path: `("users", "u1",
"memories")`) and a key within it.

`BaseStore` holds everything but the I/O: argument checks, the codec
(`flowgraph.checkpoint.serde`: values round-trip exactly, nothing runs on
load), TTLs, filters, ranking and embeddings. A backend implements the
seven `_primitives` over its tables or keys, so every backend answers alike
and one conformance suite (tests/store) tests them all. The async twins run
the same logic in a worker thread.

Namespaces are stored as their labels joined by U+001F, which no label may
contain (nor any other control character), so a prefix of a namespace is a
range of its text in every backend's code-point order.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flowgraph.checkpoint import serde
from flowgraph.errors import StoreError
from flowgraph.store._filter import Condition, json_view, matches, parse_filter
from flowgraph.store._index import Index, IndexConfig, make_index, similarity, word_score, words

__all__ = [
    "SEPARATOR",
    "BaseStore",
    "Item",
    "NewRow",
    "Row",
    "decode_namespace",
    "encode_namespace",
    "prefix_range",
]

SEPARATOR = "\x1f"
"""Joins a namespace's labels in storage; sorts before every character a label may hold."""
_AFTER = chr(ord(SEPARATOR) + 1)


@dataclass(frozen=True, slots=True)
class Item:
    """A stored document: where it lives, its value, when it was created and last written.

    Items from a `search` with a `query` carry its `score` (higher is a
    better match); others have `score=None`.
    """

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    """When the key was first written (or written again after it expired), UTC."""
    updated_at: datetime
    """When the value was last written, UTC."""
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The item as JSON-ready fields (LangGraph's wire shape; timestamps ISO 8601)."""
        out: dict[str, Any] = {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }
        if self.score is not None:
            out["score"] = self.score
        return out


@dataclass(frozen=True, slots=True)
class Row:
    """An item as a backend returns it: encoded namespace, codec bytes, Unix times."""

    namespace: str
    key: str
    data: bytes
    created_at: float
    updated_at: float
    vectors: bytes | None = None
    """Packed embeddings, when the search asked for them."""
    view: Any = None
    """The value's JSON view, if the backend keeps it decoded (else computed from `data`)."""


@dataclass(frozen=True, slots=True)
class NewRow:
    """What `put` hands a backend: the item's columns, computed once here."""

    namespace: str
    key: str
    data: bytes
    doc: str
    """The value's JSON view as JSON text, for backends that filter natively."""
    view: Any
    vectors: bytes
    now: float
    ttl: float | None
    """Seconds the item lives after its last write (or read, with refresh); None: forever."""

    @property
    def expires_at(self) -> float | None:
        return None if self.ttl is None else self.now + self.ttl

    def columns(self) -> tuple[Any, ...]:
        """The SQL backends' columns: namespace, key, value, doc, vectors (NULL when none),
        created_at, updated_at, ttl, expires_at."""
        vectors = self.vectors or None
        row = self.namespace, self.key, self.data, self.doc, vectors, self.now, self.now
        return (*row, self.ttl, self.expires_at)


def _check_label(label: object, what: str, namespace: object) -> str:
    if not isinstance(label, str) or not label:
        raise StoreError(
            f"{what} {label!r} of namespace {namespace!r} must be a non-empty string",
            namespace=namespace if isinstance(namespace, tuple) else None,
        )
    if any(ord(c) < 0x20 for c in label):
        raise StoreError(
            f"{what} {label!r} of namespace {namespace!r} holds a control character; "
            "labels and keys are printable text",
            namespace=namespace if isinstance(namespace, tuple) else None,
        )
    try:
        label.encode()
    except UnicodeEncodeError:
        raise StoreError(
            f"{what} {label!r} of namespace {namespace!r} is not valid Unicode text",
            namespace=namespace if isinstance(namespace, tuple) else None,
        ) from None
    return label


def encode_namespace(namespace: Sequence[str], *, allow_empty: bool = False) -> str:
    """A namespace (or a prefix of one) as stored; a bad one is a StoreError."""
    if isinstance(namespace, str) or not isinstance(namespace, tuple | list):
        raise StoreError(
            f"A namespace is a tuple of labels like ('users', 'u1'), not {namespace!r}"
        )
    if not namespace and not allow_empty:
        raise StoreError("An item's namespace needs at least one label, like ('memories',)")
    return SEPARATOR.join(_check_label(label, "Label", namespace) for label in namespace)


def decode_namespace(text: str) -> tuple[str, ...]:
    return tuple(text.split(SEPARATOR)) if text else ()


def prefix_range(prefix: str) -> tuple[str, str]:
    """Bounds [low, high) of the stored namespaces strictly below `prefix` (not itself)."""
    return prefix + SEPARATOR, prefix + _AFTER


def _when(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def _check_ttl(ttl: float | None, what: str) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or math.isnan(ttl) or ttl <= 0:
        raise StoreError(
            f"{what} must be a positive number of seconds (math.inf: never expires) or None, "
            f"not {ttl!r}"
        )
    return float(ttl)


class BaseStore(ABC):
    """Long-term memory: put, get, delete, search and list documents by namespace.

    Options every backend takes (keyword-only):

    - `index={"embed": fn, "dims": n, "fields": [...]}` (LangGraph's
      spelling), or `embed=fn` and `fields=[...]`: `search(query=...)` ranks
      by embedding similarity; without an embedding function, by the query's
      words. `fields` are the value's paths to embed or match (default: all).
    - `default_ttl`: seconds an item lives when `put` gives no `ttl` (None:
      forever).
    - `refresh_on_read`: `get` and `search` restart the TTL of what they
      return (per call: `refresh_ttl=`).
    - `sweep_interval`: at most this often (seconds), a `put` deletes the
      expired items too; None leaves it to `sweep()`. Expired items are
      never returned either way.
    """

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        embed: Any = None,
        fields: Sequence[str] | None = None,
        default_ttl: float | None = None,
        refresh_on_read: bool = True,
        sweep_interval: float | None = 300.0,
    ) -> None:
        self.index: Index = make_index(index, embed, fields)
        ttl = _check_ttl(default_ttl, "default_ttl")
        self.default_ttl = None if ttl == math.inf else ttl
        self.refresh_on_read = refresh_on_read
        self.sweep_interval = sweep_interval
        self._last_sweep = time.time()

    # -- the primitives a backend implements ---------------------------------------

    @abstractmethod
    def _put(self, row: NewRow) -> None:
        """Insert or replace an item; a live item keeps its created_at, an expired one not."""

    @abstractmethod
    def _get(self, namespace: str, key: str, now: float, refresh: bool) -> Row | None:
        """The live item (expires_at unset or after `now`); `refresh` restarts its TTL."""

    @abstractmethod
    def _delete(self, namespace: str, key: str) -> None:
        """Remove an item (nothing if there is none)."""

    @abstractmethod
    def _search(
        self,
        prefix: str | None,
        conditions: Sequence[Condition],
        now: float,
        window: tuple[int, int] | None,
        vectors: bool,
    ) -> tuple[list[Row], bool]:
        """Live items at `prefix` or below it (None: all), and whether they are the exact answer.

        A backend may leave conditions to the caller (every row is checked
        again), but must not drop a row that meets them. If it applied every
        condition exactly it may also apply `window` (offset, limit) in the
        order newest `updated_at` first, then namespace, then key, and says
        so by returning True. `vectors`: fill `Row.vectors`.
        """

    @abstractmethod
    def _refresh(self, items: Sequence[tuple[str, str]], now: float) -> None:
        """Restart the TTL of these (namespace, key) items that have one."""

    @abstractmethod
    def _namespaces(self, prefix: str | None, now: float) -> list[str]:
        """The distinct namespaces of live items at `prefix` or below it (None: all)."""

    @abstractmethod
    def _sweep(self, now: float) -> int:
        """Delete the items expired by `now`; how many went."""

    def close(self) -> None:  # noqa: B027 - optional: a memory store holds nothing open
        """Release connections and files."""

    def __enter__(self) -> BaseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API --------------------------------------------------------------------

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        ttl: float | None = None,
        *,
        index: bool | Sequence[str] | None = None,
    ) -> None:
        """Store `value` at (namespace, key), replacing what was there.

        `ttl`: seconds the item lives after this write (and after each read
        that refreshes it); None takes the store's `default_ttl`, `math.inf`
        keeps it forever. `index`: False stores no embeddings for it (a
        query search never finds it), a list of paths embeds those fields
        instead of the store's.
        """
        encoded = encode_namespace(namespace)
        _check_label(key, "Key", namespace)
        if not isinstance(value, dict):
            raise StoreError(
                f"A store value is a dict, not {type(value).__name__} (at {namespace!r}, "
                f"key {key!r}); wrap it, e.g. {{'value': ...}}",
                namespace=tuple(namespace),
                key=key,
            )
        lifetime = _check_ttl(ttl, "ttl")
        if lifetime is None:
            lifetime = self.default_ttl
        elif lifetime == math.inf:
            lifetime = None
        data = serde.dumps(value)
        view = json_view(value)
        vectors = b""
        if self.index.has_embeddings and index is not False:
            fields = None if index is None or index is True else list(index)
            vectors = self.index.pack(self.index.texts(view, fields))
        now = time.time()
        doc = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
        self._put(NewRow(encoded, key, data, doc, view, vectors, now, lifetime))
        if self.sweep_interval is not None and now - self._last_sweep >= self.sweep_interval:
            self._last_sweep = now
            self._sweep(now)

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item at (namespace, key), or None if there is none or it expired."""
        encoded = encode_namespace(namespace)
        _check_label(key, "Key", namespace)
        refresh = self.refresh_on_read if refresh_ttl is None else refresh_ttl
        row = self._get(encoded, key, time.time(), refresh)
        return None if row is None else self._item(row, serde.loads(row.data))

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Remove the item at (namespace, key); nothing happens if there is none."""
        encoded = encode_namespace(namespace)
        _check_label(key, "Key", namespace)
        self._delete(encoded, key)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        filter: Mapping[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        *,
        refresh_ttl: bool | None = None,
    ) -> list[Item]:
        """Items at `namespace_prefix` or below it that meet `filter`, best first.

        Without `query`: the most recently written first. With one: ranked
        by similarity to it (see the class docs), each item with its
        `score`. `filter` is described in `flowgraph.store._filter`:
        `{"kind": "fact", "stars": {"$gte": 4}}`.
        """
        prefix = encode_namespace(namespace_prefix, allow_empty=True) or None
        conditions = parse_filter(filter)
        for name, number in (("limit", limit), ("offset", offset)):
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise StoreError(f"search {name} must be an int >= 0, not {number!r}")
        if query is not None and not isinstance(query, str):
            raise StoreError(f"search query must be a string, not {type(query).__name__}")
        now = time.time()
        embedded = query is not None and self.index.has_embeddings
        window = None if query is not None else (offset, limit)
        rows, windowed = self._search(prefix, conditions, now, window, embedded)
        score_of = None if query is None else self._scorer(query, embedded)
        found: list[tuple[float | None, Row, dict[str, Any] | None]] = []
        for row in rows:
            value = None  # decoded here only when the backend keeps no JSON view
            if row.view is not None:
                view = row.view
            else:
                value = serde.loads(row.data)
                view = json_view(value)
            if conditions and not matches(view, conditions):
                continue
            score = None
            if score_of is not None:
                score = score_of(row, view)
                if score is None:
                    continue
            found.append((score, row, value))
        found.sort(key=lambda hit: (-hit[1].updated_at, hit[1].namespace, hit[1].key))
        if query is not None:
            found.sort(key=lambda hit: -(hit[0] or 0.0))  # stable: ties stay newest first
        if not windowed:
            found = found[offset : offset + limit]
        refresh = self.refresh_on_read if refresh_ttl is None else refresh_ttl
        if refresh and found:
            self._refresh([(row.namespace, row.key) for _, row, _ in found], now)
        return [
            self._item(row, serde.loads(row.data) if value is None else value, score)
            for score, row, value in found
        ]

    def _scorer(self, query: str, embedded: bool) -> Callable[[Row, Any], float | None]:
        """Scores an item (its row and JSON view) for `query`; None leaves it out."""
        if embedded:
            vector = self.index.query_vector(query)
            return lambda row, view: similarity(vector, row.vectors)
        terms = sorted(set(words(query)))
        if not terms:
            return lambda row, view: 0.0

        def by_words(row: Row, view: Any) -> float | None:
            score = word_score(terms, self.index.word_set(view))
            return score if score > 0 else None

        return by_words

    def list_namespaces(
        self,
        prefix: tuple[str, ...] | None = None,
        *,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces holding live items, sorted; `"*"` in `prefix`/`suffix` is any label.

        `max_depth` cuts longer namespaces to their first labels (duplicates
        merged): `max_depth=2` lists ("users", "u1") for ("users", "u1",
        "memories").
        """
        for given in (prefix, suffix):
            if given is not None:
                encode_namespace(given, allow_empty=True)  # checks the labels
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 1):
            raise StoreError(f"max_depth must be an int >= 1 or None, not {max_depth!r}")
        literal: list[str] = []
        for label in prefix or ():
            if label == "*":
                break
            literal.append(label)
        texts = self._namespaces(SEPARATOR.join(literal) or None, time.time())
        out = set()
        for text in texts:
            namespace = decode_namespace(text)
            if prefix and not _fits(namespace[: len(prefix)], prefix):
                continue
            if suffix and (
                len(namespace) < len(suffix) or not _fits(namespace[-len(suffix) :], suffix)
            ):
                continue
            out.add(namespace if max_depth is None else namespace[:max_depth])
        return sorted(out)[offset : offset + limit]

    def sweep(self) -> int:
        """Delete the expired items now; returns how many went (they were invisible already)."""
        now = time.time()
        self._last_sweep = now
        return self._sweep(now)

    def _item(self, row: Row, value: dict[str, Any], score: float | None = None) -> Item:
        return Item(
            decode_namespace(row.namespace),
            row.key,
            value,
            _when(row.created_at),
            _when(row.updated_at),
            score,
        )

    # -- async twins: the same logic, off the event loop ----------------------------

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        ttl: float | None = None,
        *,
        index: bool | Sequence[str] | None = None,
    ) -> None:
        await asyncio.to_thread(self.put, namespace, key, value, ttl, index=index)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        await asyncio.to_thread(self.delete, namespace, key)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        filter: Mapping[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        *,
        refresh_ttl: bool | None = None,
    ) -> list[Item]:
        return await asyncio.to_thread(
            self.search, namespace_prefix, filter, query, limit, offset, refresh_ttl=refresh_ttl
        )

    async def alist_namespaces(
        self,
        prefix: tuple[str, ...] | None = None,
        *,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        return await asyncio.to_thread(
            self.list_namespaces,
            prefix,
            suffix=suffix,
            max_depth=max_depth,
            limit=limit,
            offset=offset,
        )

    async def asweep(self) -> int:
        return await asyncio.to_thread(self.sweep)


def _fits(labels: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(labels) == len(pattern) and all(
        want == "*" or want == have for have, want in zip(labels, pattern, strict=True)
    )
