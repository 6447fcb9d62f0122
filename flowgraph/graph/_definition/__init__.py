"""The graph you define: `StateGraph` (nodes, edges, branches) and its validation.

`compile()` validates the definition, freezes it into a `GraphSpec` and hands
it to the facade (`CompiledGraph`); nothing below imports this room.
"""
