"""Runs: the served graphs, the executor that runs them, the Celery queue, and rollback.

`graphs` holds the served graphs as LangGraph Server's assistants;
`executor` runs a thread's runs one at a time in this process (pending in
the registry, claimed by the thread's lease, streamed to any listener,
swept for lost ones); `queue` hands them to Celery workers instead
(`--queue`); `rollback` rewrites a thread's stored history (copy a thread,
roll a run back). Below `_http`, which starts and reads runs through it:
it imports `_wire` and `_records` of the server's rooms, never `_http`.
"""
