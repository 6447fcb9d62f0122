"""The lease protocol every backend implements: one holder per thread, expiry, takeover.

These talk to the store directly; tests/checkpoint/test_thread_lease.py checks
what runs do with it.
"""

from __future__ import annotations

import threading
import time

import pytest

from flowgraph.checkpoint._lease import owner_is_gone, process_owner
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    ThreadLease,
    new_checkpoint_id,
)
from flowgraph.errors import ConcurrentRunError

from .conftest import Backend, ThreadIds, close_quietly

FOREIGN = "other-host#00000000#1/4242/99"
"""An owner on another machine: only its lease's expiry can free the thread."""


def test_a_free_thread_is_taken_and_shows_its_holder(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    assert checkpointer.read_lease(t) is None
    before = time.time()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    lease = checkpointer.read_lease(t)
    assert lease is not None
    assert (lease.thread_id, lease.run_id, lease.owner) == (t, "run-a", FOREIGN)
    assert before + 25 < lease.expires_at < time.time() + 35


def test_a_held_thread_is_refused_naming_the_holder_and_nothing_changes(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    holder = checkpointer.acquire_lease(t, "run-b", "me/1/2", 30.0)
    assert holder is not None
    assert (holder.run_id, holder.owner) == ("run-a", FOREIGN)
    # the same run asking again is refused too: a second delivery is not the first
    again = checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0)
    assert again is not None and again.run_id == "run-a"
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-a"


def test_release_by_the_holder_frees_the_thread_and_by_another_run_does_nothing(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    checkpointer.release_lease(t, "run-b", FOREIGN)
    checkpointer.release_lease(t, "run-a", "me/1/2")  # the same run id, another process
    assert checkpointer.read_lease(t) is not None
    checkpointer.release_lease(t, "run-a", FOREIGN)
    assert checkpointer.read_lease(t) is None
    assert checkpointer.acquire_lease(t, "run-b", FOREIGN, 30.0) is None
    checkpointer.release_lease(t, "run-a", FOREIGN)  # not the holder any more: nothing happens
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-b"


def _two_records(thread_id: str) -> tuple[CheckpointRecord, CheckpointRecord]:
    """A thread's input checkpoint and a run's last step after it."""
    first_id, last_id = new_checkpoint_id(), new_checkpoint_id()
    first = CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=first_id,
        parent_id=None,
        step=0,
        created_at=1.0,
        base_id=first_id,
        payload=b"input",
    )
    last = CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=last_id,
        parent_id=first_id,
        step=1,
        created_at=2.0,
        base_id=first_id,
        payload=b"last",
    )
    return first, last


