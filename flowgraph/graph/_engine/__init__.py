"""The engine: what runs a compiled graph, one superstep after another.

The superstep rules (`superstep`: the next step's tasks), the one run loop
(`loop`), what a run carries (`run`), run setup (`setup`: input, resume,
fork), the one way through a run (`execute`: lease, setup, loop, release),
subgraph nodes, `once()`, node caching, and the bridge between sync callers
and the async loop. Reads the frozen `GraphSpec` of `_core`, never the
builder; imports `_core` and `_thread` only.
"""
