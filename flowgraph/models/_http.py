"""httpx plumbing every HTTP adapter shares: clients, the exchange, errors and retries.

`HttpChatModel` owns its connections: a sync pool for threads and an async
pool per event loop (an async connection belongs to the loop that opened
it), created on first use and closed with the model (`close()`/`aclose()`
or `with`/`async with`). Keep-alive connections are reused; `limits` caps
how many are open at once (100 by default), so 1,000 concurrent calls share
at most 100 connections, and calls beyond that wait their turn without a
pool timeout. (`_pool` explains why a pool is made of small httpx clients.)

`http_source` is the exchange as effects (see `_call`): send, map an error
status to its `ModelError` (carrying the provider's own message; an answer
saying the request itself is malformed, whatever its status, is a
`BadRequestError`: see `_malformed`), retry 408,
409, 429 and 5xx answers and connection failures and timeouts with
exponential backoff -- honouring `retry-after-ms` and `Retry-After` up to
60 s -- for at most `max_retries` retries, then parse the body or the
stream. A stream is never retried once a chunk went out, and a stream that
ends before the provider's end marker raises instead of returning a short
reply.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import random
import ssl
import threading
import time
import weakref
from collections.abc import Generator, Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypedDict

import httpx

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
from flowgraph.messages import AIMessageChunk
from flowgraph.models._base import ChatModelListener, ChatOptions, logger
from flowgraph.models._call import (
    BaseChatModel,
    Call,
    CallState,
    Close,
    Effect,
    Open,
    Output,
    ReadBody,
    ReadChunk,
    Sleep,
    Source,
)
from flowgraph.models._framing import decode_json
from flowgraph.models._malformed import malformed_request
from flowgraph.models._pool import AsyncConnectionPool, ConnectionPool

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUT",
    "HttpChatModel",
    "HttpOptions",
    "StreamParser",
    "error_for_status",
    "parse_retry_after",
    "retry_delay",
]

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=5.0)
"""Connect within 5 s; 10 minutes for each read (long generations stream slowly)."""

DEFAULT_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=100, keepalive_expiry=30.0
)
"""At most 100 connections per model, all kept alive between calls."""

MAX_RETRY_AFTER = 60.0
"""A server asking to wait longer than this is not retried; the error carries `retry_after`."""

MAX_BACKOFF = 8.0

_RETRY_STATUSES = frozenset({408, 409, 429})

_STATUS_ERRORS: dict[int, tuple[type[ModelError], str]] = {
    400: (BadRequestError, ""),
    401: (AuthenticationError, "; check api_key= or the provider's API key variable"),
    403: (PermissionDeniedError, "; the key may not use this model or endpoint"),
    404: (NotFoundError, "; check the model name and base_url"),
    408: (ModelTimeoutError, ""),
    413: (BadRequestError, "; the request is too large"),
    422: (BadRequestError, ""),
    429: (RateLimitError, ""),
}


class HttpOptions(TypedDict, total=False):
    """The keyword arguments every HTTP adapter takes besides its own (see `HttpChatModel`)."""

    options: ChatOptions | None
    max_retries: int
    timeout: float | httpx.Timeout | None
    connect_timeout: float | None
    limits: httpx.Limits
    headers: Mapping[str, str] | None
    http_client: httpx.Client | None
    async_http_client: httpx.AsyncClient | None
    listeners: Sequence[ChatModelListener]
    streaming: bool
    backoff: float


class StreamParser(Protocol):
    """A provider's streaming format: body pieces in, chunks out."""

    def feed(self, data: bytes) -> list[AIMessageChunk]: ...

    def close(self) -> list[AIMessageChunk]:
        """Chunks still pending; raises when the stream ended before its end marker."""
        ...


# ---------------------------------------------------------------- errors


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return value if math.isfinite(value) and value >= 0 else None


def error_for_status(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    provider_message: str | None,
    *,
    where: str | None = None,
) -> ModelError:
    """The `ModelError` subclass for an HTTP error status, with the provider's own words.

    An answer that says the request itself is malformed (`malformed_request`:
    llama.cpp's 500 "Failed to parse tool call arguments as JSON", ...) is a
    `BadRequestError` whatever its status, so it is not retried; its message
    names the server (`where`, and the ``Server`` header when there is one),
    the problem, and what to do.
    """
    said = provider_message or body[:500].decode("utf-8", "replace").strip() or "(empty body)"
    phrase = httpx.codes.get_reason_phrase(status)
    malformed = malformed_request(status, provider_message, body)
    if malformed is not None:
        server = where or provider
        software = headers.get("server")
        if software:
            server = f"{server} (server: {software})"
        return BadRequestError(
            f"{server} refused the request: {malformed.problem} ({status} {phrase}: "
            f"{said.rstrip('.')}). {malformed.advice}",
            status_code=status,
            provider_message=provider_message,
        )
    cls, hint = _STATUS_ERRORS.get(status, (ServerError if status >= 500 else ModelError, ""))
    return cls(
        f"{provider} answered {status} {phrase}: {said}{hint}".replace("  ", " "),
        status_code=status,
        provider_message=provider_message,
        retry_after=parse_retry_after(headers),
    )


