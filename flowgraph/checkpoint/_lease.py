"""Thread leases: what a backend stores to say "run R of process P is working on this thread".

A run takes its thread's lease before it stores anything and gives it back
when it stops, so a second run on the same thread is refused before any of
its work is done. The backend keeps the lease with an expiry that the
holder pushes forward while it lives; a holder that stopped renewing (its
machine died) loses the lease `lease_s` seconds later.

A holder on this machine need not be waited for: its `owner` names the
host and the process, so a process whose holder is gone (killed, crashed)
is seen at once and the lease taken over. `owner_is_gone` answers that
question; the engine decides what to do with the answer.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_LEASE_S", "ThreadLease", "owner_is_gone", "process_owner"]

DEFAULT_LEASE_S = 15.0
"""How long a lease lives without renewal (its holder renews it every third of that)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ThreadLease:
    """Who holds a thread: the run, the process it runs in, and until when (Unix seconds)."""

    thread_id: str
    run_id: str
    owner: str
    """`host/pid/start`: the machine (name, boot and pid namespace) and the process."""
    expires_at: float


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _host() -> str:
    """This machine as processes on it see it: name, boot, and pid namespace.

    Two containers on one kernel share the boot id but not the pid
    namespace, so a pid is only ever judged in the namespace it belongs to.
    """
    boot = _read("/proc/sys/kernel/random/boot_id")[:8]
    try:
        namespace = os.readlink("/proc/self/ns/pid").removeprefix("pid:").strip("[]")
    except OSError:
        namespace = ""
    return f"{socket.gethostname()}#{boot}#{namespace}".replace("/", "_")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (None: no such process, or a zombie).

    It tells a process from a later one that was given the same pid.
    """
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the name in parentheses may hold spaces
    if not fields or fields[0] in ("Z", "X"):  # killed, waiting to be reaped: gone
        return None
    return fields[19] if len(fields) > 19 else ""


_HOST = _host()
_owner: tuple[int, str] | None = None


def process_owner() -> str:
    """This process's `owner` string (computed once per process; a forked child gets its own)."""
    global _owner
    pid = os.getpid()
    if _owner is None or _owner[0] != pid:
        _owner = (pid, f"{_HOST}/{pid}/{_start_time(pid) or ''}")
    return _owner[1]


def owner_is_gone(owner: str) -> bool:
    """True when `owner` is a process of this machine that no longer runs.

    False for a process of another machine (only its lease's expiry can
    tell) and for one that still runs, this process included.
    """
    host, _, rest = owner.partition("/")
    if host != _HOST:
        return False
    pid_text, _, started = rest.partition("/")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if not Path("/proc").is_dir():  # no /proc: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False
    now = _start_time(pid)
    return now is None or (bool(started) and now != started)
