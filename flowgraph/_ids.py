"""Message ids: fresh outside a run, deterministic inside one.

A retried or resumed step must emit the same ids as its first attempt, so
that merging by id stays idempotent; the engine therefore installs an id
factory derived from (thread, step, node, task, position) for each write.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from flowgraph._context import message_id_factory

__all__ = ["deterministic_id_factory", "new_message_id", "with_new_id"]

M = TypeVar("M")


def new_message_id() -> str:
    """The next id for a message that has none, from the active factory."""
    factory = message_id_factory.get()
    return factory() if factory is not None else str(uuid.uuid4())


def deterministic_id_factory(*scope: object) -> Callable[[], str]:
    """Ids that depend only on `scope` (thread, step, node, task) and position.

    The n-th call of the returned factory yields the same id for the same
    scope every time, in any process. Creating a factory is cheap; the
    scope is hashed only when a first id is asked for.
    """
    state: list[Any] = [None, 0]

    def make() -> str:
        prefix = state[0]
        if prefix is None:
            prefix = state[0] = "\x1f".join(map(str, scope)).encode() + b"\x1e"
        position = state[1]
        state[1] = position + 1
        h = hashlib.blake2b(prefix + str(position).encode(), digest_size=16).hexdigest()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    return make


def with_new_id(message: M) -> M:
    """A copy of a frozen pydantic message with the next id, built without re-validation.

    The fields were validated when the message was made; only `id` changes.
    """
    copy = object.__new__(type(message))
    fields = dict(message.__dict__)
    fields["id"] = new_message_id()
    object.__setattr__(copy, "__dict__", fields)
    object.__setattr__(
        copy,
        "__pydantic_fields_set__",
        message.__pydantic_fields_set__ | {"id"},  # type: ignore[attr-defined]
    )
    object.__setattr__(copy, "__pydantic_extra__", message.__pydantic_extra__)  # type: ignore[attr-defined]
    object.__setattr__(copy, "__pydantic_private__", message.__pydantic_private__)  # type: ignore[attr-defined]
    return copy
