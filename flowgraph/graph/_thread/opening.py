"""Opening a thread for a run: its lease first, then the checkpoint the run goes on from.

One call of the engine's into this room before a run is set up: the lease
is taken before anything is read (the protocol's order, `lease`), and given
back at once if the checkpoint cannot be read (an unknown `checkpoint_id`),
so a run that fails here leaves the thread free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowgraph.graph._thread.lease import RunLease, claim, release
from flowgraph.graph._thread.replay import loaded_checkpoint

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._thread.record import Loaded
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["open_thread"]


async def open_thread(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    thread_id: str,
    run_id: str,
    checkpoint_id: str | None,
    *,
    wait: bool | float,
    direct: bool,
    cache: ThreadCache | None,
) -> tuple[RunLease, Loaded | None]:
    """The thread's lease for `run_id`, and its checkpoint (None: a new thread)."""
    lease = await claim(checkpointer, thread_id, run_id, wait=wait, direct=direct)
    try:
        loaded = await loaded_checkpoint(
            state, checkpointer, thread_id, checkpoint_id, direct=direct, cache=cache
        )
    except BaseException:
        await release(lease, direct=direct)
        raise
    return lease, loaded
