"""What is PostgreSQL-specific about PostgresCheckpointer (the protocol is in test_conformance).

Migrations, schemas, several processes migrating at once, fork safety,
surviving a killed connection, the pool's bounds, and a step being one
transaction. Every test works in a schema of its own, dropped afterwards,
and names its connections (`application_name`) so it can find and kill
exactly them on the shared server.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from flowgraph import HumanMessage  # noqa: E402
from flowgraph.checkpoint.base import CheckpointRecord, new_checkpoint_id  # noqa: E402
from flowgraph.checkpoint.postgres import SCHEMA_VERSION, PostgresCheckpointer  # noqa: E402
from flowgraph.errors import ConcurrentRunError, DeserializationError  # noqa: E402

from ._apps import chat_app  # noqa: E402

URL = os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(
    not URL, reason="set FLOWGRAPH_TEST_POSTGRES_URL to a test server URL (.ci/services.sh)"
)


def sql(query: str, *args: object) -> list[tuple[Any, ...]]:
    """Run one statement on a fresh connection of its own; its rows, if any."""
    with psycopg.connect(URL, autocommit=True) as db:
        cursor = db.execute(query, args)
        return cursor.fetchall() if cursor.description else []


def named(app_name: str) -> str:
    """The server URL with an application_name, so the test can find its connections."""
    return URL + ("&" if "?" in URL else "?") + f"application_name={app_name}"


def connections(app_name: str) -> list[int]:
    """Server pids of the connections open under `app_name`."""
    rows = sql("SELECT pid FROM pg_stat_activity WHERE application_name = %s", app_name)
    return sorted(int(pid) for (pid,) in rows)


def closed_on_the_server(app_name: str, timeout: float = 30.0) -> bool:
    """Whether every connection under `app_name` is gone from the server.

    A backend leaves pg_stat_activity a moment after its client hangs up
    (asynchronously, later on a loaded machine), so this waits for it.
    """
    deadline = time.monotonic() + timeout
    while connections(app_name):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill(app_name: str) -> int:
    rows = sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        app_name,
    )
    return len(rows)


def versions(schema: str) -> list[int]:
    return [v for (v,) in sql(f"SELECT version FROM {schema}.flowgraph_schema_version ORDER BY 1")]


def record(
    thread_id: str, parent: CheckpointRecord | None = None, *, snapshot: bool = False
) -> CheckpointRecord:
    checkpoint_id = new_checkpoint_id()
    return CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=None if parent is None else parent.checkpoint_id,
        step=0 if parent is None else parent.step + 1,
        created_at=1_700_000_000.5,
        base_id=checkpoint_id if parent is None or snapshot else parent.base_id,
        payload=b"payload \x00\xff",
    )


def refuse_message(schema: str, key: str) -> None:
    """Make the server reject inserting the message `key`, as a full disk or a constraint
    would: the statement fails after its other writes ran, so none of them may stay."""
    sql(
        f"CREATE FUNCTION {schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF NEW.key = '{key}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$"
    )
    sql(
        f"CREATE TRIGGER refuse BEFORE INSERT ON {schema}.flowgraph_messages "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.refuse()"
    )


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"fg_pgtest_{uuid.uuid4().hex[:12]}"
    yield name
    sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def app_name() -> str:
    return f"fgtest-{uuid.uuid4().hex[:12]}"


# -- migrations -------------------------------------------------------------------------------


def test_first_use_creates_the_schema_and_tables(schema: str) -> None:
    with PostgresCheckpointer(URL, schema=schema) as store:
        assert sql("SELECT 1 FROM pg_namespace WHERE nspname = %s", schema) == []  # lazy
        assert store.head("t") is None
        tables = sql("SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", schema)
        assert [t for (t,) in tables] == [
            "flowgraph_checkpoints",
            "flowgraph_leases",
            "flowgraph_messages",
            "flowgraph_pending",
            "flowgraph_schema_version",
            "flowgraph_threads",
        ]
        assert versions(schema) == list(range(1, SCHEMA_VERSION + 1))


def test_setup_again_is_a_no_op_and_keeps_the_data(schema: str) -> None:
    with PostgresCheckpointer(URL, schema=schema) as store:
        store.setup()
        applied = sql(f"SELECT version, applied_at FROM {schema}.flowgraph_schema_version")
        first = record("t")
        store.put(first, expected_head=None, messages={"m": b"kept"})
        store.setup()
        with PostgresCheckpointer(URL, schema=schema) as again:
            again.setup()
            assert again.get("t", first.checkpoint_id) == first
            assert again.messages("t", ["m"]) == {"m": b"kept"}
        assert sql(f"SELECT version, applied_at FROM {schema}.flowgraph_schema_version") == applied


def test_an_older_schema_is_upgraded_in_place(schema: str) -> None:
    # a store at version 1, as the first release left it, with a thread in it
    old = PostgresCheckpointer(URL, schema=schema)
    with psycopg.connect(URL, autocommit=True) as db, db.transaction():
        old._migrate(db, 0, target=1)
    cid = new_checkpoint_id()
    sql(
        f"INSERT INTO {schema}.flowgraph_threads VALUES ('t', %s, 0)",
        cid,
    )
    sql(
        f"INSERT INTO {schema}.flowgraph_checkpoints VALUES ('t', %s, NULL, 0, 1.5, %s, %s)",
        cid,
        cid,
        b"v1 payload",
    )
    assert versions(schema) == [1]
    index = "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s"
    assert sql(index, schema, "flowgraph_checkpoints_by_step") == []

    with PostgresCheckpointer(URL, schema=schema) as store:
        assert store.head("t") == cid  # first use upgraded it
        assert store.chain("t", cid)[0].payload == b"v1 payload"
    assert versions(schema) == list(range(1, SCHEMA_VERSION + 1))
    assert sql(index, schema, "flowgraph_checkpoints_by_step") == [(1,)]


def test_a_newer_schema_is_refused_with_a_clear_error(schema: str) -> None:
    PostgresCheckpointer(URL, schema=schema).setup()
    sql(f"INSERT INTO {schema}.flowgraph_schema_version (version) VALUES (%s)", SCHEMA_VERSION + 1)
    store = PostgresCheckpointer(URL, schema=schema)
    with pytest.raises(DeserializationError) as caught:
        store.head("t")
    message = str(caught.value)
    assert schema in message and "newer flowgraph" in message and "upgrade" in message
    assert f"version {SCHEMA_VERSION + 1}" in message
    with pytest.raises(DeserializationError):
        store.setup()
    assert versions(schema)[-1] == SCHEMA_VERSION + 1  # nothing touched
    store.close()


def test_schemas_are_independent_stores(schema: str) -> None:
    other = schema + "_b"
    try:
        with (
            PostgresCheckpointer(URL, schema=schema) as a,
            PostgresCheckpointer(URL, schema=other) as b,
        ):
            ra, rb = record("t"), record("t")
            a.put(ra, expected_head=None, messages={"k": b"a"})
            b.put(rb, expected_head=None, messages={"k": b"b"})
            assert (a.head("t"), b.head("t")) == (ra.checkpoint_id, rb.checkpoint_id)
            assert a.messages("t", ["k"]) == {"k": b"a"}
            b.delete_thread("t")
            assert a.threads() == ["t"] and b.threads() == []
    finally:
        sql(f"DROP SCHEMA IF EXISTS {other} CASCADE")


@pytest.mark.parametrize("bad", ["has-dash", "1digit", 'q"uote', "x; DROP TABLE y", "", "a" * 64])
def test_a_schema_name_must_be_a_plain_identifier(bad: str) -> None:
    with pytest.raises(ValueError, match="plain identifier"):
        PostgresCheckpointer(URL, schema=bad)


def test_invalid_pool_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="min_size=3, max_size=2"):
        PostgresCheckpointer(URL, min_size=3, max_size=2)
    with pytest.raises(ValueError, match="max_size=0"):
        PostgresCheckpointer(URL, min_size=0, max_size=0)


def in_children(n: int, work: Callable[[], str]) -> list[str]:
    """Fork `n` processes that start `work` together; what each returned, in order.

    Forks of this warm process start in a millisecond, so they really do
    run at the same time; each waits for the go signal (its end of a pipe
    closing), so all are running before any starts.
    """
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork (POSIX)")
    go_read, go_write = os.pipe()
    children = []
    for _ in range(n):
        out_read, out_write = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12 warns on fork() while threads run (a pool's); the children use
            # none of this process's connections, which is what these tests check
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(go_write)
                os.read(go_read, 1)  # returns at EOF: when the parent lets go
                os.write(out_write, f"OK {work()}".encode())
                code = 0
            except BaseException:
                os.write(out_write, f"ERROR {traceback.format_exc()}".encode())
            finally:
                os._exit(code)
        os.close(out_write)
        children.append((pid, out_read))
    os.close(go_read)
    os.close(go_write)  # go
    results = []
    for pid, out_read in children:
        with os.fdopen(out_read) as out:
            results.append(out.read())
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, results[-1]
    assert all(r.startswith("OK ") for r in results), results
    return [r[3:] for r in results]


def test_several_processes_migrating_at_once_migrate_once(schema: str) -> None:
    def migrate() -> str:
        store = PostgresCheckpointer(URL, schema=schema)
        store.setup()
        store.close()
        return "migrated"

    assert in_children(4, migrate) == ["migrated"] * 4
    assert versions(schema) == list(range(1, SCHEMA_VERSION + 1))


# -- one transaction per step ---------------------------------------------------------------


def test_a_step_whose_message_insert_fails_stores_nothing(schema: str) -> None:
    with PostgresCheckpointer(URL, schema=schema) as store:
        first = record("t")
        store.put(first, expected_head=None, messages={"m0": b"0"})
        refuse_message(schema, "boom")
        second = record("t", first)
        store.put_pending("t", first.checkpoint_id, [])  # nothing to keep: a no-op
        with pytest.raises(psycopg.errors.RaiseException, match="refused"):
            store.put(second, expected_head=first.checkpoint_id, messages={"ok": b"", "boom": b""})
        assert store.head("t") == first.checkpoint_id
        assert store.get("t", second.checkpoint_id) is None
        assert store.messages("t", ["m0", "ok", "boom"]) == {"m0": b"0"}
        # a new thread is not created either
        with pytest.raises(psycopg.errors.RaiseException):
            store.put(record("new"), expected_head=None, messages={"boom": b""})
        assert store.threads() == ["t"]
        # and the store is still usable: the failed statement left no open transaction
        store.put(second, expected_head=first.checkpoint_id, messages={"ok": b"fine"})
        assert store.messages("t", ["ok"]) == {"ok": b"fine"}


def test_a_repeated_put_of_a_committed_record_is_not_an_error(schema: str) -> None:
    """What a retry after a connection lost during COMMIT does: the first attempt won."""
    with PostgresCheckpointer(URL, schema=schema) as store:
        first = record("t")
        store.put(first, expected_head=None, messages={})
        second = record("t", first)
        store.put(second, expected_head=first.checkpoint_id, messages={})
        store.put(second, expected_head=first.checkpoint_id, messages={})
        assert [r.checkpoint_id for r in store.history("t")] == [
            second.checkpoint_id,
            first.checkpoint_id,
        ]
        with pytest.raises(ConcurrentRunError):  # another record from the old head still loses
            store.put(record("t", first), expected_head=first.checkpoint_id, messages={})


def test_a_run_first_write_takes_the_lease_in_the_same_statement(schema: str) -> None:
    """put_and_acquire is one statement: a failed step takes no lease, a repeat after the
    first attempt committed (a lost connection) succeeds, and another run's live lease
    keeps both the step and the lease out."""
    with PostgresCheckpointer(URL, schema=schema) as store:
        store.setup()
        first = record("t")
        lease = {"run_id": "run-a", "owner": "host#1/2/3", "lease_s": 30.0}
        refuse_message(schema, "boom")
        with pytest.raises(psycopg.errors.RaiseException, match="refused"):
            store.put_and_acquire(first, expected_head=None, messages={"boom": b""}, **lease)
        assert store.read_lease("t") is None and store.threads() == []

        assert (
            store.put_and_acquire(first, expected_head=None, messages={"m": b"q"}, **lease) is None
        )
        assert (
            store.put_and_acquire(first, expected_head=None, messages={"m": b"q"}, **lease) is None
        )
        held = store.read_lease("t")
        assert held is not None and (held.run_id, held.owner) == ("run-a", "host#1/2/3")
        assert [r.checkpoint_id for r in store.history("t")] == [first.checkpoint_id]

        second = record("t", first)
        holder = store.put_and_acquire(
            second, expected_head=first.checkpoint_id, messages={}, **{**lease, "run_id": "run-b"}
        )
        assert holder is not None and holder.run_id == "run-a"
        assert store.head("t") == first.checkpoint_id
        # a stale head: the lease the statement took is given back with the error
        store.release_lease("t", "run-a", "host#1/2/3")
        with pytest.raises(ConcurrentRunError, match="'t'"):
            store.put_and_acquire(second, expected_head="stale", messages={}, **lease)
        assert store.read_lease("t") is None and store.head("t") == first.checkpoint_id


# -- connections ----------------------------------------------------------------------------


def test_a_killed_connection_does_not_fail_the_next_calls(schema: str, app_name: str) -> None:
    with PostgresCheckpointer(named(app_name), schema=schema, min_size=2, max_size=4) as store:
        first = record("t")
        store.put(first, expected_head=None, messages={})
        assert kill(app_name) >= 1
        assert store.head("t") == first.checkpoint_id
        assert kill(app_name) >= 1
        second = record("t", first, snapshot=True)
        store.put(second, expected_head=first.checkpoint_id, messages={"m": b"x"})
        assert store.history("t")[0] == second
        assert kill(app_name) >= 1
        assert store.prune("t", 1) == 1  # a transaction of several statements
        assert store.history("t") == [second]
        assert kill(app_name) >= 1
        assert store.messages("t", ["m"]) == {"m": b"x"}


def test_the_pool_stays_within_max_size_under_many_threads(schema: str, app_name: str) -> None:
    with PostgresCheckpointer(named(app_name), schema=schema, min_size=1, max_size=2) as store:
        # the migration's own connection (before the pool opens) leaves the server's list
        # a moment after it hung up: count only the pool's
        store.setup()
        assert closed_on_the_server(app_name)
        errors: list[BaseException] = []
        seen: set[int] = set()
        barrier = threading.Barrier(8, timeout=30)

        def work(k: int) -> None:
            try:
                barrier.wait()
                parent = None
                for _ in range(15):
                    rec = record(f"t{k}", parent)
                    store.put(rec, expected_head=store.head(f"t{k}"), messages={"m": b""})
                    parent = rec
                    seen.update(connections(app_name))
            except BaseException as exc:
                errors.append(exc)

        workers = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert not errors, errors
        assert [len(store.history(f"t{k}")) for k in range(8)] == [15] * 8
        assert 1 <= len(seen) <= 2, seen  # never more than max_size at once, nor over time
    assert closed_on_the_server(app_name)  # close() hung up


def test_a_forked_child_opens_its_own_connections(schema: str, app_name: str) -> None:
    def backend_pid(store: PostgresCheckpointer) -> int:
        row = store._run(lambda conn: conn.execute("SELECT pg_backend_pid()").fetchone())
        assert row is not None
        return int(row[0])

    with PostgresCheckpointer(named(app_name), schema=schema, min_size=1, max_size=1) as store:
        first = record("t")
        store.put(first, expected_head=None, messages={})
        parent_pid = backend_pid(store)

        def child_work() -> str:
            second = record("t", first)
            store.put(second, expected_head=first.checkpoint_id, messages={"c": b"child"})
            pid = backend_pid(store)
            store.close()  # closes the child's pool only
            return str(pid)

        (child_pid,) = in_children(1, child_work)
        assert int(child_pid) != parent_pid
        # the parent's connection is the same one, alive, and sees the child's write
        assert backend_pid(store) == parent_pid
        assert store.messages("t", ["c"]) == {"c": b"child"}
        assert len(store.history("t")) == 2

        def close_at_once() -> str:
            store.close()  # the inherited pool: left alone, not closed (it would hang up)
            return "closed"

        assert in_children(2, close_at_once) == ["closed"] * 2
        assert backend_pid(store) == parent_pid


def test_close_releases_the_connections_and_a_later_call_reopens(
    schema: str, app_name: str
) -> None:
    store = PostgresCheckpointer(named(app_name), schema=schema, min_size=2, max_size=3)
    store.put(record("t"), expected_head=None, messages={})
    assert connections(app_name) != []
    store.close()
    assert closed_on_the_server(app_name)
    assert store.threads() == ["t"]
    store.close()
    store.close()  # twice is fine
    assert closed_on_the_server(app_name)


# -- corrupt rows (the conformance suite corrupts only checkpoint rows) -----------------------


def test_a_corrupt_message_row_is_a_clear_error_naming_the_thread(schema: str) -> None:
    with PostgresCheckpointer(URL, schema=schema) as store:
        app = chat_app(store)
        for t in ("bad", "good"):
            app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
        sql(f"UPDATE {schema}.flowgraph_messages SET data = %s WHERE thread_id = 'bad'", b"\x01")
        with pytest.raises(DeserializationError, match="bad"):
            app.get_state("bad")
        assert [m.text for m in app.get_state("good").values.messages] == ["hi", "reply 1"]