def test_put_and_release_stores_the_last_step_and_gives_back_the_holders_lease(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    """Every backend gives the lease back in the step's own write (a subclass that
    overrides `put` does not: test_thread_lease covers that default)."""
    t = tid()
    first, last = _two_records(t)
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    checkpointer.put(first, expected_head=None, messages={})
    released = checkpointer.put_and_release(
        last,
        expected_head=first.checkpoint_id,
        messages={"m1": b"hi"},
        run_id="run-a",
        owner=FOREIGN,
    )
    assert checkpointer.head(t) == last.checkpoint_id
    assert checkpointer.messages(t, ["m1"]) == {"m1": b"hi"}
    assert released is True and checkpointer.read_lease(t) is None


def test_put_and_release_by_another_run_or_process_leaves_the_holders_lease(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    for n, (run_id, owner) in enumerate((("run-b", FOREIGN), ("run-a", "me/1/2"))):
        t = tid(f"t{n}")
        first, last = _two_records(t)
        assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
        checkpointer.put(first, expected_head=None, messages={})
        checkpointer.put_and_release(
            last, expected_head=first.checkpoint_id, messages={}, run_id=run_id, owner=owner
        )
        lease = checkpointer.read_lease(t)
        assert lease is not None and (lease.run_id, lease.owner) == ("run-a", FOREIGN)


def test_put_and_release_on_a_moved_head_stores_nothing_and_keeps_the_lease(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    first, last = _two_records(t)
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    checkpointer.put(first, expected_head=None, messages={})
    with pytest.raises(ConcurrentRunError, match=t):
        checkpointer.put_and_release(
            last,
            expected_head="not-the-head",
            messages={"m1": b"hi"},
            run_id="run-a",
            owner=FOREIGN,
        )
    assert checkpointer.head(t) == first.checkpoint_id
    assert checkpointer.messages(t, ["m1"]) == {}
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-a"


def test_put_and_acquire_takes_a_free_or_expired_thread_with_its_first_write(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    first, last = _two_records(t)
    taken = checkpointer.put_and_acquire(
        first,
        expected_head=None,
        messages={"m0": b"q"},
        run_id="run-a",
        owner=FOREIGN,
        lease_s=30.0,
    )
    assert taken is None and checkpointer.head(t) == first.checkpoint_id
    lease = checkpointer.read_lease(t)
    assert lease is not None and (lease.run_id, lease.owner) == ("run-a", FOREIGN)
    checkpointer.release_lease(t, "run-a", FOREIGN)
    assert checkpointer.acquire_lease(t, "run-gone", FOREIGN, 0.05) is None
    time.sleep(0.1)  # expired, so free to take; a live holder would need a takeover
    taken = checkpointer.put_and_acquire(
        last,
        expected_head=first.checkpoint_id,
        messages={},
        run_id="run-b",
        owner=FOREIGN,
        lease_s=30.0,
    )
    assert taken is None and checkpointer.head(t) == last.checkpoint_id
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-b"


def test_put_and_acquire_on_a_held_thread_stores_nothing_and_names_the_holder(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    first, _ = _two_records(t)
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    holder = checkpointer.put_and_acquire(
        first,
        expected_head=None,
        messages={"m0": b"q"},
        run_id="run-b",
        owner="me/1/2",
        lease_s=30.0,
    )
    assert holder is not None and (holder.run_id, holder.owner) == ("run-a", FOREIGN)
    assert checkpointer.head(t) is None and checkpointer.messages(t, ["m0"]) == {}
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-a"


def test_put_and_acquire_on_a_moved_head_stores_nothing_and_takes_no_lease(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    first, last = _two_records(t)
    checkpointer.put(first, expected_head=None, messages={})
    with pytest.raises(ConcurrentRunError, match=t):
        checkpointer.put_and_acquire(
            last,
            expected_head="not-the-head",
            messages={"m1": b"hi"},
            run_id="run-a",
            owner=FOREIGN,
            lease_s=30.0,
        )
    assert checkpointer.head(t) == first.checkpoint_id
    assert checkpointer.messages(t, ["m1"]) == {}
    assert checkpointer.read_lease(t) is None


def test_an_expired_lease_frees_the_thread(checkpointer: BaseCheckpointer, tid: ThreadIds) -> None:
    t = tid()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 0.3) is None
    assert checkpointer.acquire_lease(t, "run-b", FOREIGN, 0.3) is not None
    time.sleep(0.45)
    assert checkpointer.read_lease(t) is None
    assert checkpointer.acquire_lease(t, "run-b", FOREIGN, 30.0) is None
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "run-b"


def test_renewal_keeps_the_lease_past_its_first_expiry(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 0.4) is None
    for _ in range(4):
        time.sleep(0.2)
        assert checkpointer.renew_lease(t, "run-a", FOREIGN, 0.4)
    holder = checkpointer.acquire_lease(t, "run-b", FOREIGN, 0.4)
    assert holder is not None and holder.run_id == "run-a"
    assert not checkpointer.renew_lease(t, "run-b", FOREIGN, 0.4)  # not the holder
    assert not checkpointer.renew_lease(t, "run-a", "me/1/2", 0.4)  # same run, other process


def test_takeover_replaces_only_the_named_holder(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    assert checkpointer.acquire_lease(t, "run-a", FOREIGN, 30.0) is None
    held = checkpointer.read_lease(t)
    assert held is not None
    other_run = ThreadLease(thread_id=t, run_id="run-x", owner=FOREIGN, expires_at=0.0)
    wrong = checkpointer.acquire_lease(t, "run-b", "me/1/2", 30.0, takeover=other_run)
    assert wrong is not None and wrong.run_id == "run-a"
    assert checkpointer.acquire_lease(t, "run-b", "me/1/2", 30.0, takeover=held) is None
    lease = checkpointer.read_lease(t)
    assert lease is not None and (lease.run_id, lease.owner) == ("run-b", "me/1/2")
    assert not checkpointer.renew_lease(t, "run-a", FOREIGN, 30.0)  # the old holder lost


def test_takeover_of_a_run_id_now_held_by_another_process_is_refused(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    """Two rescuers of one dead holder: the second must not evict the first, which reuses
    the dead run's id (a redelivered run keeps its id)."""
    t = tid()
    assert checkpointer.acquire_lease(t, "turn-3", "dead/1/1", 30.0) is None
    dead = checkpointer.read_lease(t)
    assert dead is not None
    assert checkpointer.acquire_lease(t, "turn-3", "rescuer-1/2/2", 30.0, takeover=dead) is None
    late = checkpointer.acquire_lease(t, "turn-3", "rescuer-2/3/3", 30.0, takeover=dead)
    assert late is not None and late.owner == "rescuer-1/2/2"
    checkpointer.release_lease(t, "turn-3", "dead/1/1")  # the dead one's release: no effect
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.owner == "rescuer-1/2/2"


def test_leases_of_two_threads_are_independent(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    a, b = tid("a"), tid("b")
    assert checkpointer.acquire_lease(a, "run-a", FOREIGN, 30.0) is None
    assert checkpointer.acquire_lease(b, "run-b", FOREIGN, 30.0) is None
    checkpointer.release_lease(a, "run-a", FOREIGN)
    assert checkpointer.read_lease(a) is None
    lease = checkpointer.read_lease(b)
    assert lease is not None and lease.run_id == "run-b"


def test_many_racing_claimers_get_one_winner(
    backend: Backend, checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    workers = 8
    stores = [backend.make() if backend.shared_store else checkpointer for _ in range(workers)]
    barrier = threading.Barrier(workers)
    won: list[int] = []
    errors: list[BaseException] = []

    def claim(i: int) -> None:
        try:
            barrier.wait()
            if stores[i].acquire_lease(t, f"run-{i}", FOREIGN, 30.0) is None:
                won.append(i)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        if store is not checkpointer:
            close_quietly(store)
    assert not errors, errors
    assert len(won) == 1
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == f"run-{won[0]}"


def test_async_twins_give_the_same_answers(checkpointer: BaseCheckpointer, tid: ThreadIds) -> None:
    import asyncio

    t = tid()

    async def scenario() -> None:
        assert await checkpointer.aacquire_lease(t, "run-a", FOREIGN, 30.0) is None
        holder = await checkpointer.aacquire_lease(t, "run-b", FOREIGN, 30.0)
        assert holder is not None and holder.run_id == "run-a"
        read = await checkpointer.aread_lease(t)
        assert read is not None and read.run_id == "run-a"
        await checkpointer.arelease_lease(t, "run-a", FOREIGN)
        assert await checkpointer.aread_lease(t) is None

    asyncio.run(scenario())


# -- who is alive -----------------------------------------------------------------


def test_this_process_is_not_gone_and_a_foreign_host_is_never_judged() -> None:
    assert not owner_is_gone(process_owner())
    assert not owner_is_gone(FOREIGN)


def test_a_finished_process_of_this_machine_is_gone() -> None:
    import subprocess
    import sys

    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from flowgraph.checkpoint._lease import process_owner; print(process_owner())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    owner = child.stdout.strip()
    assert owner.split("/")[0] == process_owner().split("/")[0]  # the same machine
    assert owner_is_gone(owner)


def test_a_killed_but_unreaped_process_is_gone() -> None:
    import os
    import signal
    import subprocess
    import sys

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from flowgraph.checkpoint._lease import process_owner; "
            "print(process_owner(), flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    owner = child.stdout.readline().strip()
    assert not owner_is_gone(owner)
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not owner_is_gone(owner):  # a zombie until reaped: gone all the same
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert child.poll() is None or child.returncode == -signal.SIGKILL
    child.wait()
    child.stdout.close()


def test_a_reused_pid_is_not_mistaken_for_the_holder() -> None:
    host, pid, started = process_owner().split("/")
    assert started  # Linux: the start time is known
    assert owner_is_gone(f"{host}/{pid}/{int(started) + 1}")


@pytest.mark.parametrize("owner", ["", "garbage", "host-only", "x/notapid/1"])
def test_an_owner_that_does_not_parse_is_never_judged_gone(owner: str) -> None:
    assert not owner_is_gone(owner)
