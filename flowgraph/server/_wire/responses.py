"""JSON answers: compact JSON bytes, a JSON response, and every refusal as `{"detail": ...}`.

Every refusal is an `ApiError`: its status code is the one the LangGraph SDK
maps to its typed errors (404 NotFoundError, 409 ConflictError, 422
UnprocessableEntityError), its `detail` the sentence the client reads. The
wire readers raise it for a value that cannot be read (a 422 naming the
field), the runs for a conflict, the routes for anything else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

__all__ = ["ApiError", "dumps", "json_response"]


class ApiError(Exception):
    """An answer other than success: its status code and the `detail` the client reads."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail

    def response(self) -> Response:
        return json_response({"detail": self.detail}, status=self.status)


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


def dumps(value: Any) -> bytes:
    """Compact JSON bytes; anything `json` cannot write becomes its repr rather than a 500."""
    return json.dumps(value, separators=(",", ":"), default=_default, ensure_ascii=False).encode()


def json_response(
    value: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        dumps(value), status_code=status, media_type="application/json", headers=headers
    )