def is_retryable(error: ModelError) -> bool:
    """Worth another attempt: overload, rate limits, server failures, the network.

    Never a request the server refused as malformed (a `BadRequestError`, even
    with status 500): the same bytes would be refused the same way.
    """
    if isinstance(error, BadRequestError):
        return False
    status = error.status_code
    if status is not None:
        return status in _RETRY_STATUSES or status >= 500
    return isinstance(error, (ModelConnectionError, ModelTimeoutError, ServerError, RateLimitError))


def retry_delay(error: ModelError, attempt: int, max_retries: int, backoff: float) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None to give up.

    The server's `Retry-After` wins when it asks for at most 60 s; longer
    than that is not worth blocking on. Otherwise: `backoff` doubled per
    attempt, at most 8 s, with up to 25% jitter so clients spread out.
    """
    if attempt > max_retries or not is_retryable(error):
        return None
    wait: float | None = error.retry_after
    if wait is not None:
        return wait if wait <= MAX_RETRY_AFTER else None
    return min(backoff * 2.0 ** (attempt - 1), MAX_BACKOFF) * (1 - 0.25 * random.random())


def _io(effect: Effect, where: str) -> Generator[Effect, Any, Any]:
    """Yield one I/O effect; httpx's errors come back as `ModelError`s."""
    try:
        return (yield effect)
    except httpx.TimeoutException as exc:
        kind = type(exc).__name__.removesuffix("Timeout").lower() or "request"
        raise ModelTimeoutError(
            f"{where} did not answer in time ({kind} timeout); raise timeout= or retry later"
        ) from exc
    except httpx.DecodingError as exc:
        raise MalformedResponseError(f"{where} sent a body that does not decode: {exc}") from exc
    except httpx.HTTPError as exc:
        raise ModelConnectionError(
            f"Could not talk to {where}: {exc or type(exc).__name__}; "
            "check base_url and that the server is running"
        ) from exc


