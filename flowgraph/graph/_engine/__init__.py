"""The engine: what runs a compiled graph, one superstep after another.

The superstep rules (`superstep`: the next step's tasks), the one run loop
(`loop`), run setup (`setup`: lease, load, input, resume, fork), `once()`,
node caching, runtime config, and the bridge between sync callers and the
async loop. Reads the frozen `GraphSpec` of `_core`, never the builder;
imports `_core` and `_thread` only.
"""
