"""`RetryPolicy()` retries what LangGraph's default retries (issue 18, item 9).

An exception class of the application's own is retried; Python's
programming errors are not. Same program, same attempt counts, in both.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from typing_extensions import TypedDict

from flowgraph import AuthenticationError, BudgetExceededError, RetryPolicy
from tests.compat._libs import Lib


class UpstreamBusy(Exception):
    """What a flaky service's client library raises."""


class Log(TypedDict):
    result: str


def flaky_app(lib: Lib, failures: list[BaseException]) -> tuple[Any, list[int]]:
    attempts: list[int] = []

    def call_service(state: Log) -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) <= len(failures):
            raise failures[len(attempts) - 1]
        return {"result": f"ok after {len(attempts)}"}

    policy = lib.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)
    # the README's table: LangGraph's retry_policy= is flowgraph's retry=
    option = {"retry": policy} if lib.name == "flowgraph" else {"retry_policy": policy}
    graph = lib.StateGraph(Log)
    graph.add_node("call_service", call_service, **option)
    graph.add_edge(lib.START, "call_service")
    return graph.compile(), attempts


def test_an_exception_of_your_own_is_retried(lib: Lib) -> None:
    app, attempts = flaky_app(lib, [UpstreamBusy("busy"), UpstreamBusy("still busy")])
    assert app.invoke({"result": ""}) == {"result": "ok after 3"}
    assert len(attempts) == 3


@pytest.mark.parametrize("error", [ValueError("bad"), KeyError("k"), ZeroDivisionError()])
def test_programming_errors_are_not_retried(lib: Lib, error: Exception) -> None:
    app, attempts = flaky_app(lib, [error])
    with pytest.raises(type(error)):
        app.invoke({"result": ""})
    assert len(attempts) == 1


def test_connection_errors_are_retried(lib: Lib) -> None:
    app, attempts = flaky_app(lib, [ConnectionError("reset")])
    assert app.invoke({"result": ""}) == {"result": "ok after 2"}
    assert len(attempts) == 2


def http_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "http://service.test/")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(str(status), request=request, response=response)


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (UpstreamBusy(), True),
        (http_error(503), True),
        (http_error(404), False),
        (OSError("disk full"), False),
        (AuthenticationError("401", status_code=401), False),
        (BudgetExceededError("spent", limit_name="max_model_calls", limit=1, used=1), False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else str(value),
)
def test_the_default_split(error: BaseException, retried: bool) -> None:
    assert RetryPolicy().should_retry(error) is retried
