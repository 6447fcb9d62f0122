"""Every ModelError over real HTTP, retries counted, streams cut: the same sync and async."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from flowgraph.errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from flowgraph.models import (
    ChatModelListener,
    ModelErrorEvent,
    OpenAIChatModel,
    StreamingHandler,
)
from flowgraph.models._http import parse_retry_after, retry_delay

from ._loopback import LoopbackServer, Reply, free_port, sse
from .conftest import Runner
from .test_openai import completion, model_for

OPENAI_ERROR = {"error": {"message": "Invalid 'messages': empty.", "type": "invalid_request_error"}}


def error(status: int, message: str = "nope", **kw: Any) -> Reply:
    return Reply.json({"error": {"message": message, "type": "x"}}, status=status, **kw)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, PermissionDeniedError),
        (404, NotFoundError),
        (422, BadRequestError),
        (402, ModelError),
    ],
)
def test_client_errors_map_to_their_class_carry_the_provider_message_and_are_not_retried(
    server: LoopbackServer, runner: Runner, status: int, cls: type[ModelError]
) -> None:
    server.replies = [Reply.json(OPENAI_ERROR, status=status)]
    with pytest.raises(cls) as caught:
        runner.invoke(model_for(server), "hi")
    assert type(caught.value) is cls
    assert caught.value.status_code == status
    assert caught.value.provider_message == "Invalid 'messages': empty."
    assert "Invalid 'messages': empty." in str(caught.value)
    assert len(server.requests) == 1


def test_authentication_errors_say_what_to_check(server: LoopbackServer) -> None:
    server.replies = [error(401, "Incorrect API key provided")]
    with model_for(server) as model, pytest.raises(AuthenticationError, match="api_key"):
        model.invoke("hi")


def test_a_rate_limit_is_retried_after_the_servers_retry_after(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [
        error(429, headers={"retry-after": "0.05"}),
        error(429, headers={"retry-after-ms": "50"}),
        Reply.json(completion("finally")),
    ]
    started = time.perf_counter()
    assert runner.invoke(model_for(server, backoff=5), "hi").text == "finally"
    assert len(server.requests) == 3
    assert 0.1 <= time.perf_counter() - started < 2  # waited as told, not the 5 s backoff


def test_rate_limits_beyond_max_retries_raise_with_retry_after(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [error(429, "slow down", headers={"retry-after": "0"})]
    with pytest.raises(RateLimitError) as caught:
        runner.invoke(model_for(server, max_retries=3), "hi")
    assert len(server.requests) == 4
    assert caught.value.retry_after == 0
    assert caught.value.provider_message == "slow down"


def test_a_retry_after_longer_than_a_minute_is_not_waited_for(server: LoopbackServer) -> None:
    server.replies = [error(429, headers={"retry-after": "3600"})]
    with model_for(server) as model, pytest.raises(RateLimitError) as caught:
        model.invoke("hi")
    assert caught.value.retry_after == 3600
    assert len(server.requests) == 1


def test_server_errors_are_retried_then_raised(server: LoopbackServer, runner: Runner) -> None:
    server.replies = [error(500, "boom")]
    with pytest.raises(ServerError, match="boom") as caught:
        runner.invoke(model_for(server), "hi")
    assert caught.value.status_code == 500
    assert len(server.requests) == 3  # the first attempt and max_retries=2


def test_a_server_error_then_success_returns_the_reply(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [
        error(503),
        Reply(status=502, body=b"<html>bad gateway</html>"),
        Reply.json(completion()),
    ]
    assert runner.invoke(model_for(server), "hi").text == "Hello!"
    assert len(server.requests) == 3


def test_max_retries_zero_makes_one_attempt(server: LoopbackServer) -> None:
    server.replies = [error(503)]
    with model_for(server, max_retries=0) as model, pytest.raises(ServerError):
        model.invoke("hi")
    assert len(server.requests) == 1


def test_a_timeout_raises_model_timeout_error_after_retries(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(completion(), delay=1.0)]
    with pytest.raises(ModelTimeoutError) as caught:
        runner.invoke(model_for(server, timeout=0.1, max_retries=1), "hi")
    assert isinstance(caught.value, TimeoutError)
    assert "read timeout" in str(caught.value)
    deadline = time.monotonic() + 3
    while len(server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(server.requests) == 2


def test_a_refused_connection_raises_model_connection_error(runner: Runner) -> None:
    model = OpenAIChatModel("m", base_url=f"http://127.0.0.1:{free_port()}/v1", backoff=0)
    with pytest.raises(ModelConnectionError, match="check base_url") as caught:
        runner.invoke(model, "hi")
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


def test_a_body_that_is_not_json_is_malformed(server: LoopbackServer, runner: Runner) -> None:
    server.replies = [Reply(body=b"<html>proxy login</html>", content_type="text/html")]
    with pytest.raises(MalformedResponseError, match="proxy login"):
        runner.invoke(model_for(server), "hi")
    assert len(server.requests) == 1


def test_a_completion_without_choices_is_malformed(server: LoopbackServer) -> None:
    server.replies = [Reply.json({"id": "x", "object": "chat.completion"})]
    with model_for(server) as model, pytest.raises(MalformedResponseError, match="choices"):
        model.invoke("hi")


def test_an_error_sent_with_status_200_is_raised(server: LoopbackServer) -> None:
    server.replies = [Reply.json({"error": {"message": "context too long", "code": 400}})]
    with model_for(server) as model, pytest.raises(BadRequestError, match="context too long"):
        model.invoke("hi")


HALF = sse(
    {"id": "c", "choices": [{"index": 0, "delta": {"content": "Hel"}}]},
    {"id": "c", "choices": [{"index": 0, "delta": {"content": "lo"}}]},
    done=False,
)


def test_a_stream_cut_mid_way_raises_and_returns_no_half_message(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply(pieces=[HALF, b"data: {}\n\n"], cut_after=1)]
    with pytest.raises(ModelConnectionError):
        runner.invoke(model_for(server), "hi", handler=_Quiet())
    assert len(server.requests) == 1  # output had started: never retried


def test_a_stream_that_ends_before_done_is_an_error_not_a_short_reply(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply(pieces=[HALF])]
    with pytest.raises(ModelConnectionError, match=r"ended before data: \[DONE\]"):
        runner.stream(model_for(server), "hi")


def test_a_stream_cut_inside_a_line_is_an_error(server: LoopbackServer) -> None:
    server.replies = [Reply(pieces=[HALF + b'data: {"id": "c", "choi'])]
    with model_for(server) as model, pytest.raises(ModelConnectionError):
        list(model.stream("hi"))


def test_a_malformed_chunk_raises_malformed_response_error(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply(pieces=[HALF, b"data: {not json}\n\n"])]
    with pytest.raises(MalformedResponseError, match="not JSON"):
        runner.stream(model_for(server), "hi")


def test_an_error_event_before_any_output_is_retried_like_an_error_status(
    server: LoopbackServer, runner: Runner
) -> None:
    overloaded = sse({"error": {"message": "overloaded", "code": 503}}, done=False)
    good = sse(
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    )
    server.replies = [Reply(pieces=[overloaded]), Reply(pieces=[good])]
    assert sum(runner.stream(model_for(server, stream_usage=False), "hi")).text == "ok"
    assert len(server.requests) == 2


def test_an_error_event_after_output_is_raised_at_once(server: LoopbackServer) -> None:
    server.replies = [Reply(pieces=[HALF, sse({"error": {"message": "killed"}}, done=False)])]
    with model_for(server) as model, pytest.raises(ServerError, match="killed"):
        list(model.stream("hi"))
    assert len(server.requests) == 1


def test_listeners_hear_the_error_once_with_the_attempts(
    server: LoopbackServer, runner: Runner
) -> None:
    seen: list[ModelErrorEvent] = []

    class Listener(ChatModelListener):
        def on_error(self, event: ModelErrorEvent) -> None:
            seen.append(event)

    server.replies = [error(500)]
    with pytest.raises(ServerError):
        runner.invoke(model_for(server, listeners=[Listener()]), "hi")
    assert len(seen) == 1
    assert seen[0].attempts == 3
    assert isinstance(seen[0].error, ServerError)


def test_retry_after_parsing() -> None:
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    date = "Wed, 21 Oct 2015 07:28:00 GMT"  # in the past: wait nothing
    assert parse_retry_after({"retry-after": date}) == 0.0


def test_backoff_doubles_and_stops_at_max_retries() -> None:
    failure = ServerError("x", status_code=500)
    delays = [retry_delay(failure, attempt, 5, 0.5) for attempt in range(1, 7)]
    assert delays[-1] is None
    bounds = [(0.375, 0.5), (0.75, 1.0), (1.5, 2.0), (3.0, 4.0), (6.0, 8.0)]
    for delay, (low, high) in zip(delays, bounds, strict=False):
        assert delay is not None and low <= delay <= high
    assert retry_delay(BadRequestError("x", status_code=400), 1, 5, 0.5) is None


class _Quiet(StreamingHandler):
    """A handler that ignores everything; passing one makes invoke stream."""
