"""The vocabulary every room of the graph package shares, and nothing that runs a graph.

Types a caller or a node sees (`Command`, `Send`, `START`, `StreamPart`,
`RetryPolicy`, `CachePolicy`, `interrupt`), the frozen description of a
compiled graph the engine reads (`GraphSpec`: node specs, edges, branches,
joins, the state schema), how a step's writes merge into state
(`apply_writes`), and the worker threads. Imports nothing else of
`flowgraph.graph`; every other room may import it.
"""
