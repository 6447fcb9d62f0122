"""What every SQLite-backed class shares: a connection per thread, WAL set up without races.

`SQLiteCheckpointer`, `SQLiteStore` and the server's SQLite documents keep
their tables in the same kind of file, often the same file. Each thread gets
its own connection (sqlite3 connections must not be used by two threads at
once), `close()` closes them all from any thread, and a forked child opens
connections of its own: SQLite forbids carrying one across a fork, and
closing the parent's in the child would release the parent's locks.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable

__all__ = ["ThreadConnections", "setup_pragma", "setup_wal"]


class ThreadConnections:
    """One connection per thread to `path`, each prepared by `setup` (default: `setup_wal`)."""

    def __init__(
        self,
        path: str,
        timeout: float,
        setup: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self.path = path
        self.timeout = timeout
        self.setup = setup if setup is not None else self._setup_wal
        self._forget()
        _live.add(self)

    def _forget(self) -> None:
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _setup_wal(self, db: sqlite3.Connection) -> None:
        setup_wal(db, self.timeout)

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened (and set up) on its first use."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            self.setup(db)
            self._local.db = db
            with self._lock:
                self._opened.append(db)
        return db

    def close(self) -> None:
        """Close every connection, whichever thread opened it; a later `get` opens anew."""
        with self._lock:
            for db in self._opened:
                db.close()
            self._opened.clear()
        self._local = threading.local()


_live: weakref.WeakSet[ThreadConnections] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for connections in list(_live):
        connections._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def setup_pragma(db: sqlite3.Connection, statement: str, timeout: float) -> None:
    """Run a connection's setup pragma, waiting (up to `timeout` s) while another holds the file.

    Switching a file to WAL takes a lock that SQLite's busy timeout does not
    wait for when another process is creating the same file or recovering its
    WAL at that moment: processes opening a fresh file together would
    otherwise fail at once with "database is locked".
    """
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            db.execute(statement).fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def setup_wal(db: sqlite3.Connection, timeout: float) -> None:
    """WAL with synchronous=NORMAL: readers never wait for the writer, commits do not fsync."""
    setup_pragma(db, "PRAGMA journal_mode=WAL", timeout)
    db.execute("PRAGMA synchronous=NORMAL")
