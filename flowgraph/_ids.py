"""Message ids: fresh outside a run, deterministic inside one.

A retried or resumed step must emit the same ids as its first attempt, so
that merging by id stays idempotent; the engine therefore installs an id
factory derived from (thread, step, node, task, position) for each write.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from flowgraph._context import message_id_factory
from flowgraph._lazy import LazyModule

if TYPE_CHECKING:
    import hashlib
else:  # only runs with a checkpointer hash scopes: OpenSSL's hashlib loads with the first
    hashlib = LazyModule("hashlib")

__all__ = [
    "StepIds",
    "deterministic_id_factory",
    "new_message_id",
    "random_scope_key",
    "scope_key",
    "with_new_id",
]

M = TypeVar("M")


def new_message_id() -> str:
    """The next id for a message that has none, from the active factory."""
    factory = message_id_factory.get()
    return factory() if factory is not None else str(uuid.uuid4())


def scope_key(*scope: object) -> str:
    """A short stable key for a run scope (e.g. thread and parent checkpoint)."""
    return hashlib.blake2b("\x1f".join(map(str, scope)).encode(), digest_size=8).hexdigest()


def random_scope_key() -> str:
    """A key for a run with no history to continue: unique, so ids never collide.

    64 random bits from `random` (re-seeded in a forked child), not
    `os.urandom`: a system call per run costs more than a short run's steps.
    """
    return f"{random.getrandbits(64):016x}"


def deterministic_id_factory(key: str, step: int, task: int) -> Callable[[], str]:
    """Ids that depend only on the run `key`, the step, the task's index and position.

    The n-th call of the returned factory yields the same id for the same
    arguments every time, in any process, so a retried or resumed task
    re-emits the ids of its first attempt.
    """
    return StepIds(key, step, task)


class StepIds:
    """The ids of `deterministic_id_factory` for each task of one step in turn, from one object.

    Merging a step's writes switches tasks with `start` (two stores) instead of
    building and installing a factory per task, which a wide fan-out would pay
    hundreds of times.
    """

    __slots__ = ("position", "prefix", "task")

    def __init__(self, key: str, step: int, task: int = 0) -> None:
        self.prefix = f"{key}-{step}-"
        self.task = task
        self.position = 0

    def start(self, task: int) -> None:
        """Number the next ids as task `task`'s, from its first position."""
        self.task = task
        self.position = 0

    def __call__(self) -> str:
        position = self.position
        self.position = position + 1
        return f"{self.prefix}{self.task}-{position}"


def with_new_id(message: M) -> M:
    """A copy of a frozen pydantic message with the next id, built without re-validation.

    The fields were validated when the message was made; only `id` changes.
    """
    copy = _new(type(message))
    fields = message.__dict__.copy()
    factory = message_id_factory.get()  # `new_message_id`, inlined: a run calls this per message
    fields["id"] = factory() if factory is not None else str(uuid.uuid4())
    _set_dict(copy, fields)
    _set_fields_set(copy, message.__pydantic_fields_set__ | _ID_FIELD)  # type: ignore[attr-defined]
    _set_extra(copy, message.__pydantic_extra__)  # type: ignore[attr-defined]
    _set_private(copy, message.__pydantic_private__)  # type: ignore[attr-defined]
    return copy


_new = object.__new__
# the slots of every pydantic model, set through their descriptors: a bound setter call
# costs about half of `object.__setattr__`'s name lookup, and messages are built often
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_ID_FIELD = frozenset({"id"})
