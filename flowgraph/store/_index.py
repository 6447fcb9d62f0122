"""What `search(query=...)` ranks by: an embedding function if the store has one, else words.

With an embedding function, `put` embeds the text at each configured field
of the value (default: the whole value as JSON), one vector per text, and
keeps them, unit length, packed as float32 beside the item. A query is
embedded the same way, and an item scores the best cosine similarity among
its vectors. Without one, an item scores the share of the query's words it
contains (a query word matches a word of the item it starts, case-folded),
and items sharing none are not returned.

The similarity is computed in Python over the candidates the namespace
prefix and filter leave, which suits memories per user or per agent (tens
of thousands of items); it needs no vector extension on any backend.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import math
import operator
import re
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypedDict

from flowgraph.errors import StoreError
from flowgraph.store._filter import MISSING, lookup

__all__ = ["Embed", "Index", "IndexConfig", "make_index", "word_score", "words"]

Embed = Callable[[list[str]], Any]
"""texts -> one vector (a sequence of floats) per text; may be async."""


class IndexConfig(TypedDict, total=False):
    """LangGraph's spelling of a store's index: `{"embed": fn, "dims": 1536, "fields": [...]}`."""

    embed: Any
    """A function of a list of texts returning their vectors (sync or async), or an
    object with `embed_documents` / `embed_query` (a LangChain `Embeddings`)."""
    dims: int
    """The vectors' length; a vector of another length is an error."""
    fields: list[str]
    """Paths of the value to embed or match words in: `"$"` (the whole value, the
    default), `"text"`, `"profile.bio"`; a list at a path gives one text per item."""


_WORD = re.compile(r"\w+")
_HEADER = struct.Struct("<I")


def words(text: str) -> list[str]:
    """The case-folded words of a text."""
    return _WORD.findall(text.casefold())


def _await(result: Any) -> Any:
    """The value of an awaitable, from sync code (a loop of its own, in a thread if need be)."""
    if not inspect.isawaitable(result):
        return result

    async def wait() -> Any:
        return await result

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(1, "flowgraph-embed") as pool:
        return pool.submit(asyncio.run, wait()).result()


def _paths(fields: Iterable[str] | None) -> tuple[tuple[str, ...], ...]:
    out = []
    for field in fields or ("$",):
        if not isinstance(field, str):
            raise StoreError(f"Index field {field!r} is not a path like 'text' or 'profile.bio'")
        path = field.removeprefix("$").removeprefix(".").replace("[*]", "")
        out.append(tuple(part for part in path.split(".") if part))
    return tuple(out)


def _leaves(view: Any, out: list[str]) -> None:
    if isinstance(view, str):
        out.append(view)
    elif isinstance(view, dict):
        for item in view.values():
            _leaves(item, out)
    elif isinstance(view, list):
        for item in view:
            _leaves(item, out)
    elif view is not None and view is not MISSING:
        out.append(str(view))


def _as_text(view: Any) -> str:
    return view if isinstance(view, str) else json.dumps(view, ensure_ascii=False)


