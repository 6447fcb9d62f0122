"""A stored thread: its checkpoint records, the lease one run holds on it, reading it back.

How a step becomes a record and a record becomes state again (`record`), the
writer that stores each step of a run (`saver`), the one-writer-per-thread
lease (`lease`), opening a thread for a run (`opening`: the lease, the
checkpoint and the writer the run gets, in one call), a stored thread read
for the CLI (`reader`), and the tool results a branch may take from another
(`reuse`). Imports only `_core`; the engine and the facade build on it.
"""
