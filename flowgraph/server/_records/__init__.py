"""The server's records: thread metadata, run records and claims, kept beside the checkpoints.

`docs` is the small document store (JSON documents of a kind, keyed by id)
in SQLite or memory, `docs_servers` the same in PostgreSQL and Redis, and
`registry` the run registry written on them (`ThreadRecord`, `RunRecord`,
which process runs what, heartbeats, lost runs). The lowest room of
`flowgraph.server`: it imports no other server room (only flowgraph's
checkpoint layer), and every other room may import it.
"""
