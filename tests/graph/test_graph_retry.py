"""RetryPolicy: what is retried, how long it waits, and that failed attempts leave nothing."""

from __future__ import annotations

import dataclasses
import operator
import threading
import time
from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field

from flowgraph import END, START, MessagesState, RetryPolicy, StateGraph
from flowgraph.errors import (
    AuthenticationError,
    BadRequestError,
    InvalidUpdateError,
    ModelConnectionError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)


class State(MessagesState):
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0


def fast(**kwargs: Any) -> RetryPolicy:
    return RetryPolicy(initial_interval=0.001, jitter=False, **kwargs)


class Flaky:
    """A node that raises `errors` in turn, then returns `update`; counts its calls."""

    def __init__(self, errors: list[BaseException], update: Any = None) -> None:
        self.errors = list(errors)
        self.update = update if update is not None else {"notes": ["ok"]}
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, state: State) -> Any:
        with self.lock:
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
        return self.update


def single(node: Any, retry: RetryPolicy | None) -> Any:
    g = StateGraph(State)
    g.add_node("flaky", node, retry=retry)
    g.add_edge(START, "flaky").add_edge("flaky", END)
    return g.compile()


def http_status_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://model.test/v1/chat/completions")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(f"HTTP {status}", request=request, response=response)


# ------------------------------------------------------------------ the policy itself


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionError("reset"),
        TimeoutError("slow"),
        RateLimitError("429", status_code=429),
        ServerError("502", status_code=502),
        ModelTimeoutError("timeout"),
        ModelConnectionError("refused"),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        http_status_error(429),
        http_status_error(503),
    ],
    ids=lambda e: type(e).__name__,
)
def test_default_policy_retries_transient_errors(exc: BaseException) -> None:
    assert RetryPolicy().should_retry(exc)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bug"),
        TypeError("bug"),
        KeyError("bug"),
        ZeroDivisionError(),
        BadRequestError("400", status_code=400),
        AuthenticationError("401", status_code=401),
        http_status_error(404),
        InvalidUpdateError("bad update", node="n", key="k"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_default_policy_does_not_retry_bugs_or_client_errors(exc: BaseException) -> None:
    assert not RetryPolicy().should_retry(exc)


def test_retry_on_type_tuple_and_predicate() -> None:
    assert RetryPolicy(retry_on=KeyError).should_retry(KeyError("k"))
    assert not RetryPolicy(retry_on=KeyError).should_retry(ConnectionError())
    both = RetryPolicy(retry_on=(KeyError, ValueError))
    assert both.should_retry(ValueError()) and both.should_retry(KeyError())
    assert not both.should_retry(TypeError())
    predicate = RetryPolicy(retry_on=lambda e: "again" in str(e))
    assert predicate.should_retry(RuntimeError("try again"))
    assert not predicate.should_retry(RuntimeError("give up"))


def test_delay_backs_off_exponentially_up_to_max_interval() -> None:
    policy = RetryPolicy(initial_interval=0.5, backoff=2.0, max_interval=3.0, jitter=False)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_delay_jitter_stays_within_a_quarter_above() -> None:
    policy = RetryPolicy(initial_interval=1.0, backoff=1.0, jitter=True)
    delays = [policy.delay(1) for _ in range(200)]
    assert all(1.0 <= d <= 1.25 for d in delays)
    assert len(set(delays)) > 1


def test_delay_honours_retry_after() -> None:
    policy = RetryPolicy(initial_interval=0.5, max_interval=2.0, jitter=False)
    assert policy.delay(1, RateLimitError("429", retry_after=7.0)) == 7.0
    assert policy.delay(2, RateLimitError("429", retry_after=0.1)) == 1.0  # backoff is longer
    assert policy.delay(1, RateLimitError("429")) == 0.5
    assert policy.delay(1, ConnectionError()) == 0.5


def test_policy_is_frozen_and_validated() -> None:
    policy = RetryPolicy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_attempts = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(TypeError):
        RetryPolicy(3)  # type: ignore[misc]  # keyword-only


# ------------------------------------------------------------------ in a graph


@pytest.mark.parametrize(
    "exc",
    [ConnectionError("reset"), RateLimitError("429"), ServerError("503")],
    ids=lambda e: type(e).__name__,
)
def test_transient_error_is_retried_until_it_succeeds(exc: BaseException) -> None:
    node = Flaky([exc, exc])
    out = single(node, fast(max_attempts=3)).invoke({})
    assert node.calls == 3
    assert out.notes == ["ok"]


def test_gives_up_after_max_attempts_with_the_original_error() -> None:
    node = Flaky([ConnectionError(f"reset {i}") for i in range(5)])
    with pytest.raises(ConnectionError, match="reset 3") as info:
        single(node, fast(max_attempts=4)).invoke({})
    assert node.calls == 4
    assert any("'flaky'" in note and "attempt 4" in note for note in info.value.__notes__)


@pytest.mark.parametrize("exc", [ValueError("bug"), TypeError("bug")], ids=["Value", "Type"])
def test_programming_errors_are_not_retried(exc: BaseException) -> None:
    node = Flaky([exc])
    with pytest.raises(type(exc)):
        single(node, fast(max_attempts=5)).invoke({})
    assert node.calls == 1


def test_without_a_policy_nothing_is_retried() -> None:
    node = Flaky([ConnectionError()])
    with pytest.raises(ConnectionError):
        single(node, None).invoke({})
    assert node.calls == 1


@pytest.mark.parametrize(
    "retry_on",
    [KeyError, (KeyError, ValueError), lambda e: isinstance(e, KeyError)],
    ids=["type", "tuple", "predicate"],
)
def test_custom_retry_on(retry_on: Any) -> None:
    node = Flaky([KeyError("once")])
    assert single(node, fast(retry_on=retry_on)).invoke({}).notes == ["ok"]
    assert node.calls == 2
    other = Flaky([ConnectionError("not listed")])
    with pytest.raises(ConnectionError):
        single(other, fast(retry_on=retry_on)).invoke({})
    assert other.calls == 1


def test_failed_attempts_writes_are_discarded() -> None:
    attempts: list[int] = []

    def node(state: State) -> dict[str, Any]:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:  # notes is fine, count is not: the whole update goes
            return {"notes": ["attempt 1"], "count": "not a number"}
        return {"notes": [f"attempt {len(attempts)}"], "count": len(attempts)}

    out = single(node, fast(retry_on=InvalidUpdateError)).invoke({"notes": ["in"]})
    assert attempts == [1, 2]
    assert out.notes == ["in", "attempt 2"]
    assert out.count == 2


def test_retry_does_not_rerun_siblings() -> None:
    flaky = Flaky([ConnectionError(), ConnectionError()], {"notes": ["flaky"]})
    steady = Flaky([], {"notes": ["steady"]})
    g = StateGraph(State)
    g.add_node("flaky", flaky, retry=fast())
    g.add_node("steady", steady)
    g.add_edge(START, "flaky").add_edge(START, "steady")
    g.add_edge("flaky", END).add_edge("steady", END)
    out = g.compile().invoke({})
    assert (flaky.calls, steady.calls) == (3, 1)
    assert out.notes == ["flaky", "steady"]


def test_async_node_is_retried() -> None:
    calls = 0

    async def node(state: State) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ServerError("503")
        return {"count": calls}

    assert single(node, fast()).invoke({}).count == 3


def test_retry_waits_for_retry_after() -> None:
    node = Flaky([RateLimitError("429", retry_after=0.05)])
    started = time.monotonic()
    single(node, fast(max_interval=0.001)).invoke({})
    assert time.monotonic() - started >= 0.05
    assert node.calls == 2


def test_a_retry_after_longer_than_max_retry_after_is_not_waited_for() -> None:
    policy = RetryPolicy(max_retry_after=5.0)
    assert policy.should_retry(RateLimitError("429", retry_after=4.0))
    assert not policy.should_retry(RateLimitError("429", retry_after=3600.0))
    node = Flaky([RateLimitError("429", retry_after=3600.0)])
    with pytest.raises(RateLimitError):
        single(node, fast(max_retry_after=0.5)).invoke({})
    assert node.calls == 1


# ------------------------------------------------------------------ several policies


class Busy(Exception):
    pass


class Throttled(Exception):
    pass


def test_several_policies_the_first_that_takes_the_error_applies() -> None:
    """LangGraph's `retry_policy=[p1, p2]`: each failure is retried by the first policy
    whose retry_on takes it, with that policy's limit, counting every attempt so far."""
    policies = [fast(max_attempts=2, retry_on=Busy), fast(max_attempts=4, retry_on=Throttled)]

    def graph(node: Flaky) -> Any:
        g = StateGraph(State)
        g.add_node("flaky", node, retry_policy=policies)
        g.add_edge(START, "flaky")
        return g.compile()

    node = Flaky([Busy(), Throttled(), Throttled()])
    assert graph(node).invoke({}).notes == ["ok"]
    assert node.calls == 4
    node = Flaky([Throttled(), Busy()])  # Busy's policy allows 2 attempts: the 2nd was it
    with pytest.raises(Busy):
        graph(node).invoke({})
    assert node.calls == 2
    node = Flaky([ValueError("no policy takes it"), Busy()])
    with pytest.raises(ValueError, match="no policy"):
        graph(node).invoke({})
    assert node.calls == 1
    spec = graph(node).spec.nodes["flaky"]
    assert spec.retries == tuple(policies)
    assert spec.retry is policies[0]
    assert spec.retry_for(Throttled()) is policies[1]
    assert spec.retry_for(KeyError()) is None
