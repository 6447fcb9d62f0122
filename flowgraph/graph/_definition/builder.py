"""StateGraph: nodes and edges kept as a networkx MultiDiGraph, compiled into a runnable app.

`g.graph` is the structure as a networkx MultiDiGraph: node attributes
hold a `NodeSpec`; edge attributes say what kind of edge it is (`direct`,
`conditional`, `join`, `command`) and carry a label where a branch has
one. Importing networkx costs more than the rest of a cold start, and
neither running nor validating a graph needs it, so the builder records
the structure as it is added and builds the networkx graph on first use
(then keeps it up to date); validation and the run plan read the record.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import types
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Never,
    Self,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import BaseModel
from typing_extensions import TypeVar

from flowgraph.errors import GraphValidationError
from flowgraph.graph._core.inject import injected_parameters, with_injections
from flowgraph.graph._core.schema import StateAdapter
from flowgraph.graph._core.spec import Branch, GraphSpec, NodeSpec
from flowgraph.graph._core.types import END, START, Budget, Command, RetryPolicy
from flowgraph.graph._definition import spellings
from flowgraph.graph._definition.spellings import retry_policies, unknown_keyword
from flowgraph.state import is_typeddict_schema

if TYPE_CHECKING:
    import networkx as nx

    from flowgraph.graph._compiled import CompiledGraph
    from flowgraph.graph._core.caching import BaseCache, CachePolicy

__all__ = ["StateGraph"]

_RESERVED = {START, END}

# As CompiledGraph's (LangGraph's order and defaults): `StateGraph(State)` is a
# StateGraph[State, None, State, State], and a bare `StateGraph` hint is valid under --strict.
StateT = TypeVar("StateT", default=Any)
ContextT = TypeVar("ContextT", default=None)
InputT = TypeVar("InputT", default=StateT)
OutputT = TypeVar("OutputT", default=StateT)


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an instance with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _hints(fn: Callable[..., Any]) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """The function whose signature counts (a callable object's `__call__`), and its hints."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", None)  # noqa: B004
    if target is None:
        return None, {}
    try:
        return target, get_type_hints(target)
    except Exception:  # a hint that does not resolve: as if there were none
        return target, {}


def _union_parts(hint: Any) -> tuple[Any, ...]:
    origin = get_origin(hint)
    return get_args(hint) if origin is Union or origin is types.UnionType else (hint,)


def _literal_targets(path: Callable[..., Any]) -> tuple[str, ...] | None:
    """Targets named by a `-> Literal["a", "b"]` return hint, if the function has one."""
    hint = _hints(path)[1].get("return")
    if hint is None:
        return None
    options: list[str] = []
    for part in _union_parts(hint):
        if get_origin(part) is Literal:
            options.extend(str(a) for a in get_args(part))
        else:
            return None
    return tuple(options) or None


def _return_hint(fn: Callable[..., Any]) -> Any:
    """The return hint alone, even when another hint of `fn` does not resolve (a state class
    local to a function, under `from __future__ import annotations`)."""
    target, hints = _hints(fn)
    if "return" in hints or target is None:
        return hints.get("return")
    hint = getattr(target, "__annotations__", {}).get("return")
    if not isinstance(hint, str):
        return hint
    try:
        return eval(hint, getattr(target, "__globals__", {}))  # the program's own hint
    except Exception:
        return _parsed_command_hint(hint)


def _parsed_command_hint(text: str) -> Any:
    """`Command[Literal["a", "b"]]` read from a hint's text whose names do not resolve."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, (ast.Name, ast.Attribute))
            and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr)
            == "Command"
            and isinstance(node.slice, ast.Subscript)
        ):
            names = [
                c.value
                for c in ast.walk(node.slice)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            return Command[Literal[tuple(names)]] if names else None  # type: ignore[misc]
    return None


def _command_targets(fn: Callable[..., Any]) -> tuple[str, ...]:
    """Destinations named by a `-> Command[Literal["a", "b"]]` return hint (also in a union)."""
    hint = _return_hint(fn)
    for part in _union_parts(hint) if hint is not None else ():
        if get_origin(part) is Command:
            names = get_args(part)
            if names and get_origin(names[0]) is Literal:
                return tuple(str(name) for name in get_args(names[0]))
    return ()


def _is_schema(hint: object) -> bool:
    return is_typeddict_schema(hint) or (isinstance(hint, type) and issubclass(hint, BaseModel))


def _input_type(fn: Callable[..., Any]) -> type[Any] | None:
    """The schema a node's first parameter is annotated with (a TypedDict or pydantic model)."""
    target, hints = _hints(fn)
    if target is None or not hints:
        return None
    try:
        first = next(iter(inspect.signature(target).parameters), None)
    except (TypeError, ValueError):
        return None
    hint = hints.get(first) if first is not None else None
    return hint if _is_schema(hint) else None


def _path_map(path_map: Mapping[Hashable, str] | Sequence[str] | str) -> dict[Hashable, str]:
    """A path map as a dict: a list (or one name) maps each name to itself."""
    if isinstance(path_map, str):
        return {path_map: path_map}
    if isinstance(path_map, Mapping):
        return dict(path_map)
    return {name: name for name in path_map}


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A graph under construction: add nodes and edges, then `compile()` it.

    Typed by its schemas, as LangGraph's: `StateGraph(State)` is a
    `StateGraph[State]`, whose compiled graph's `invoke` returns a `State`
    (an output schema's type when one is given).

    >>> g = StateGraph(MessagesState)
    >>> g.add_node("echo", lambda state: {"messages": [("ai", state.messages[-1].text)]})
    >>> g.add_edge(START, "echo").add_edge("echo", END)
    """

    def __init__(
        self,
        schema: type[StateT],
        context_schema: type[ContextT] | None = None,
        *,
        input_schema: type[InputT] | None = None,
        output_schema: type[OutputT] | None = None,
        input: type[InputT] | None = None,
        output: type[OutputT] | None = None,
        **unknown: Never,  # a checker flags any other keyword; the run names our spelling
    ) -> None:
        """A graph over state `schema` (a pydantic model or a TypedDict).

        `input_schema` limits what `invoke` takes to its fields, and
        `output_schema` what it returns; their fields the state lacks become
        private keys (as do those of a node's own input type). `input=` and
        `output=` are LangGraph's older names for them. `context_schema` is
        the type of `invoke(..., context=...)`, which nodes read as
        `runtime.context` (a dict given is made one when it is a dataclass
        or a pydantic model).
        """
        if unknown:
            raise unknown_keyword("StateGraph", unknown, spellings.STATE_GRAPH)
        self.schema = schema
        self.context_schema = context_schema
        self.state = StateAdapter(schema)
        input_schema = input_schema if input_schema is not None else input
        output_schema = output_schema if output_schema is not None else output
        for what, given in (("input_schema", input_schema), ("output_schema", output_schema)):
            if given is not None and not _is_schema(given):
                raise TypeError(f"{what} must be a pydantic model or a TypedDict, not {given!r}")
        if input_schema is not None:
            self.state.set_input(input_schema)
        if output_schema is not None:
            self.state.set_output(output_schema)
        self.input_schema: type[Any] = input_schema or schema
        self.output_schema: type[Any] = output_schema or schema
        self._specs: dict[str, NodeSpec] = {}
        self._mentioned: dict[str, None] = {}
        """Every name a node or an edge used, in first-use order (networkx's node order)."""
        self._successors: dict[str, list[str]] = {}
        """Every edge (of any kind) by source, one entry per edge."""
        self._structure: list[tuple[str, tuple[str, ...], dict[str, Any]]] = []
        """("node", (name,), attributes) and ("edge", (a, b), attributes), in order."""
        self._nx: nx.MultiDiGraph[str] | None = None
        self._add_to_structure("node", (START,), {"kind": "start"})
        self._add_to_structure("node", (END,), {"kind": "end"})
        self.branches: list[Branch] = []
        self.joins: list[tuple[frozenset[str], str]] = []
        self._edges: list[tuple[str, str]] = []

    # -- structure ------------------------------------------------------------

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The structure as a networkx MultiDiGraph (built on first use, then kept current)."""
        if self._nx is None:
            import networkx as nx

            graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
            for what, ends, attributes in self._structure:
                _add_to(graph, what, ends, attributes)
            self._nx = graph
        return self._nx

    def _add_to_structure(
        self, what: str, ends: tuple[str, ...], attributes: dict[str, Any]
    ) -> None:
        self._structure.append((what, ends, attributes))
        for name in ends:
            self._mentioned.setdefault(name, None)
        if what == "edge":
            self._successors.setdefault(ends[0], []).append(ends[1])
        if self._nx is not None:
            _add_to(self._nx, what, ends, attributes)

    def successors(self) -> dict[str, list[str]]:
        """Every edge's target by source (any kind of edge; one entry per edge)."""
        return self._successors

    # -- nodes ----------------------------------------------------------------

    def add_node(
        self,
        name: str | Callable[..., Any],
        fn: Callable[..., Any] | CompiledGraph[Any, Any, Any, Any] | None = None,
        *,
        retry: RetryPolicy | None = None,
        destinations: Sequence[str] | None = None,
        defer: bool = False,
        input_schema: type[Any] | None = None,
        cache_policy: CachePolicy | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        metadata: dict[str, Any] | None = None,
        **unknown: Never,  # a checker flags any other keyword; the run names our spelling
    ) -> Self:
        """Add a node: `add_node("name", fn)` or `add_node(fn)` (named after the function).

        `destinations` declares where the node's `Command(goto=...)` may lead,
        for validation and diagrams; without it, a `-> Command[Literal["a",
        "b"]]` return hint does. `defer=True` holds the node back, once
        triggered, until no other task is left to run: the join after
        branches of different lengths. The node sees the state as its first
        parameter's type when that is another TypedDict or pydantic model
        (or as `input_schema`): only that type's fields, private keys
        included. A parameter named `config`, `runtime`, `store` or `writer`
        after the state is filled by the engine (see `get_config`,
        `Runtime`). `cache_policy` reuses the writes of an earlier call with
        the same input, in a graph compiled with `cache=`. `retry_policy=`
        (LangGraph's name for `retry=`) and `metadata` are taken as LangGraph
        takes them; the metadata is kept on the node in `g.graph`.
        """
        if unknown:
            raise unknown_keyword("add_node", unknown, spellings.ADD_NODE)
        retries = retry_policies(name, retry, retry_policy)
        if fn is None:
            if not callable(name):
                raise GraphValidationError(
                    f"add_node({name!r}) needs a function: add_node({name!r}, fn)", node=str(name)
                )
            fn, name = name, getattr(name, "__name__", type(name).__name__)
        if not isinstance(name, str) or not name:
            raise GraphValidationError(f"A node name must be a non-empty string, not {name!r}")
        if name in _RESERVED:
            raise GraphValidationError(
                f"'{name}' is reserved for the graph's entry/exit; choose another node name",
                node=name,
            )
        if self._is_node(name):
            raise GraphValidationError(
                f"Node '{name}' is already in the graph; node names must be unique", node=name
            )
        if hasattr(fn, "as_node") and hasattr(fn, "graph"):
            fn = fn.as_node(self.state)  # a compiled graph used as a node
        if not callable(fn):
            raise GraphValidationError(
                f"Node '{name}' must be callable (a function of the state), "
                f"not {type(fn).__name__}",
                node=name,
            )
        if destinations is None:
            destinations = _command_targets(fn)
        input_type = input_schema if input_schema is not None else _input_type(fn)
        view = None if input_type is None else self.state.viewer(input_type)
        if view == self.state.view:
            view = None
        spec = self._spec(
            name, fn, retries, tuple(destinations), view, defer, cache_policy, metadata
        )
        self._specs[name] = spec
        attributes = {"spec": spec, "kind": spec.kind}
        if metadata is not None:
            attributes["metadata"] = dict(metadata)
        self._add_to_structure("node", (name,), attributes)
        for target in spec.destinations:
            self._add_to_structure("edge", (name, target), {"kind": "command"})
        return self

    def _spec(
        self,
        name: str,
        fn: Callable[..., Any],
        retries: tuple[RetryPolicy, ...],
        destinations: tuple[str, ...],
        view: Callable[[dict[str, Any]], Any] | None = None,
        defer: bool = False,
        cache_policy: CachePolicy | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> NodeSpec:
        kind = getattr(fn, "node_kind", "function")
        is_async = _is_async_callable(fn)
        asked = injected_parameters(fn)  # read once here: a node asking for none costs nothing
        if asked:
            fn = with_injections(fn, asked, is_async=is_async)
        return NodeSpec(
            name,
            fn,
            is_async,
            retries,
            destinations,
            kind,
            view,
            defer,
            cache_policy,
            dict(metadata) if metadata else None,
        )

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> Self:
        """Add nodes that run one after another, with edges between them."""
        names = []
        for item in nodes:
            if isinstance(item, tuple):
                self.add_node(item[0], item[1])
                names.append(item[0])
            else:
                self.add_node(item)
                names.append(getattr(item, "__name__", type(item).__name__))
        for a, b in itertools.pairwise(names):
            self.add_edge(a, b)
        return self

    # -- edges ----------------------------------------------------------------

    def add_edge(self, start: str | Sequence[str], end: str) -> Self:
        """Run `end` after `start`; with a list of starts, after all of them have finished."""
        if isinstance(start, str):
            if start == END:
                raise GraphValidationError("END has no way out; an edge cannot start at END")
            if end == START:
                raise GraphValidationError("An edge cannot lead into START", node=start)
            self._edges.append((start, end))
            self._add_to_structure("edge", (start, end), {"kind": "direct"})
            return self
        sources = frozenset(start)
        if not sources:
            raise GraphValidationError(f"add_edge([], {end!r}) needs at least one start node")
        if START in sources or END in sources:
            raise GraphValidationError("A join edge cannot wait for START or END", node=end)
        self.joins.append((sources, end))
        for source in sorted(sources):
            self._add_to_structure("edge", (source, end), {"kind": "join"})
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | str | None = None,
    ) -> Self:
        """After `source`, run the node(s) `path(state)` names (or `Send`s it returns).

        `path_map` maps the values `path` returns to node names (a list, or
        one name, maps each name to itself); without it, a `Literal[...]`
        return hint tells validation and diagrams where the branch may go.
        """
        if not callable(path):
            raise GraphValidationError(
                f"The path of a conditional edge from '{source}' must be callable", node=source
            )
        mapping: Mapping[Hashable, str] | None
        if path_map is None:
            path_map = getattr(path, "destinations", None)  # e.g. a Router names its routes
        if path_map is None:
            mapping = None
            targets = _literal_targets(path)
            labels: Sequence[tuple[str, str]] = [(t, t) for t in targets or ()]
        else:
            mapping = _path_map(path_map)
            targets = tuple(dict.fromkeys(mapping.values()))
            labels = [(str(k), v) for k, v in mapping.items()]
        is_async = _is_async_callable(path)
        asked = injected_parameters(path)
        if asked:  # e.g. `def route(state, config)`: read once here, filled at each call
            path = with_injections(path, asked, is_async=is_async)
        branch = Branch(source, path, mapping, is_async, targets)
        self.branches.append(branch)
        for label, target in labels:
            self._add_to_structure(
                "edge", (source, target), {"kind": "conditional", "label": label}
            )
        return self

    # -- LangGraph's shorthands ---------------------------------------------------

    def set_entry_point(self, node: str) -> Self:
        """Start runs at `node`: `add_edge(START, node)`."""
        return self.add_edge(START, node)

    def set_conditional_entry_point(
        self,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | str | None = None,
    ) -> Self:
        """Start runs where `path(state)` says: `add_conditional_edges(START, path, path_map)`."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, node: str) -> Self:
        """End the run after `node`: `add_edge(node, END)`."""
        return self.add_edge(node, END)

    # -- compile --------------------------------------------------------------

    def compile(
        self,
        checkpointer: Any = None,
        *,
        interrupt_before: Sequence[str] | Literal["*"] = (),
        interrupt_after: Sequence[str] | Literal["*"] = (),
        budget: Budget | None = None,
        name: str | None = None,
        store: Any = None,
        cache: BaseCache | None = None,
        **unknown: Never,  # a checker flags any other keyword; the run names our spelling
    ) -> CompiledGraph[StateT, ContextT, InputT, OutputT]:
        """Validate the graph and return the runnable app; a broken graph raises here.

        `store` is the long-term store (a `flowgraph.store.BaseStore`) every
        run hands to nodes that take a `store` (or `runtime`) parameter and to
        tools that ask with `InjectedStore`. `cache` (e.g. `InMemoryCache()`)
        keeps the writes of nodes added with a `cache_policy`. `interrupt_before="*"`
        (or after) pauses around every node, as in LangGraph.
        """
        # the facade (and the engine under it) loads with the first compile, not with import
        from flowgraph.graph._compiled import CompiledGraph
        from flowgraph.graph._definition.validation import validate

        if unknown:
            raise unknown_keyword("compile", unknown, spellings.COMPILE)
        spec = self.spec()
        if interrupt_before == "*":
            interrupt_before = tuple(spec.nodes)
        if interrupt_after == "*":
            interrupt_after = tuple(spec.nodes)
        validate(spec, interrupt_before=interrupt_before, interrupt_after=interrupt_after)
        return CompiledGraph(
            spec,
            self,
            checkpointer=checkpointer,
            interrupt_before=tuple(interrupt_before),
            interrupt_after=tuple(interrupt_after),
            budget=budget,
            name=name or str(getattr(self.schema, "__name__", "graph")),
            store=store,
            cache=cache,
        )

    def spec(self) -> GraphSpec:
        """The definition as it stands, frozen: what validation and the engine read."""
        return GraphSpec(
            nodes=self.nodes,
            edges=tuple(self._edges),
            branches=tuple(self.branches),
            joins=tuple(self.joins),
            successors={k: tuple(v) for k, v in self._successors.items()},
            state=self.state,
            schema=self.schema,
            context_schema=self.context_schema,
        )

    # -- read by validation and the plan ---------------------------------------

    def _is_node(self, name: str) -> bool:
        """True for an added node (an edge may name a node before it is added)."""
        return name in self._specs

    @property
    def nodes(self) -> dict[str, NodeSpec]:
        """The user's nodes by name (START and END excluded), in networkx's node order."""
        specs = self._specs
        return {n: specs[n] for n in self._mentioned if n in specs}

    def direct_edges(self) -> list[tuple[str, str]]:
        """Plain edges in the order they were added."""
        return list(self._edges)


def _add_to(
    graph: nx.MultiDiGraph[str], what: str, ends: tuple[str, ...], attributes: dict[str, Any]
) -> None:
    if what == "node":
        graph.add_node(ends[0], **attributes)
    else:
        graph.add_edge(ends[0], ends[1], **attributes)
