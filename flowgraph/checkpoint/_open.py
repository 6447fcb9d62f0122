"""One function that turns a store URL into a checkpointer, for the CLI, workers and users.

`FLOWGRAPH_DB`, `--db` and a worker's store setting all take the same
strings, so they are read in one place.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

__all__ = ["SERVER_SCHEMES", "open_checkpointer"]

SERVER_SCHEMES = {
    # URL scheme -> (module, class, the pip extra that brings its driver)
    "postgresql": ("flowgraph.checkpoint.postgres", "PostgresCheckpointer", "postgres"),
    "postgres": ("flowgraph.checkpoint.postgres", "PostgresCheckpointer", "postgres"),
    "redis": ("flowgraph.checkpoint.redis", "RedisCheckpointer", "redis"),
    "rediss": ("flowgraph.checkpoint.redis", "RedisCheckpointer", "redis"),
    "unix": ("flowgraph.checkpoint.redis", "RedisCheckpointer", "redis"),
}


def open_checkpointer(location: str | Path) -> BaseCheckpointer:
    """The checkpointer a location names.

    `postgresql://…` (or `postgres://…`) opens PostgreSQL, `redis://…`,
    `rediss://…` or `unix://…` Redis; `sqlite:///relative.db`,
    `sqlite:////absolute.db` (SQLAlchemy's spelling) or a plain path a
    SQLite file. The server backends are imported only when named, so their
    drivers stay optional extras; a missing one is an ImportError naming the
    extra to install, an unknown scheme a ValueError listing the known ones.
    """
    text = str(location)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if not scheme:
        return SQLiteCheckpointer(Path(text))
    if scheme == "sqlite":
        rest = text.split("://", 1)[1]
        return SQLiteCheckpointer(Path(rest[1:] if rest.startswith("/") else rest))
    if scheme not in SERVER_SCHEMES:
        raise ValueError(
            f"No checkpointer for {scheme}:// ({text!r}); use a SQLite file path, "
            "sqlite:///file.db, postgresql://… or redis://…"
        )
    module_name, class_name, extra = SERVER_SCHEMES[scheme]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"{class_name} for {scheme}:// URLs needs its driver: "
            f"pip install 'flowgraph[{extra}]' ({exc})"
        ) from exc
    store: BaseCheckpointer = getattr(module, class_name)(text)
    return store
