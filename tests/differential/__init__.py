"""The differential suite: LangGraph programs run on LangGraph and on flowgraph (issue #30)."""