class Index:
    """The fields a store searches in, and its embedding function if it has one."""

    paths: tuple[tuple[str, ...], ...]

    def __init__(
        self, embed: Any = None, dims: int | None = None, fields: Iterable[str] | None = None
    ) -> None:
        if dims is not None and (not isinstance(dims, int) or dims < 1):
            raise StoreError(f"Index dims must be a positive int, not {dims!r}")
        if embed is not None and not callable(embed) and not hasattr(embed, "embed_documents"):
            raise StoreError(
                f"embed must be a function of a list of texts returning their vectors, or an "
                f"object with embed_documents/embed_query, not {type(embed).__name__}"
            )
        self.embed = embed
        self.dims = dims
        self.paths = _paths(fields)

    @property
    def has_embeddings(self) -> bool:
        return self.embed is not None

    # -- texts ------------------------------------------------------------------------

    def texts(self, view: Any, fields: Iterable[str] | None = None) -> list[str]:
        """The texts to embed from a value's JSON view: one per field, or per list item."""
        out: list[str] = []
        for path in self.paths if fields is None else _paths(fields):
            found = lookup(view, path)
            if found is MISSING:
                continue
            if isinstance(found, list):
                out.extend(_as_text(item) for item in found)
            else:
                out.append(_as_text(found))
        return out

    def word_set(self, view: Any) -> set[str]:
        """The words of the string (and number) values at the index's fields."""
        leaves: list[str] = []
        for path in self.paths:
            _leaves(lookup(view, path), leaves)
        return set(words(" ".join(leaves)))

    # -- vectors ------------------------------------------------------------------------

    def _vectors(self, texts: list[str], *, query: bool) -> list[list[float]]:
        embed = self.embed
        if hasattr(embed, "embed_documents"):
            if query and hasattr(embed, "embed_query"):
                got: Any = [_await(embed.embed_query(texts[0]))]
            else:
                got = _await(embed.embed_documents(texts))
        else:
            got = _await(embed(texts))
        try:
            vectors = [[float(x) for x in vector] for vector in got]
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"The embedding function returned {type(got).__name__}, not one list of "
                f"numbers per text ({exc})"
            ) from exc
        if len(vectors) != len(texts):
            raise StoreError(
                f"The embedding function returned {len(vectors)} vectors for {len(texts)} texts"
            )
        for vector in vectors:
            if self.dims is not None and len(vector) != self.dims:
                raise StoreError(
                    f"The embedding function returned a vector of {len(vector)} numbers; the "
                    f"store's index has dims={self.dims}"
                )
        return [_unit(vector) for vector in vectors]

    def pack(self, texts: list[str]) -> bytes:
        """The vectors of `texts`, unit length, as stored: b"" when there is nothing to embed."""
        if not texts:
            return b""
        vectors = self._vectors(texts, query=False)
        dims = len(vectors[0])
        if any(len(vector) != dims for vector in vectors):
            raise StoreError("The embedding function returned vectors of different lengths")
        flat = array("f", (x for vector in vectors for x in vector))
        if sys.byteorder == "big":
            flat.byteswap()
        return _HEADER.pack(dims) + flat.tobytes()

    def query_vector(self, text: str) -> list[float]:
        return self._vectors([text], query=True)[0]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if not math.isfinite(norm):
        raise StoreError("The embedding function returned a vector with NaN or infinite numbers")
    return vector if norm == 0 else [x / norm for x in vector]


def unpack(data: bytes) -> list[Sequence[float]]:
    """The vectors `Index.pack` stored."""
    if len(data) < _HEADER.size:
        return []
    (dims,) = _HEADER.unpack_from(data)
    flat = array("f")
    flat.frombytes(data[_HEADER.size :])
    if sys.byteorder == "big":
        flat.byteswap()
    return [flat[i : i + dims] for i in range(0, len(flat), dims)] if dims else []


def similarity(query: Sequence[float], data: bytes | None) -> float | None:
    """The best cosine similarity of the query with an item's vectors (None: no vectors)."""
    if not data:
        return None
    best = None
    for vector in unpack(data):
        if len(vector) != len(query):
            raise StoreError(
                f"A stored item has vectors of {len(vector)} numbers and the query {len(query)}; "
                "the embedding function changed: put the items again to re-embed them"
            )
        score = sum(map(operator.mul, query, vector))
        best = score if best is None or score > best else best
    return best


def word_score(terms: Sequence[str], item_words: set[str]) -> float:
    """The share of the query's words that start some word of the item."""
    if not terms:
        return 0.0
    hits = sum(1 for term in terms if any(word.startswith(term) for word in item_words))
    return hits / len(terms)


def make_index(index: IndexConfig | None, embed: Any, fields: Iterable[str] | None) -> Index:
    """The store's index from either spelling: `index={...}` or `embed=`/`fields=`."""
    if index is None:
        return Index(embed, None, fields)
    if not isinstance(index, dict):
        raise StoreError(f"index must be a dict like {{'embed': fn, 'dims': 1536}}, not {index!r}")
    unknown = set(index) - {"embed", "dims", "fields"}
    if unknown:
        raise StoreError(f"index has unknown keys {sorted(unknown)}; it takes embed, dims, fields")
    if embed is not None and index.get("embed") is not None:
        raise StoreError("Give the embedding function once: embed=... or index={'embed': ...}")
    return Index(
        embed if embed is not None else index.get("embed"),
        index.get("dims"),
        fields if fields is not None else index.get("fields"),
    )
