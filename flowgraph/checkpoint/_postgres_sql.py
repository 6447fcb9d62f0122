"""PostgresCheckpointer's tables and queries: its migrations and every statement it runs.

Kept apart from the class so the storage protocol reads on its own; the
statements are filled in with the schema-qualified table names once.
"""

from __future__ import annotations

__all__ = ["COLUMNS", "MIGRATIONS", "SCHEMA_VERSION", "TABLES", "Statements"]

COLUMNS = "thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload"

TABLES = ("threads", "checkpoints", "messages", "pending", "leases")
"""Table names after the `flowgraph_` prefix, inside the configured schema."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: the four tables; "C" collation: ids sort by code point, as in SQLite and Python
        """CREATE TABLE {s}.flowgraph_threads (
            thread_id text COLLATE "C" PRIMARY KEY,
            head text COLLATE "C" NOT NULL,
            updated_at double precision NOT NULL)""",
        """CREATE TABLE {s}.flowgraph_checkpoints (
            thread_id text COLLATE "C" NOT NULL,
            checkpoint_id text COLLATE "C" NOT NULL,
            parent_id text COLLATE "C",
            step integer NOT NULL,
            created_at double precision NOT NULL,
            base_id text COLLATE "C" NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_id))""",
        """CREATE TABLE {s}.flowgraph_messages (
            thread_id text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (thread_id, key))""",
        """CREATE TABLE {s}.flowgraph_pending (
            thread_id text COLLATE "C" NOT NULL,
            checkpoint_id text COLLATE "C" NOT NULL,
            task_index integer NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_id, task_index))""",
    ),
    (  # 2: chain() selects a step range of one thread; index it
        "CREATE INDEX flowgraph_checkpoints_by_step ON {s}.flowgraph_checkpoints (thread_id, step)",
    ),
    (  # 3: the run that holds each busy thread; expiry by the server's clock
        """CREATE TABLE {s}.flowgraph_leases (
            thread_id text COLLATE "C" PRIMARY KEY,
            run_id text COLLATE "C" NOT NULL,
            owner text NOT NULL,
            expires_at timestamptz NOT NULL)""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this flowgraph writes; a store at a newer one is refused."""


class Statements:
    """Every query, with the schema-qualified table names filled in once."""

    def __init__(self, s: str) -> None:
        threads, checkpoints = f"{s}.flowgraph_threads", f"{s}.flowgraph_checkpoints"
        messages, pending = f"{s}.flowgraph_messages", f"{s}.flowgraph_pending"
        leases = f"{s}.flowgraph_leases"
        expiry = "clock_timestamp() + %(lease)s::float8 * interval '1 second'"
        # the outer SELECT sees the row as it was before the INSERT: the holder when not taken
        self.acquire_lease = (
            f"WITH taken AS (INSERT INTO {leases} AS l (thread_id, run_id, owner, expires_at) "
            f"VALUES (%(thread)s, %(run)s, %(owner)s, {expiry}) ON CONFLICT (thread_id) "
            "DO UPDATE SET run_id = excluded.run_id, owner = excluded.owner, "
            "expires_at = excluded.expires_at WHERE l.expires_at <= clock_timestamp() "
            "OR (l.run_id = %(dead_run)s::text AND l.owner = %(dead_owner)s::text) RETURNING 1) "
            "SELECT (SELECT count(*) FROM taken), h.run_id, h.owner, "
            "extract(epoch FROM h.expires_at)::float8 "
            f"FROM (SELECT 1) AS one LEFT JOIN {leases} AS h ON h.thread_id = %(thread)s"
        )
        self.renew_lease = (
            f"UPDATE {leases} SET expires_at = {expiry} "
            "WHERE thread_id = %(thread)s AND run_id = %(run)s AND owner = %(owner)s"
        )
        self.release_lease = (
            f"DELETE FROM {leases} WHERE thread_id = %s AND run_id = %s AND owner = %s"
        )
        self.read_lease = (
            f"SELECT run_id, owner, extract(epoch FROM expires_at)::float8 FROM {leases} "
            "WHERE thread_id = %s AND expires_at > clock_timestamp()"
        )
        # One statement per step: the CTEs after `moved` act only if the head moved.
        rest = (
            f", saved AS (INSERT INTO {checkpoints} ({COLUMNS}) "
            "SELECT %(thread)s, %(id)s, %(parent)s::text, %(step)s::integer, "
            "%(created)s::float8, %(base)s, %(payload)b FROM moved), "
            f"stored AS (INSERT INTO {messages} (thread_id, key, data) "
            "SELECT %(thread)s, u.key, u.data "
            "FROM unnest(%(keys)s::text[], %(datas)b::bytea[]) AS u(key, data) "
            "WHERE EXISTS (SELECT FROM moved) ON CONFLICT (thread_id, key) DO NOTHING), "
            f"cleared AS (DELETE FROM {pending} WHERE thread_id = %(thread)s "
            "AND checkpoint_id = %(parent)s::text AND EXISTS (SELECT FROM moved)) "
            "SELECT count(*) FROM moved"
        )
        self.put_new = (
            f"WITH moved AS (INSERT INTO {threads} (thread_id, head, updated_at) "
            "VALUES (%(thread)s, %(id)s, %(now)s) "
            "ON CONFLICT (thread_id) DO NOTHING RETURNING 1)" + rest
        )
        self.put_next = (
            f"WITH moved AS (UPDATE {threads} SET head = %(id)s, updated_at = %(now)s "
            "WHERE thread_id = %(thread)s AND head = %(expected)s RETURNING 1)" + rest
        )
        self.put_next_release = self.put_next.replace(
            " SELECT count(*) FROM moved",
            f", released AS (DELETE FROM {leases} WHERE thread_id = %(thread)s "
            "AND run_id = %(run)s AND owner = %(owner)s AND EXISTS (SELECT FROM moved)) "
            "SELECT count(*) FROM moved",
        )
        # The run's first write takes its lease: the head moves only if `taken` took it.
        # Taken but not moved (the head moved under the run, or this statement's retry
        # after its first attempt committed: the lease is retaken by its own run) is
        # sorted out by the caller; the outer SELECT names the holder when not taken.
        take = (
            f"WITH taken AS (INSERT INTO {leases} AS l (thread_id, run_id, owner, expires_at) "
            f"VALUES (%(thread)s, %(run)s, %(owner)s, {expiry}) ON CONFLICT (thread_id) "
            "DO UPDATE SET run_id = excluded.run_id, owner = excluded.owner, "
            "expires_at = excluded.expires_at WHERE l.expires_at <= clock_timestamp() "
            "OR (l.run_id = excluded.run_id AND l.owner = excluded.owner) RETURNING 1), "
        )
        holder = (
            " SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM moved), h.run_id, "
            "h.owner, extract(epoch FROM h.expires_at)::float8 "
            f"FROM (SELECT 1) AS one LEFT JOIN {leases} AS h ON h.thread_id = %(thread)s"
        )
        self.put_new_acquire = (
            take + f"moved AS (INSERT INTO {threads} (thread_id, head, updated_at) "
            "SELECT %(thread)s, %(id)s, %(now)s FROM taken "
            "ON CONFLICT (thread_id) DO NOTHING RETURNING 1)"
            + rest.replace(" SELECT count(*) FROM moved", holder)
        )
        self.put_next_acquire = (
            take + f"moved AS (UPDATE {threads} SET head = %(id)s, updated_at = %(now)s "
            "WHERE thread_id = %(thread)s AND head = %(expected)s "
            "AND EXISTS (SELECT FROM taken) RETURNING 1)"
            + rest.replace(" SELECT count(*) FROM moved", holder)
        )
        self.put_pending = (
            f"INSERT INTO {pending} (thread_id, checkpoint_id, task_index, payload) "
            "SELECT %s, %s, u.i, u.p FROM unnest(%s::integer[], %b::bytea[]) AS u(i, p) "
            "ON CONFLICT (thread_id, checkpoint_id, task_index) "
            "DO UPDATE SET payload = excluded.payload"
        )
        self.head = f"SELECT head FROM {threads} WHERE thread_id = %s"
        self.head_for_update = self.head + " FOR UPDATE"
        self.get = (
            f"SELECT {COLUMNS} FROM {checkpoints} WHERE thread_id = %s AND checkpoint_id = %s"
        )
        self.chain = (
            f"SELECT {COLUMNS} FROM {checkpoints} WHERE thread_id = %(thread)s AND step "
            f"BETWEEN (SELECT b.step FROM {checkpoints} AS t JOIN {checkpoints} AS b "
            "ON b.thread_id = t.thread_id AND b.checkpoint_id = t.base_id "
            "WHERE t.thread_id = %(thread)s AND t.checkpoint_id = %(id)s) "
            f"AND (SELECT step FROM {checkpoints} "
            "WHERE thread_id = %(thread)s AND checkpoint_id = %(id)s)"
        )
        self.messages = (
            f"SELECT key, data FROM {messages} WHERE thread_id = %s AND key = ANY(%s::text[])"
        )
        self.pending = (
            f"SELECT task_index, payload FROM {pending} "
            "WHERE thread_id = %s AND checkpoint_id = %s ORDER BY task_index"
        )
        self.head_and_pending = (
            f"SELECT t.head, p.task_index, p.payload FROM {threads} AS t LEFT JOIN {pending} "
            "AS p ON p.thread_id = t.thread_id AND p.checkpoint_id = t.head "
            "WHERE t.thread_id = %s ORDER BY p.task_index"
        )
        self.history = (
            f"SELECT {COLUMNS} FROM {checkpoints} WHERE thread_id = %(thread)s "
            "AND (%(before)s::text IS NULL OR checkpoint_id < %(before)s::text) "
            "ORDER BY checkpoint_id DESC LIMIT %(limit)s::bigint"
        )
        self.threads = f"SELECT thread_id FROM {threads} ORDER BY thread_id"
        self.delete_head = f"DELETE FROM {threads} WHERE thread_id = %s"
        self.delete_thread = (
            f"WITH b AS (DELETE FROM {checkpoints} WHERE thread_id = %(thread)s), "
            f"c AS (DELETE FROM {messages} WHERE thread_id = %(thread)s) "
            f"DELETE FROM {pending} WHERE thread_id = %(thread)s"
        )
        self.lineage = (
            f"SELECT checkpoint_id, parent_id, base_id FROM {checkpoints} WHERE thread_id = %s"
        )
        self.drop_checkpoints = (
            f"WITH c AS (DELETE FROM {checkpoints} "
            "WHERE thread_id = %(thread)s AND checkpoint_id = ANY(%(ids)s::text[])) "
            f"DELETE FROM {pending} "
            "WHERE thread_id = %(thread)s AND checkpoint_id = ANY(%(ids)s::text[])"
        )
        self.forget_messages = (
            f"DELETE FROM {messages} WHERE thread_id = %s AND NOT (key = ANY(%s::text[]))"
        )
