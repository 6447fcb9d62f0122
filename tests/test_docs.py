"""Every Python snippet of the manual runs, as a newcomer would paste it.

The manual is README.md and the pages of docs/ (the site `mkdocs build`
makes). Snippets are the ```python blocks, each executed on its own in a fresh
namespace (nothing is shared between them) with a temporary working
directory; a snippet's test id is its page and its number on the page
(`docs/streaming.md-2`). The manual also names every example, its pages
link only to files that exist, and every flowgraph name the LangGraph
migration table (docs/migration.md) promises exists.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import flowgraph
from flowgraph import CompiledGraph, StateGraph

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
"""The manual: README.md first, then every page of the site."""
TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text(encoding="utf-8") for page in PAGES}
TEXT = TEXTS["README.md"]
MIGRATION = TEXTS["docs/migration.md"]


def snippets(text: str) -> list[str]:
    """The page's ```python blocks, in order (one in a list item is dedented)."""
    blocks = re.findall(r"^([ \t]*)```python\n(.*?)^\1```", text, re.S | re.M)
    return [textwrap.dedent(code) for _, code in blocks]


SNIPPETS = {
    f"{name}-{number}": code
    for name, text in TEXTS.items()
    for number, code in enumerate(snippets(text), start=1)
}
"""Every snippet of the manual, by its page and its number on the page."""

MIGRATION_NAMES = [
    "StateGraph",
    "START",
    "END",
    "add_messages",
    "MessagesState",
    "RemoveMessage",
    "REMOVE_ALL_MESSAGES",
    "HumanMessage",
    "AIMessage",
    "SystemMessage",
    "ToolMessage",
    "tool",
    "ToolNode",
    "tools_condition",
    "create_react_agent",
    "trim_messages",
    "OpenAIChatModel",
    "OllamaChatModel",
    "AnthropicChatModel",
    "init_chat_model",
    "interrupt",
    "Command",
    "Send",
    "RetryPolicy",
    "StreamPart",
    "ToolCall",
    "flowgraph.models.BoundChatModel",
    "GraphRecursionError",
    "FlowgraphError",
    "flowgraph.checkpoint.MemoryCheckpointer",
    "flowgraph.checkpoint.SQLiteCheckpointer",
    "flowgraph.checkpoint.postgres.PostgresCheckpointer",
    "flowgraph.checkpoint.redis.RedisCheckpointer",
    "InjectedStore",
    "flowgraph.store.InMemoryStore",
    "flowgraph.store.SQLiteStore",
    "flowgraph.store.PostgresStore",
    "flowgraph.store.RedisStore",
    "flowgraph.store.open_store",
    "get_stream_writer",
    "entrypoint",
    "task",
]
"""What the migration table maps LangGraph's names to: each must exist and be named there."""
MIGRATION_KEYWORDS: list[tuple[Callable[..., Any], list[str]]] = [
    (CompiledGraph.invoke, ["thread_id", "checkpoint_id", "recursion_limit", "interrupt_before"]),
    (CompiledGraph.stream, ["mode", "thread_id", "stream_mode", "subgraphs"]),
    (CompiledGraph.get_state, ["thread_id"]),
    (CompiledGraph.get_state_history, ["thread_id"]),
    (CompiledGraph.update_state, ["thread_id", "values", "as_node"]),
    (StateGraph.add_node, ["retry", "defer", "destinations"]),
    (StateGraph.__init__, ["input_schema", "output_schema", "input", "output"]),
    (StateGraph.compile, ["interrupt_before"]),
]
"""Keyword arguments the table tells LangGraph users to pass instead of `config`."""


MIGRATION_METHODS: list[tuple[type[Any], str]] = [
    (StateGraph, "set_entry_point"),
    (StateGraph, "set_conditional_entry_point"),
    (StateGraph, "set_finish_point"),
    (flowgraph.ScriptedChatModel, "bind_tools"),
    (flowgraph.HumanMessage, "pretty_print"),
    (flowgraph.HumanMessage, "pretty_repr"),
]
"""Methods the table says LangGraph code may call as it is."""


def migration_section() -> str:
    return MIGRATION


def test_the_manual_has_snippets() -> None:
    assert len(snippets(TEXT)) >= 1, "README.md shows a first agent"
    assert len(SNIPPETS) >= 4


