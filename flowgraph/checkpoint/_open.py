"""One function that turns a store URL into a checkpointer, for the CLI, workers and users.

`FLOWGRAPH_DB`, `--db` and a worker's store setting all take the same
strings, so they are read in one place: `parse_location` (also used by
`flowgraph.store.open_store`, so a long-term store takes the same URLs).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

__all__ = ["SERVER_SCHEMES", "Location", "import_backend", "open_checkpointer", "parse_location"]

Backend = Literal["sqlite", "postgres", "redis"]

_SCHEME_BACKENDS: dict[str, Backend] = {
    # URL scheme -> the backend it names; the pip extra that brings its driver has its name
    "postgresql": "postgres",
    "postgres": "postgres",
    "redis": "redis",
    "rediss": "redis",
    "unix": "redis",
}
_CHECKPOINTERS = {
    "postgres": ("flowgraph.checkpoint.postgres", "PostgresCheckpointer"),
    "redis": ("flowgraph.checkpoint.redis", "RedisCheckpointer"),
}
SERVER_SCHEMES = {
    # URL scheme -> (module, class, the pip extra that brings its driver)
    scheme: (*_CHECKPOINTERS[backend], backend)
    for scheme, backend in _SCHEME_BACKENDS.items()
}


@dataclass(frozen=True, slots=True)
class Location:
    """Where a store lives: the backend a URL or path names, and what to open it with."""

    backend: Backend
    target: str
    """The SQLite file's path, or the server URL exactly as given (the driver reads it)."""
    scheme: str
    """The URL's scheme as given, lower-cased ("" for a plain path)."""


def parse_location(location: str | Path, *, what: str = "checkpointer") -> Location:
    """The backend a location names (`what` names the caller's kind of store in errors).

    `postgresql://…` (or `postgres://…`) is PostgreSQL, `redis://…`,
    `rediss://…` or `unix://…` Redis; `sqlite:///relative.db`,
    `sqlite:////absolute.db` (SQLAlchemy's spelling) or a plain path a
    SQLite file. An unknown scheme is a ValueError listing the known ones.
    """
    text = str(location)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if not scheme:
        return Location("sqlite", text, scheme)
    if scheme == "sqlite":
        rest = text.split("://", 1)[1]
        return Location("sqlite", rest[1:] if rest.startswith("/") else rest, scheme)
    backend = _SCHEME_BACKENDS.get(scheme)
    if backend is None:
        raise ValueError(
            f"No {what} for {scheme}:// ({text!r}); use a SQLite file path, "
            "sqlite:///file.db, postgresql://… or redis://…"
        )
    return Location(backend, text, scheme)


def import_backend(module_name: str, class_name: str, location: Location) -> Any:
    """The class `class_name` of a server backend's module, imported now.

    Server backends are imported only when named, so their drivers stay
    optional extras; a missing one is an ImportError naming the extra.
    """
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"{class_name} for {location.scheme}:// URLs needs its driver: "
            f"pip install 'flowgraph[{location.backend}]' ({exc})"
        ) from exc
    return getattr(module, class_name)


def open_checkpointer(location: str | Path) -> BaseCheckpointer:
    """The checkpointer a location names (see `parse_location` for the URLs).

    The server backends are imported only when named, so their drivers stay
    optional extras; a missing one is an ImportError naming the extra to
    install, an unknown scheme a ValueError listing the known ones.
    """
    where = parse_location(location)
    if where.backend == "sqlite":
        return SQLiteCheckpointer(Path(where.target))
    cls = import_backend(*_CHECKPOINTERS[where.backend], where)
    store: BaseCheckpointer = cls(where.target)
    return store
