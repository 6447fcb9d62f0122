"""How a call of `invoke` or `stream` becomes one run, and what the run returns.

`CompiledGraph` inherits `RunCalls`: it checks the keywords every run
method takes (the same for `invoke`, `ainvoke`, `stream` and `astream`),
merges LangGraph's `config` dict into them, starts the engine's run and
shapes its result (`_streams.RunKeywords` lists those keywords for the methods'
typed overloads); `v3_modes` checks those of `stream_events`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from flowgraph.graph._config import merged_config, read_config
from flowgraph.graph._core.interrupt import with_interrupts
from flowgraph.graph._core.types import Budget, StreamMode, StreamPart
from flowgraph.graph._engine.execute import execute
from flowgraph.graph._engine.setup import RunOptions
from flowgraph.graph._events import V3_MODES

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._core.spec import GraphSpec
    from flowgraph.graph._engine.run import Engine, Run
    from flowgraph.graph._streams import Invoked
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["RunCalls", "v3_modes"]


def v3_modes(version: str, options: Mapping[str, Any]) -> list[StreamMode]:
    """The modes `stream_events(version="v3")` streams (it always streams its subgraphs)."""
    if version != "v3":
        raise ValueError(
            f"stream_events(version={version!r}): flowgraph has LangGraph's version='v3' "
            "run stream; for node and model events use stream(..., mode='events')"
        )
    for name in ("stream_mode", "subgraphs", "mode"):
        if name in options:
            raise TypeError(f"stream_events(version='v3') takes no {name}=: it sets it")
    return list(V3_MODES)


def _names(nodes: Sequence[str]) -> frozenset[str]:
    return frozenset(nodes) if nodes else _NO_NAMES  # most runs name none: nothing to build


_NO_NAMES: frozenset[str] = frozenset()


class RunCalls:
    """A call's keywords, checked, as one run's `RunOptions`; the run; what it returns."""

    spec: GraphSpec
    engine: Engine
    checkpointer: BaseCheckpointer | None
    budget: Budget | None
    interrupt_before: tuple[str, ...]
    interrupt_after: tuple[str, ...]
    store: Any
    name: str
    _cache: ThreadCache | None
    _bound_config: Mapping[str, Any] | None = None
    """What `with_config` put under every run's config (None: nothing)."""

    def with_config(self, config: Mapping[str, Any] | None = None, **values: Any) -> Self:
        """This graph with `config` (and `values`, as its keys) under every run's config.

        As LangGraph's: a call's own config wins key by key, and the `configurable`
        dicts merge (a call's thread id with a bound user id). The graph itself is
        shared, not copied: the same nodes, checkpointer and caches.
        """
        added = {**(config or {}), **values}
        clone = copy.copy(self)
        clone._bound_config = merged_config(self._bound_config, added)
        return clone

    def _options(
        self,
        *,
        thread_id: str | None,
        checkpoint_id: str | None,
        recursion_limit: int,
        budget: Budget | None,
        interrupt_before: Sequence[str] | None,
        interrupt_after: Sequence[str] | None,
        inline_sync: bool,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        sink: Callable[[StreamPart], None] | None = None,
        modes: frozenset[str] = frozenset(),
        rerun_tool_calls: bool = False,
    ) -> RunOptions:
        every = tuple(self.engine.plan.nodes)  # "*": around every node, as in LangGraph
        interrupt_before = every if interrupt_before == "*" else interrupt_before
        interrupt_after = every if interrupt_after == "*" else interrupt_after
        for name in (*(interrupt_before or ()), *(interrupt_after or ())):
            if name not in self.engine.plan.nodes:
                raise ValueError(f"interrupt_before/after names '{name}', which is not a node")
        return RunOptions(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget if budget is not None else self.budget,
            inline_sync=inline_sync,
            sink=sink,
            modes=modes,
            interrupt_before=_names(
                self.interrupt_before if interrupt_before is None else interrupt_before
            ),
            interrupt_after=_names(
                self.interrupt_after if interrupt_after is None else interrupt_after
            ),
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
        )

    def _configure(
        self,
        options: RunOptions,
        config: Mapping[str, Any] | None,
        context: Any,
        configurable: Mapping[str, Any] | None,
    ) -> None:
        """Merge LangGraph's `config` dict, `configurable=` and `context=` into `options`.

        A plain run (none of them, no thread, nothing bound) pays nothing for them.
        """
        if (
            config is None
            and context is None
            and not configurable
            and options.thread_id is None
            and self._bound_config is None
        ):
            return
        if self._bound_config is not None:
            config = merged_config(self._bound_config, config)
        call = read_config(
            config,
            thread_id=options.thread_id,
            checkpoint_id=options.checkpoint_id,
            recursion_limit=options.recursion_limit,
            run_id=options.run_id,
            configurable=configurable,
            context=context,
            context_schema=self.spec.context_schema,
        )
        options.thread_id, options.checkpoint_id = call.thread_id, call.checkpoint_id
        options.recursion_limit, options.run_id = call.recursion_limit, call.run_id
        options.info = call.info

    # -- the run a call starts, and what it returns -----------------------------

    def _run(self, input: Any, options: RunOptions) -> Coroutine[Any, Any, Run]:
        """One run, start to end: the engine's coroutine (`_engine.execute`), which the
        caller awaits or the sync bridge runs, so no facade code sits between them."""
        return execute(
            self.engine,
            self.checkpointer,
            self._input(input),
            options,
            cache=self._cache,
            store=self.store,
            name=self.name,
        )

    def _input(self, input: Any) -> Any:
        """The caller's input as the graph takes it (the functional API wraps it)."""
        return input

    def _output(self, run: Run) -> Any:
        """A finished run's state as `invoke` returns it, with its interrupts if it paused."""
        out = self.engine.state.output(run.values)
        if run.interrupts:
            out = with_interrupts(out, run.interrupts)
        return out

    def _returned(self, invoked: Invoked, run: Run) -> Any:
        """What `invoke` returns: the state (v1, see `_output`) or a `GraphOutput` (v2)."""
        if invoked.version == "v1":
            return self._output(run)
        return invoked.final(self.engine.state.output(run.values), tuple(run.interrupts))
