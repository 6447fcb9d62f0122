"""Settings for the whole suite: a PostgreSQL database of this run's own.

The test servers are shared by every checkout and every run on the machine.
Tests keep apart by thread prefixes and schemas, but some stores use a
fixed schema ("public" for a bare URL, "readme" in the README's snippet),
and a run of a newer flowgraph migrates those tables to a schema version an
older checkout then refuses. Each test process (each xdist worker too)
therefore creates a database of its own on the server
$FLOWGRAPH_TEST_POSTGRES_URL names, points the variable at it for the
tests and the processes they start, and drops it at the end.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

_VARIABLE = "FLOWGRAPH_TEST_POSTGRES_URL"
_created: list[tuple[str, str]] = []
"""(server URL, database name) of the database this process created."""


def pytest_configure(config: pytest.Config) -> None:
    url = os.environ.get(_VARIABLE)
    if not url:
        return
    try:
        import psycopg
    except ImportError:
        return  # the PostgreSQL tests skip, saying psycopg is missing
    name = f"fg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    _created.append((url, name))
    os.environ[_VARIABLE] = urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def pytest_unconfigure(config: pytest.Config) -> None:
    while _created:
        url, name = _created.pop()
        os.environ[_VARIABLE] = url
        import psycopg

        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
