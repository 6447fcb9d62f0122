"""The fork server both crash workers run: one warm interpreter that forks a child per job.

`python _crash_worker.py serve` (or `_chaos_worker.py`) imports flowgraph
once, prints READY, then reads one JSON job per line from stdin and forks a
child per job (or `children` of them), so every trial is a real process that
starts in a millisecond. The server prints `<job> CHILD <pid>` per child,
`<job> EXIT <status>` as each ends and `<job> ALLDONE` when all have.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any


def say(*words: object) -> None:
    """One line to stdout in one write: a child killed mid-line cannot garble the next one."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (" ".join(map(str, words)) + "\n").encode())


def serve(run_job: Callable[[dict[str, Any], int], None]) -> None:
    say("READY")
    for line in sys.stdin:
        job = json.loads(line)
        pids = []
        for child in range(job.get("children", 1)):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    run_job(job, child)
                except BaseException:
                    traceback.print_exc()
                    say(job["id"], "ERROR")
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            pids.append(pid)
            say(job["id"], "CHILD", pid)
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            say("\n" + job["id"], "EXIT", status)
        say(job["id"], "ALLDONE")
