"""Reading requests: JSON bodies and query parameters checked field by field.

A body that is not JSON, or a field of the wrong type, is a 422 naming the
field (an `ApiError`, see `_wire.responses`), never a 500; a body past the
limit is a 413; fields the server does not know are ignored, since the SDK
sends many.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from typing import Any, NoReturn

from starlette.requests import Request

from flowgraph.server._wire.responses import ApiError

__all__ = ["DEFAULT_MAX_BODY", "Fields", "query_bool", "query_int", "read_body"]

DEFAULT_MAX_BODY = 10 * 1024 * 1024
"""Request bodies larger than this (bytes) are refused with 413."""

MAX_INTEGER = 2**63 - 1
"""The largest count, limit or offset taken: a 64-bit integer, what every store's
SQL can hold (a larger one was an OverflowError and a 500)."""


async def read_body(request: Request, *, limit: int) -> dict[str, Any]:
    """The request's JSON object (an empty body is `{}`); 413 past `limit` bytes, else 422."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"Request body of {declared} bytes exceeds the limit of {limit} bytes")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"Request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(422, f"Invalid JSON in request body: {exc}") from None
    except RecursionError:
        raise ApiError(422, "Invalid JSON in request body: nested too deeply") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ApiError(422, f"The request body must be a JSON object, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class Fields:
    """Typed reads of a JSON object's fields; a wrong type is a 422 naming the field.

    `prefix` names where the object sits ("command" for the fields of a run's
    command), so a message reads `Field 'command.resume' ...`. A field given
    as null counts as absent, as the SDK drops None values anyway.
    """

    def __init__(self, data: Mapping[str, Any], prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    def _name(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def fail(self, key: str, expected: str) -> NoReturn:
        raise ApiError(
            422, f"Field '{self._name(key)}' must be {expected}, not {_kind(self.data.get(key))}"
        )

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.data.get(key)

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.fail(key, "a string")
        return value

    def required_str(self, key: str) -> str:
        value = self.text(key)
        if value is None:
            raise ApiError(422, f"Field '{self._name(key)}' is required")
        return value

    def choice(self, key: str, choices: Collection[str], default: str | None = None) -> str | None:
        value = self.text(key, default)
        if value is not None and value not in choices:
            listed = ", ".join(repr(c) for c in sorted(choices))
            raise ApiError(422, f"Field '{self._name(key)}' is {value!r}; expected one of {listed}")
        return value

    def integer(
        self, key: str, default: int, *, minimum: int = 0, maximum: int = MAX_INTEGER
    ) -> int:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, "an integer")
        if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
            self.fail(key, "an integer")
        if value < minimum:
            raise ApiError(422, f"Field '{self._name(key)}' must be at least {minimum}")
        if value > maximum:
            raise ApiError(422, f"Field '{self._name(key)}' must be at most {maximum}")
        return int(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(key, "a boolean")
        return value

    def obj(self, key: str) -> dict[str, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.fail(key, "an object")
        return value

    def texts(self, key: str) -> list[str] | None:
        """A list of strings; a lone string counts as a list of one."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(key, "a string or an array of strings")
        return list(value)

    def nested(self, key: str) -> Fields:
        return Fields(self.obj(key) or {}, self._name(key))

    def selected(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`items` cut down to the fields `select` names (all fields without it)."""
        select = self.texts("select")
        if not select:
            return items
        return [{k: item[k] for k in select if k in item} for item in items]


def query_bool(request: Request, key: str, default: bool = False) -> bool:
    value = request.query_params.get(key)
    if value is None or value == "":
        return default
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ApiError(422, f"Query parameter '{key}' must be a boolean, not {value!r}")


def query_int(
    request: Request, key: str, default: int, *, minimum: int = 0, maximum: int = MAX_INTEGER
) -> int:
    value = request.query_params.get(key)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ApiError(422, f"Query parameter '{key}' must be an integer, not {value!r}") from None
    if number < minimum:
        raise ApiError(422, f"Query parameter '{key}' must be at least {minimum}")
    if number > maximum:
        raise ApiError(422, f"Query parameter '{key}' must be at most {maximum}")
    return number