def test_the_readme_starts_with_the_two_commands() -> None:
    commands = re.findall(r"```bash\n(.*?)```", TEXT, re.S)
    assert commands[0].strip() == "pip install -e . && python examples/quickstart.py"
    assert commands[1].strip() == "pip install -e '.[test]' && python -m pytest -n auto"
    assert TEXT.index(commands[1]) < TEXT.index("## What works today")


def test_the_readme_is_short() -> None:
    assert TEXT.count("\n") < 300, "README.md introduces; the manual is in docs/"


def test_every_page_is_on_the_site() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f": {page.relative_to(DOCS).as_posix()}\n" in nav, f"{page} is not in the nav"


SERVERS = {
    # what a snippet reads -> the test server variable .ci/run sets
    "DATABASE_URL": "FLOWGRAPH_TEST_POSTGRES_URL",
    "REDIS_URL": "FLOWGRAPH_TEST_REDIS_URL",
}


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippet = SNIPPETS[name]
    for variable, test_variable in SERVERS.items():
        if f'os.environ["{variable}"]' in snippet:
            url = os.environ.get(test_variable)
            if not url:
                pytest.skip(f"this snippet needs a server: set {test_variable}")
            monkeypatch.setenv(variable, url)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = compile(snippet, f"{name} snippet", "exec", dont_inherit=True)
        exec(code, {"__name__": "snippet_" + re.sub(r"\W", "_", name)})
    finally:
        os.chdir(cwd)


def test_every_example_is_in_the_manual() -> None:
    examples = sorted(p.name for p in (ROOT / "examples").glob("[!_]*.py"))
    manual = "\n".join(TEXTS.values())
    missing = [name for name in examples if f"examples/{name}" not in manual]
    assert not missing, f"say what these examples show in README.md or docs/: {missing}"


def example_rows(text: str, prefix: str) -> dict[str, str]:
    """An example table: example file -> what it shows (links as seen from docs/)."""
    row = rf"^\| \[`(\w+\.py)`\]\({prefix}examples/\1\) \| ([^|]*) \|"
    return {name: shows.replace("](docs/", "](") for name, shows in re.findall(row, text, re.M)}


def test_the_readme_s_examples_say_what_the_examples_page_says() -> None:
    readme = example_rows(TEXT, "")
    page = example_rows(TEXTS["docs/examples.md"], r"\.\./")
    assert readme == page
    assert sorted(page) == sorted(p.name for p in (ROOT / "examples").glob("[!_]*.py"))


LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]*))?\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return "".join(re.split(r"^```.*?^```", text, flags=re.S | re.M))


@pytest.mark.parametrize("name", list(TEXTS))
def test_a_page_links_only_to_what_exists(name: str) -> None:
    page = ROOT / name
    for target, _anchor in LINK.findall(prose(TEXTS[name])):
        if not target or re.match(r"[a-z]+:", target):
            continue  # an anchor on the page itself (mkdocs checks those), or a URL
        assert (page.parent / target).resolve().exists(), f"{name} links to {target}"


@pytest.mark.parametrize("name", MIGRATION_NAMES)
def test_a_migration_target_exists(name: str) -> None:
    module_name, _, attribute = name.rpartition(".")
    module = importlib.import_module(module_name) if module_name else flowgraph
    assert hasattr(module, attribute), f"{name} does not exist"
    if not module_name:
        assert name in flowgraph.__all__
    assert re.search(rf"\b{re.escape(name)}\b", migration_section())


@pytest.mark.parametrize(
    ("owner", "name"), MIGRATION_METHODS, ids=[name for _, name in MIGRATION_METHODS]
)
def test_a_migration_method_exists(owner: type[Any], name: str) -> None:
    assert callable(getattr(owner, name, None)), f"{owner.__name__} has no {name}()"
    assert re.search(rf"\b{name}\b", migration_section())


@pytest.mark.parametrize(
    ("method", "keywords"), MIGRATION_KEYWORDS, ids=[m.__qualname__ for m, _ in MIGRATION_KEYWORDS]
)
def test_a_migration_keyword_exists(method: Callable[..., Any], keywords: list[str]) -> None:
    parameters = inspect.signature(method).parameters
    for keyword in keywords:
        assert keyword in parameters, f"{method.__qualname__} has no {keyword}="
        assert re.search(rf"\b{keyword}\b", migration_section())
