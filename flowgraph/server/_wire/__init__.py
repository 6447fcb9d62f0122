"""The wire format: what a LangGraph client sends and reads, as flowgraph values go to and fro.

`convert` writes messages, values, states, interrupts and run records in
the shapes LangGraph Server uses (LangChain message dicts, ISO times) and
reads inputs and commands back; `stream` turns a run's `StreamPart`s into
the SSE events of each stream mode; `responses` is JSON bytes and the one
refusal, `ApiError` (`{"detail": ...}` with its status). No I/O and no
routes: it imports only `_records` (a run record's type) of the server's
rooms, and `_runs` and `_http` build on it.
"""
