"""Test-only: widen the protocol's windows by pausing around a checkpointer's storage calls.

The lease protocol has windows between its storage calls (a run reads the
head, later writes its input with the lease; a keeper renews; a last step
writes and gives the lease back). A race that needs another process's whole
turn to fit into one of them is rare by luck, so the tests make it common:

- `jitter`: each call pauses before and after with probability `p`, for up
  to `max_s` (seeded, so a failing trial can be run again), which the
  history checker's trials use to explore many orderings;
- `gates`: the n-th call of a method stops before or after it until the test
  says go (`<name>.at` appears, the call waits for `<name>.go`), which pins
  one ordering exactly: a named window test.

Only the instance's methods are wrapped, so the store's class (and with it
`writes_leases_with_steps`, which decides the one-write paths) is untouched.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flowgraph.checkpoint.base import BaseCheckpointer

STORAGE_CALLS = (
    "head",
    "head_and_pending",
    "get",
    "chain",
    "pending",
    "put",
    "put_and_acquire",
    "put_and_release",
    "put_pending",
    "acquire_lease",
    "renew_lease",
    "release_lease",
    "read_lease",
)
"""The calls the engine makes on a store: every window lies between two of them."""


class GateTimeout(RuntimeError):
    """A gate waited longer than its limit for the test's go."""


def wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise GateTimeout(f"{path} did not appear within {timeout:g} s")
        time.sleep(0.001)


def widen(
    store: BaseCheckpointer,
    *,
    jitter: tuple[float, float, int] | None = None,
    gates: dict[str, str] | None = None,
    on_call: Callable[[str, str], None] | None = None,
) -> BaseCheckpointer:
    """Wrap `store`'s storage calls; returns `store`.

    `jitter`: (probability, max seconds, seed). `gates`: `"method:before:n"` or
    `"method:after:n"` (n counts that method's calls in this process from 0) ->
    a path prefix. `on_call(method, when)`: called at each point (the kill hooks).
    """
    rng = random.Random(jitter[2]) if jitter else None
    lock = threading.Lock()
    calls: dict[str, int] = {}

    def pause(method: str, when: str, number: int) -> None:
        if on_call is not None:
            on_call(method, when)
        if gates:
            prefix = gates.get(f"{method}:{when}:{number}")
            if prefix is not None:
                Path(prefix + ".at").touch()
                wait_for(Path(prefix + ".go"))
        if rng is not None and jitter is not None:
            with lock:
                delay = rng.uniform(0, jitter[1]) if rng.random() < jitter[0] else 0.0
            if delay:
                time.sleep(delay)

    def wrap(method: str, call: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(call)
        def widened(*args: Any, **kwargs: Any) -> Any:
            with lock:
                number = calls.get(method, 0)
                calls[method] = number + 1
            pause(method, "before", number)
            result = call(*args, **kwargs)
            pause(method, "after", number)
            return result

        return widened

    for method in STORAGE_CALLS:
        setattr(store, method, wrap(method, getattr(store, method)))
    return store
