"""`--db postgresql://...` and `--db redis://...`: the same commands on a server store.

They run when the CI's throw-away servers are up (`source .ci/services.sh` exports
FLOWGRAPH_TEST_POSTGRES_URL and FLOWGRAPH_TEST_REDIS_URL), as the checkpoint
conformance suite does; a server store keeps no record of the app, so resume
takes --app.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from flowgraph.store import open_store

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


REMEMBER = '''
from typing import Annotated

from flowgraph import InjectedStore, ScriptedChatModel, create_react_agent, tool
from flowgraph.store import BaseStore, InMemoryStore

NAMESPACE = ("notes", "NS")


@tool
def note(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Keep a note for later conversations."""
    store.put(NAMESPACE, text, {"text": text})
    return f"{len(store.search(NAMESPACE, limit=100))} notes"


def reply(messages):
    last = messages[-1]
    if last.type == "human":
        return {"tool_calls": [{"name": "note", "args": {"text": last.text}}]}
    return f"Kept: {last.text}."


app = create_react_agent(ScriptedChatModel(reply), [note], store=InMemoryStore())
'''


@pytest.mark.parametrize("backend", sorted(URLS))
def test_an_app_compiled_with_a_store_gets_the_long_term_store_db_names(
    cli: Cli, backend: str, tmp_path: Path
) -> None:
    url = URLS[backend]
    if not url:
        pytest.skip(f"no {backend} server: FLOWGRAPH_TEST_{backend.upper()}_URL is not set")
    namespace = ("notes", uuid.uuid4().hex)  # the servers are shared: a namespace of our own
    (tmp_path / "remember.py").write_text(REMEMBER.replace("NS", namespace[1]))
    with open_store(url) as store:
        first = cli("--db", url, "run", "remember.py", "tea", "-q")
        second = cli("--db", url, "run", "remember.py", "jazz", "-q")  # a new thread
        assert first.out == "Kept: 1 notes.\n", first.err
        assert second.out == "Kept: 2 notes.\n", second.err
        assert sorted(item.key for item in store.search(namespace)) == ["jazz", "tea"]
        store.delete(namespace, "tea")
        store.delete(namespace, "jazz")
