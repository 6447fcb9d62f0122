"""compile()'s checks: a graph that cannot run as built fails here, naming the node.

A node with no edge out is not an error: the run ends after it, as in
LangGraph, and diagrams draw its edge to END.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from flowgraph.errors import GraphValidationError
from flowgraph.graph._core.types import END, START

if TYPE_CHECKING:
    from flowgraph.graph._core.spec import GraphSpec

__all__ = ["validate"]


def validate(
    spec: GraphSpec,
    *,
    interrupt_before: Sequence[str] = (),
    interrupt_after: Sequence[str] = (),
) -> None:
    """Raise GraphValidationError for the first problem found, with the fix in the message."""
    nodes = spec.nodes
    known = set(nodes) | {START, END}

    def must_exist(name: str, where: str) -> None:
        if name not in known:
            hint = f"; known nodes: {', '.join(sorted(nodes))}" if nodes else ""
            raise GraphValidationError(
                f"{where} refers to node '{name}', which was never added; "
                f"add_node('{name}', ...) or fix the name{hint}",
                node=name,
            )

    for a, b in spec.edges:
        must_exist(a, f"The edge {a} -> {b}")
        must_exist(b, f"The edge {a} -> {b}")
    for sources, target in spec.joins:
        for source in sorted(sources):
            must_exist(source, f"The join edge {sorted(sources)} -> {target}")
        must_exist(target, f"The join edge {sorted(sources)} -> {target}")
    for branch in spec.branches:
        must_exist(branch.source, "A conditional edge")
        for target in branch.targets or ():
            if branch.path_map is not None:
                must_exist(target, f"The path_map of the conditional edge from '{branch.source}'")
            else:
                must_exist(target, f"The return hint of the branch from '{branch.source}'")
    for name, node in nodes.items():
        for target in node.destinations:
            must_exist(target, f"The destinations of node '{name}'")
    for name in (*interrupt_before, *interrupt_after):
        must_exist(name, "interrupt_before/interrupt_after")

    successors = spec.successors
    if not successors.get(START) and not any(b.source == START for b in spec.branches):
        raise GraphValidationError(
            "The graph has no entry point; add_edge(START, 'first_node') "
            "or add_conditional_edges(START, ...)",
            node=START,
        )

    open_branches = {b.source for b in spec.branches if b.targets is None}
    if open_branches:
        # a branch whose targets are unknown may lead anywhere
        reachable = _reachable(successors)
        if reachable & open_branches:
            reachable = known
    else:
        reachable = _reachable(successors)
    for name in nodes:
        if name not in reachable:
            raise GraphValidationError(
                f"Node '{name}' is unreachable from START; add an edge to it, list it in a "
                "path_map or in the destinations= (or -> Command[Literal[...]] hint) of a "
                "node whose Command goes there, or remove it",
                node=name,
            )
    # A node with no way out ends the run after it, as in LangGraph (diagrams draw the
    # edge to END): no error for it.


def _reachable(successors: Mapping[str, Sequence[str]]) -> set[str]:
    """START and every name an edge path from START reaches."""
    seen = {START}
    todo = [START]
    while todo:
        for target in successors.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen
