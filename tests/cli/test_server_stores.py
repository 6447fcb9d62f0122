"""`--db postgresql://...` and `--db redis://...`: the same commands on a server store.

They run when the CI's throw-away servers are up (`source .ci/services.sh` exports
FLOWGRAPH_TEST_POSTGRES_URL and FLOWGRAPH_TEST_REDIS_URL), as the checkpoint
conformance suite does; a server store keeps no record of the app, so resume
takes --app.
"""

from __future__ import annotations

import os
import uuid

import pytest

from .conftest import Cli

URLS = {
    "postgres": os.environ.get("FLOWGRAPH_TEST_POSTGRES_URL"),
    "redis": os.environ.get("FLOWGRAPH_TEST_REDIS_URL"),
}


@pytest.mark.parametrize("backend", sorted(URLS))
def test_run_show_and_resume_on_a_server_store(cli: Cli, backend: str) -> None:
    url = URLS[backend]
    if not url:
        pytest.skip(f"no {backend} server: FLOWGRAPH_TEST_{backend.upper()}_URL is not set")
    thread = f"cli-{uuid.uuid4().hex[:8]}"

    ran = cli("--db", url, "run", "weather.py", "Weather in Paris?", "--thread", thread, "-q")
    paused = cli("--db", url, "run", "approve.py:make_app", "Plan", "--thread", f"{thread}-h")

    assert ran.code == 0, ran.err
    assert ran.out == "It is sunny in Paris.\n"
    assert thread in cli("--db", url, "threads").out
    shown = cli("--db", url, "show", thread).out.splitlines()
    assert shown[-1] == "#4 ai     It is sunny in Paris."
    assert paused.code == 3
    hint = next(line.strip() for line in paused.err.splitlines() if "resume" in line)
    assert hint.startswith(f"flowgraph --db {url} resume {thread}-h --app /")
    assert hint.endswith("/approve.py:make_app --value JSON")
    resumed = cli(
        "--db", url, "resume", f"{thread}-h", "--value", '"yes"', "--app", "approve.py:make_app"
    )
    assert resumed.out == "The human said: yes\n", resumed.err
    assert cli("--db", url, "delete", thread).code == 0
    assert cli("--db", url, "delete", f"{thread}-h").code == 0
