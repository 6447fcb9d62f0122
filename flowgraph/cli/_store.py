"""Which checkpoint store a command uses, and which app each thread was run with.

`--db` (or `FLOWGRAPH_DB`) is a SQLite file path (default `flowgraph.db` in
the working directory) or a `postgresql://` / `redis://` URL. The server
backends are optional extras, imported only when a URL asks for them.

`run` records the app spec of each thread it runs (SQLite stores: a small
side table `flowgraph_cli_apps` in the same file), so `resume` and `fork`
find the app without being told; with a server store, pass `--app`.

The same location holds the long-term store (`flowgraph.store.open_store`
reads the same strings): an app compiled with `store=...` runs with the
one `--db` names, opened when such an app first runs.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flowgraph.checkpoint import open_checkpointer
from flowgraph.cli._errors import CliError

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph import CompiledGraph
    from flowgraph.store import BaseStore

__all__ = ["DEFAULT_DB", "Store", "open_store"]

DEFAULT_DB = "flowgraph.db"
_APPS = """CREATE TABLE IF NOT EXISTS flowgraph_cli_apps (
    thread_id TEXT PRIMARY KEY, spec TEXT NOT NULL, updated_at REAL NOT NULL)"""


@dataclass(slots=True)
class Store:
    """An open checkpoint store and where it came from."""

    checkpointer: BaseCheckpointer
    location: str
    """What the user gave (path or URL), for messages and resume hints."""
    path: Path | None
    """The SQLite file, or None for a server store."""
    given: bool
    """True when --db or FLOWGRAPH_DB chose it (a resume hint repeats it then)."""
    _long_term: BaseStore | None = field(default=None, repr=False)

    def bind(self, app: CompiledGraph, *, runs: bool = True) -> CompiledGraph:
        """`app` on this location: its checkpoints, and (an app compiled with a long-term
        store, about to run) the long-term store here too."""
        app = app.with_checkpointer(self.checkpointer)
        if runs and app.store is not None:
            app = app.with_store(self.long_term())
        return app

    def long_term(self) -> BaseStore:
        """The long-term store at the same location (opened on first use, closed with this)."""
        if self._long_term is None:
            from flowgraph.store import open_store as open_long_term_store

            try:
                self._long_term = open_long_term_store(self.location)
            except (ValueError, ImportError) as exc:
                raise CliError(f"--db {self.location!r}: {exc}") from exc
        return self._long_term

    def record_app(self, thread_id: str, spec: str) -> None:
        """Remember the app a thread runs with (SQLite stores only)."""
        if self.path is None:
            return
        with self._apps() as db:
            db.execute(
                "INSERT OR REPLACE INTO flowgraph_cli_apps VALUES (?, ?, ?)",
                (thread_id, spec, time.time()),
            )

    def recorded_app(self, thread_id: str) -> str | None:
        if self.path is None:
            return None
        with self._apps() as db:
            row = db.execute(
                "SELECT spec FROM flowgraph_cli_apps WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def forget_app(self, thread_id: str) -> None:
        if self.path is None:
            return
        with self._apps() as db:
            db.execute("DELETE FROM flowgraph_cli_apps WHERE thread_id = ?", (thread_id,))

    @contextmanager
    def _apps(self) -> Iterator[sqlite3.Connection]:
        """One transaction on the side table, on a connection of its own."""
        assert self.path is not None
        with closing(sqlite3.connect(self.path, timeout=30.0)) as db, db:
            db.execute(_APPS)
            yield db

    def close(self) -> None:
        self.checkpointer.close()
        if self._long_term is not None:
            self._long_term.close()


def open_store(db: str | None, *, must_exist: bool) -> Store:
    """The store `--db`/`FLOWGRAPH_DB`/the default names; with `must_exist`, never create one."""
    given = db is not None or bool(os.environ.get("FLOWGRAPH_DB"))
    location = db or os.environ.get("FLOWGRAPH_DB") or DEFAULT_DB
    if "://" in location:
        try:
            checkpointer = open_checkpointer(location)
        except (ValueError, ImportError) as exc:
            raise CliError(f"--db {location!r}: {exc}") from exc
        return Store(checkpointer, location, None, given)
    path = Path(location)
    if must_exist and not path.is_file():
        hint = "pass --db PATH or set FLOWGRAPH_DB" if not given else "check the path"
        raise CliError(f"No checkpoint store at {location} ({hint}; `flowgraph run` creates one)")
    return Store(open_checkpointer(path), location, path, given)
