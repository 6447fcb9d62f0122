"""LangGraph's keywords flowgraph spells differently or does not take, named in the TypeError.

A program ported by changing its imports fails at the first such keyword;
Python's own "unexpected keyword argument" leaves the user to guess what
flowgraph calls it, so the error names our spelling (or says there is none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flowgraph.graph._core.types import RetryPolicy

ADD_NODE = {
    "error_handler": "catch the error in the node, or route on it with a Command",
    "timeout": "no per-node timeout: bound the node's own calls (a model's `timeout=`)",
    "trace_policy": "no trace policy: spans come from flowgraph.integrations.opentelemetry",
    "retry_policies": "use `retry=RetryPolicy(...)`",
}
COMPILE = {
    "debug": "use `stream(..., mode='events')` for node start, end and error events",
    "transformers": "stream transformers are not offered",
}
STATE_GRAPH = {
    "config_schema": "use `context_schema=` (read as `runtime.context`)",
}


def unknown_keyword(call: str, given: Mapping[str, Any], known: Mapping[str, str]) -> TypeError:
    """The TypeError for keywords `call` does not take, with flowgraph's spelling of each."""
    parts = []
    for keyword in given:
        hint = known.get(keyword)
        parts.append(f"{keyword!r} ({hint})" if hint else repr(keyword))
    return TypeError(f"{call}() got unexpected keyword argument(s): {', '.join(parts)}")


def retry_policies(
    node: object,
    retry: RetryPolicy | None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None,
) -> tuple[RetryPolicy, ...]:
    """`retry=` or LangGraph's `retry_policy=` (a policy, or a list of them: the first whose
    `retry_on` takes an error applies to it)."""
    if retry_policy is None:
        return () if retry is None else (retry,)
    if retry is not None:
        raise TypeError(
            f"add_node({node!r}) got both retry= and retry_policy=: they are the same; pass one"
        )
    if isinstance(retry_policy, RetryPolicy):
        return (retry_policy,)
    policies = tuple(retry_policy)
    if not all(isinstance(p, RetryPolicy) for p in policies):
        raise TypeError(f"add_node({node!r}): retry_policy= takes RetryPolicy objects")
    return policies
