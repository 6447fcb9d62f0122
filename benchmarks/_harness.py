"""The shared measuring and reporting of every benchmark scenario.

A scenario is a function decorated with `@scenario(name)` that returns a
list of `Figure`s; each figure has flowgraph's value and, when LangGraph is
installed, LangGraph's value for the same work measured in the same run.
"""

from __future__ import annotations

import gc
import importlib.util
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SCENARIOS", "Figure", "has_langgraph", "median_seconds", "scenario"]


@dataclass(frozen=True)
class Figure:
    """One measured quantity; `lower_is_better` decides which way the ratio reads."""

    name: str
    unit: str
    ours: float
    theirs: float | None = None
    lower_is_better: bool = True
    target: float | None = None
    """The ratio the issue asks for (theirs/ours for times), when it sets one."""

    @property
    def ratio(self) -> float | None:
        """How many times better flowgraph is (>1 is better)."""
        if self.theirs is None or self.ours == 0 or self.theirs == 0:
            return None
        return self.theirs / self.ours if self.lower_is_better else self.ours / self.theirs


SCENARIOS: dict[str, Callable[[], list[Figure]]] = {}


def scenario(name: str) -> Callable[[Callable[[], list[Figure]]], Callable[[], list[Figure]]]:
    """Register a scenario under `name` for `python -m benchmarks [name-filter]`."""

    def register(fn: Callable[[], list[Figure]]) -> Callable[[], list[Figure]]:
        SCENARIOS[name] = fn
        return fn

    return register


def has_langgraph() -> bool:
    """True when LangGraph is importable (`pip install -e '.[bench]'`)."""
    return importlib.util.find_spec("langgraph") is not None


def median_seconds(
    fn: Callable[[], object],
    *,
    repeat: int = 20,
    setup: Callable[[], object] | None = None,
    warmup: int = 2,
) -> float:
    """Median wall time of `fn()` over `repeat` runs.

    `setup()` runs untimed before each run. The garbage collector is paused
    while `fn` runs and results are released after the clock stops, as
    `timeit` does, so a figure measures the work and not a collection that
    happened to fall inside it.
    """
    times = []
    for i in range(warmup + repeat):
        if setup is not None:
            setup()
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - start
        finally:
            if gc_was_enabled:
                gc.enable()
        del result
        if i >= warmup:
            times.append(elapsed)
    return statistics.median(times)
