"""Message ids: fresh outside a run, deterministic inside one.

A retried or resumed step must emit the same ids as its first attempt, so
that merging by id stays idempotent; the engine therefore installs an id
factory derived from (thread, step, node, task, position) for each write.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from itertools import count

from flowgraph._context import message_id_factory

__all__ = ["deterministic_id_factory", "new_message_id", "uuid_message_id"]


def uuid_message_id() -> str:
    """A fresh random id: what a message gets outside any run."""
    return str(uuid.uuid4())


def new_message_id() -> str:
    """The next id for a message that has none, from the active factory."""
    factory = message_id_factory.get()
    return factory() if factory is not None else str(uuid.uuid4())


def deterministic_id_factory(*scope: object) -> Callable[[], str]:
    """Ids that depend only on `scope` (thread, step, node, task) and position.

    The n-th call of the returned factory yields the same id for the same
    scope every time, in any process.
    """
    prefix = "\x1f".join(map(str, scope)).encode()
    positions = count()

    def make() -> str:
        digest = hashlib.blake2b(
            prefix + b"\x1e" + str(next(positions)).encode(), digest_size=16
        ).digest()
        return str(uuid.UUID(bytes=digest, version=5))

    return make