# --------------------------------------------------------------- the model


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client: loading the CA bundle takes ~0.2 s."""
    return httpx.create_ssl_context()


class HttpChatModel(BaseChatModel):
    """A chat model over HTTP: clients, timeouts, limits, retries; subclasses add the format.

    Keyword arguments every adapter takes (`HttpOptions`):

    - `options`: the model's default `ChatOptions`;
    - `max_retries` (2): retries after the first attempt, for 408/409/429/5xx,
      connection errors and timeouts -- never for an answer saying the request
      itself is malformed (`_malformed`); `backoff` (0.5 s): the first wait,
      doubled per retry up to 8 s, unless the server says `Retry-After`;
    - `timeout` (10 min per read, 5 s to connect): a number or an
      `httpx.Timeout`; `connect_timeout` overrides the connect part;
    - `limits` (`DEFAULT_LIMITS`: 100 connections, all kept alive);
    - `headers`: extra headers on every request;
    - `http_client` / `async_http_client`: clients of your own (proxies,
      mTLS, transports); used as they are and never closed by the model;
    - `listeners`, `streaming`: see `BaseChatModel`.

    Subclasses implement the pure parts: `_request` (the httpx.Request for a
    call), `_parse_response` (a whole JSON reply as one chunk),
    `_stream_parser` (a streaming body as chunks) and `_error_message` (the
    provider's words in an error body).
    """

    provider: ClassVar[str] = "http"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        options: ChatOptions | None = None,
        max_retries: int = 2,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        connect_timeout: float | None = None,
        limits: httpx.Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        listeners: Sequence[ChatModelListener] = (),
        streaming: bool = False,
        backoff: float = 0.5,
    ) -> None:
        super().__init__(model, options=options, listeners=listeners, streaming=streaming)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries
        """Retries after the first attempt (2: at most three requests per call)."""
        self.backoff = backoff
        """Seconds before the first retry; doubled for each further one, up to 8 s."""
        if not isinstance(timeout, httpx.Timeout):
            connect = DEFAULT_TIMEOUT.connect if timeout is None else min(5.0, timeout)
            timeout = httpx.Timeout(timeout, connect=connect)
        if connect_timeout is not None:
            timeout = httpx.Timeout(
                connect=connect_timeout, read=timeout.read, write=timeout.write, pool=timeout.pool
            )
        self.timeout = timeout
        self.limits = limits
        self.headers = dict(headers or {})
        """Extra headers sent with every request."""
        self._given_client = http_client
        self._given_async = async_http_client
        self._sync: ConnectionPool | None = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncConnectionPool] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._urls: dict[str, httpx.URL] = {}

    # -- clients

    def _connections(self) -> ConnectionPool:
        pool = self._sync
        if pool is None:
            with self._lock:
                pool = self._sync
                if pool is None:
                    pool = self._sync = ConnectionPool(
                        self._new_client, self.limits, self._given_client
                    )
        return pool

    def _async_connections(self) -> AsyncConnectionPool:
        loop = asyncio.get_running_loop()
        pool = self._async.get(loop)
        if pool is None:
            pool = self._async[loop] = AsyncConnectionPool(
                self._new_async_client, self.limits, self._given_async
            )
        return pool

    def _new_client(self, limits: httpx.Limits) -> httpx.Client:
        return httpx.Client(timeout=self.timeout, limits=limits, verify=_ssl_context())

    def _new_async_client(self, limits: httpx.Limits) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout, limits=limits, verify=_ssl_context())

    def close(self) -> None:
        """Close the sync connections (the async ones need `aclose`).

        A client passed in as `http_client` is left open: it is yours.
        """
        pool, self._sync = self._sync, None
        if pool is not None:
            pool.close()

    async def aclose(self) -> None:
        """Close every connection this model opened: the current loop's and the sync ones."""
        pool = self._async.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()
        self.close()

    def __enter__(self) -> HttpChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> HttpChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- what providers implement (all pure)

    def _request(self, call: Call) -> httpx.Request:
        raise NotImplementedError

    def _parse_response(self, data: Any, call: Call) -> AIMessageChunk:
        raise NotImplementedError

    def _stream_parser(self, call: Call) -> StreamParser:
        raise NotImplementedError

    def _error_message(self, data: Any) -> str | None:
        """The provider's explanation in a JSON error body; OpenAI's and Anthropic's shape."""
        if isinstance(data, Mapping):
            error = data.get("error")
            if isinstance(error, Mapping) and isinstance(error.get("message"), str):
                return str(error["message"])
            if isinstance(error, str):
                return error
            if isinstance(data.get("message"), str):
                return str(data["message"])
        return None

    def _json_request(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]
    ) -> httpx.Request:
        """A POST of `body` as JSON to base_url + path, with our and the caller's headers."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        address = self.base_url + path
        url = self._urls.get(address)
        if url is None:  # parsed once: URL parsing is a good part of building a request
            url = self._urls[address] = httpx.URL(address)
        return httpx.Request(
            "POST",
            url,
            content=content,
            headers={
                "content-type": "application/json",
                "accept": "application/json",
                "user-agent": "flowgraph",
                **headers,
                **self.headers,
            },
        )

    # -- the exchange

    def _source(self, call: Call, state: CallState) -> Source:
        return http_source(self, call, state)


def http_source(model: HttpChatModel, call: Call, state: CallState) -> Source:
    """Send `call`, retrying what may be retried, and yield its reply as `Output`s."""
    request = model._request(call)
    where = f"{model.provider} at {request.url}"
    while True:
        state.attempts += 1
        try:
            yield from _exchange(model, call, request, state, where)
            return
        except ModelError as error:
            delay = (
                None
                if state.delivered
                else retry_delay(error, state.attempts, model.max_retries, model.backoff)
            )
            if delay is None:
                raise
            logger.info(
                "%s; retrying in %.2f s (attempt %d of %d)",
                error,
                delay,
                state.attempts + 1,
                model.max_retries + 1,
            )
            yield Sleep(delay)


def _exchange(
    model: HttpChatModel, call: Call, request: httpx.Request, state: CallState, where: str
) -> Source:
    response: httpx.Response = yield from _io(Open(request), where)
    try:
        yield from _read(model, call, response, state, where)
    except ModelError:
        yield Close(response)
        raise
    yield Close(response)


def _read(
    model: HttpChatModel, call: Call, response: httpx.Response, state: CallState, where: str
) -> Source:
    if response.status_code >= 400:
        body: bytes = yield from _io(ReadBody(response), where)
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        raise error_for_status(
            model.provider,
            response.status_code,
            response.headers,
            body,
            model._error_message(data),
            where=where,
        )
    if not call.stream:
        body = yield from _io(ReadBody(response), where)
        chunk = model._parse_response(decode_json(body, where), call)
        state.delivered = True
        yield Output(chunk)
        return
    parser = model._stream_parser(call)
    while True:
        data_bytes: bytes = yield from _io(ReadChunk(response), where)
        if not data_bytes:
            break
        for chunk in parser.feed(data_bytes):
            state.delivered = True
            yield Output(chunk)
    for chunk in parser.close():
        state.delivered = True
        yield Output(chunk)


def stream_cut(where: str, marker: str) -> ModelConnectionError:
    """The error for a stream that stopped before the provider said it was done."""
    return ModelConnectionError(
        f"The stream from {where} ended before {marker}; the connection was cut or the "
        "server failed mid-reply. Nothing partial was kept; call again"
    )
