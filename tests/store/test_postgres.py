"""PostgresStore beyond the conformance suite: schema versions, one schema, dead connections."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from flowgraph.checkpoint.postgres import PostgresCheckpointer  # noqa: E402
from flowgraph.errors import DeserializationError  # noqa: E402
from flowgraph.store.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402

URL = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="set FLOWGRAPH_TEST_POSTGRES_URL to run these")


def sql(statement: str, *args: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(URL, autocommit=True) as db:
        cursor = db.execute(statement, args)
        return cursor.fetchall() if cursor.description else []


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"fgstore_{uuid.uuid4().hex[:12]}"
    yield name
    sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def test_the_store_and_the_checkpointer_share_a_schema(schema: str) -> None:
    with PostgresCheckpointer(URL, schema=schema) as checkpointer:
        checkpointer.setup()
    store = PostgresStore(URL, schema=schema)
    store.put(("a",), "k", {"v": 1})
    store.setup()  # again: nothing to do
    tables = {
        row[0] for row in sql("SELECT tablename FROM pg_tables WHERE schemaname = %s", schema)
    }
    assert {"flowgraph_store", "flowgraph_store_schema_version", "flowgraph_threads"} <= tables
    assert sql(f"SELECT version FROM {schema}.flowgraph_store_schema_version") == [
        (SCHEMA_VERSION,)
    ]
    assert sql(f"SELECT doc FROM {schema}.flowgraph_store") == [({"v": 1},)]
    store.close()


def test_a_schema_from_a_newer_flowgraph_is_refused(schema: str) -> None:
    PostgresStore(URL, schema=schema).setup()
    sql(f"INSERT INTO {schema}.flowgraph_store_schema_version (version) VALUES (99)")
    with pytest.raises(DeserializationError, match=r"newer flowgraph .schema version 99"):
        PostgresStore(URL, schema=schema).get(("a",), "k")


def test_a_dead_connection_costs_a_retry_not_a_failure(schema: str) -> None:
    store = PostgresStore(URL, schema=schema, max_size=2)
    store.put(("a",), "k", {"v": 1})
    killed = sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = '' AND pid <> pg_backend_pid() AND query LIKE %s",
        f"%{schema}%",
    )
    assert killed and all(ok for (ok,) in killed)
    item = store.get(("a",), "k")
    assert item is not None and item.value == {"v": 1}
    store.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="not a plain identifier"):
        PostgresStore(URL, schema="a-b")
    with pytest.raises(ValueError, match="Pool sizes"):
        PostgresStore(URL, min_size=3, max_size=2)
