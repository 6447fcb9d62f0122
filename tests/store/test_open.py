"""`open_store`: the URLs `open_checkpointer` takes; the store beside the checkpoints."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from flowgraph import END, START, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint import SQLiteCheckpointer, open_checkpointer
from flowgraph.errors import DeserializationError
from flowgraph.store import SQLiteStore, open_store


def test_a_path_or_sqlite_url_opens_a_sqlite_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for location, file in [
        (tmp_path / "a.db", tmp_path / "a.db"),
        (str(tmp_path / "b.db"), tmp_path / "b.db"),
        (f"sqlite:///{tmp_path / 'c.db'}", tmp_path / "c.db"),
        ("sqlite:///relative.db", tmp_path / "relative.db"),
    ]:
        store = open_store(location, default_ttl=60)
        assert isinstance(store, SQLiteStore) and store.default_ttl == 60
        store.put(("a",), "k", {"v": 1})
        store.close()
        assert file.exists()


def test_server_urls_open_server_stores() -> None:
    postgres = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL")
    redis_url = os.environ.get("FLOWGRAPH_TEST_REDIS_URL")
    if not postgres or not redis_url:
        pytest.skip("set FLOWGRAPH_TEST_POSTGRES_URL and FLOWGRAPH_TEST_REDIS_URL to run this")
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("redis", reason="the redis extra is not installed")
    from flowgraph.store.postgres import PostgresStore
    from flowgraph.store.redis import RedisStore

    schema = f"fgstore_{uuid.uuid4().hex[:12]}"
    prefix = f"fgstoretest-{uuid.uuid4().hex[:12]}:"
    pg = open_store(postgres.replace("postgresql://", "postgres://", 1), schema=schema)
    rd = open_store(redis_url, prefix=prefix)
    try:
        assert isinstance(pg, PostgresStore) and pg.schema == schema
        assert isinstance(rd, RedisStore) and rd.prefix == prefix
        for store in (pg, rd):
            store.put(("a",), "k", {"v": 1})
            item = store.get(("a",), "k")
            assert item is not None and item.value == {"v": 1}
    finally:
        pg.close()
        rd.delete(("a",), "k")
        rd.close()
        import psycopg

        with psycopg.connect(postgres, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_an_unknown_scheme_says_what_is_known() -> None:
    with pytest.raises(ValueError, match=r"No store for memory:// .*postgresql://… or redis://…"):
        open_store("memory://")
    with pytest.raises(ValueError, match="No checkpointer for memory://"):
        open_checkpointer("memory://")


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [("redis", "redis://x", "redis"), ("psycopg", "postgresql://x", "postgres")],
)
def test_a_missing_driver_names_the_pip_extra(module: str, url: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from flowgraph.store import open_store\n"
        f"open_store({url!r})\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert f"pip install 'flowgraph[{extra}]'" in out.stderr


def test_the_store_and_the_checkpoints_share_one_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [("ai", state.messages[-1].text)]})
    builder.add_edge(START, "echo")
    builder.add_edge("echo", END)
    store = open_store(path)
    store.put(("users", "u1"), "name", {"name": "Ada"})
    with open_checkpointer(path) as checkpointer:
        app = builder.compile(checkpointer=checkpointer)
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t1")
    store.put(("users", "u1"), "lang", {"lang": "fr"})
    with SQLiteCheckpointer(path) as again:
        assert again.threads() == ["t1"]
    reopened = SQLiteStore(path)
    assert sorted(item.key for item in reopened.search(("users",))) == ["lang", "name"]
    store.close()
    reopened.close()


def test_a_store_written_by_a_newer_flowgraph_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO flowgraph_store_meta (version) VALUES (99)")
    with pytest.raises(DeserializationError, match=r"newer flowgraph .*store schema 99"):
        SQLiteStore(path)
