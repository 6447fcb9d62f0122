"""The migration table keeps a row only for what still differs, and every row that says
"the same" is run by a differential program (issue #30 item 4).

`ROWS` names, for each row of docs/migration.md's table (matched by a prefix of its
LangGraph cell), the programs of programs/ that run it on LangGraph and on flowgraph
(test_programs.py compares their output; its EXPECTED asserts a row's documented
difference, its XFAIL a known bug). `EXEMPT` names the rows with nothing in the LangGraph
library to run. A row that says "the same" with neither, a program that does not exist,
or an entry no row matches (a row renamed or dropped) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.differential._harness import PROGRAMS
from tests.differential.test_programs import EXPECTED

MIGRATION = Path(__file__).parents[2] / "docs" / "migration.md"

ROWS: dict[str, tuple[str, ...]] = {
    # imports that change, and names flowgraph spells otherwise (_harness.RENAMED)
    "`from langgraph.graph import StateGraph": ("p01_chatbot_memory", "p13_conditional_branches"),
    "`add_messages`, `MessagesState`": ("p01_chatbot_memory", "p66_add_messages_by_id"),
    "`langchain_core.messages.HumanMessage`": ("p01_chatbot_memory", "p67_pretty_print"),
    "`langchain_core.tools.tool`": ("p02_react_toolnode", "p59_tool_node_graph"),
    "`langgraph.prebuilt.ToolNode`": ("p02_react_toolnode", "p59_tool_node_graph"),
    "`langgraph.types.interrupt`": (
        "p15_command_literal",
        "p17_send_map_reduce",
        "p20_interrupt_resume",
    ),
    "`InMemorySaver` / `MemorySaver`": ("p01_chatbot_memory", "p05_create_react_agent_memory"),
    "`langgraph.store.memory.InMemoryStore()`": ("p78_store_in_node", "p91_injected_store_tool"),
    "`langgraph.config.get_config()`": ("p38_get_config",),
    "`langgraph.runtime.get_runtime(Ctx)`": ("p37_context_dataclass",),
    "`GraphRecursionError`": ("p28_recursion_limit",),
    # state
    "`class State(MessagesState)`": ("p57_messages_state_subclass", "p171_messages_state_mapping"),
    "a `typing_extensions.TypedDict` state": ("p30_reducers", "p150_typeddict_required"),
    "`StateGraph(State, input_schema=In": (
        "p33_input_output_schema",
        "p172_input_output_keywords",
        "p74_input_schema_extra_key",
    ),
    "private state:": ("p34_private_state",),
    "`RemoveMessage`, `REMOVE_ALL_MESSAGES`": ("p56_remove_message", "p151_remove_all_messages"),
    "`result = graph.invoke(...)` of a pydantic state": ("p31_pydantic_state",),
    "`RemainingSteps`": ("p61_remaining_steps",),
    # messages, models and tools
    "a plain function (type hints and a docstring)": (
        "p58_plain_function_tools",
        "p05_create_react_agent_memory",
        "p83_react_agent_interrupt_before",
    ),
    "`model.bind_tools(tools, tool_choice=...)`": ("p02_react_toolnode", "p173_bind_tools_choice"),
    '`tool_call["name"]`': ("p68_tool_call_access", "p03_tool_call_content"),
    "`message.pretty_print()`": ("p67_pretty_print", "p01_chatbot_memory"),
    "`message.content` of an AI message that calls tools": (
        "p03_tool_call_content",
        "p84_chunk_tool_calls",
        "p10_stream_messages_tokens",
        "p152_content_blocks",
        "p177_content_list_with_calls",
    ),
    "`langgraph.prebuilt.create_react_agent(model, tools, prompt=...)`": (
        "p04_create_react_agent_prompt",
        "p05_create_react_agent_memory",
        "p79_tool_runtime",
        "p83_react_agent_interrupt_before",
        "p91_injected_store_tool",
        "p153_react_agent_prompts",
    ),
    "`llm.invoke(messages, config)`": ("p51_llm_invoke_config", "p154_llm_stream_config"),
    "`langchain_core.messages.trim_messages(": (
        "p41_trim_messages",
        "p42_trim_in_node",
        "p155_trimmer",
        "p94_trim_include_system_default",
    ),
    "a tool's `runtime: ToolRuntime[Ctx]`": ("p79_tool_runtime", "p164_tool_runtime_fields"),
    "a tool returning `Command(update=": ("p40_tool_returns_command", "p165_tool_command_goto"),
    # long-term store
    "`store.search(prefix,": ("p156_store_search", "p157_store_search_order"),
    "`Annotated[BaseStore, InjectedStore()]`": ("p91_injected_store_tool",),
    "`compile(store=store)`": (
        "p78_store_in_node",
        "p91_injected_store_tool",
        "p158_runtime_store_retry_list",
    ),
    # building a graph
    "`add_node(name, fn, retry_policy=": ("p27_retry_policy", "p158_runtime_store_retry_list"),
    "`add_node(name, fn, metadata=": ("p159_node_metadata",),
    "`RetryPolicy()`'s default `retry_on`": ("p89_retry_default_retry_on",),
    "`def node(state) -> Command[Literal[": (
        "p15_command_literal",
        "p16_command_loop",
        "p160_command_hints",
    ),
    "a node with no outgoing edge": ("p92_no_outgoing_edge",),
    "`Command(graph=Command.PARENT": ("p69_handoff_parent",),
    "`add_node(name, fn, cache_policy=": ("p39_node_cache", "p166_cache_key_func"),
    # config, context, runtime
    '`invoke(input, {"recursion_limit": 50})`': ("p28_recursion_limit",),
    '`config={"configurable": {"thread_id": "1"}}`': (
        "p01_chatbot_memory",
        "p35_runnable_config",
        "p73_config_typo",
    ),
    '`{"configurable": {"thread_id": "1", "checkpoint_id": c}}`': ("p25_fork_checkpoint_id",),
    "`def node(state, config: RunnableConfig)`": (
        "p35_runnable_config",
        "p161_conditional_edges_forms",
    ),
    "`StateGraph(State, context_schema=Ctx)`": (
        "p36_context_typeddict",
        "p37_context_dataclass",
        "p162_context_forms",
    ),
    "`def node(state, writer: StreamWriter)`": (
        "p80_stream_writer_param",
        "p163_runtime_stream_writer",
    ),
    # streaming
    "`for chunk in graph.stream(input)`": (
        "p06_stream_default_updates",
        "p07_stream_updates_messages",
        "p09_stream_multiple_modes",
        "p21_interrupt_stream_updates",
    ),
    '`invoke(input, stream_mode="updates")`': ("p50_invoke_stream_mode", "p39_node_cache"),
    '`stream(..., version="v2")`': (
        "p52_stream_v2",
        "p53_invoke_v2",
        "p54_stream_interrupt_v2",
        "p88_stream_v2_subgraphs",
    ),
    '`stream_events(..., version="v3")`': (
        "p71_stream_events_v3",
        "p85_stream_events_v3_messages",
        "p86_stream_events_v3_interrupt",
        "p87_astream_events_v3",
        "p167_stream_events_v3_subgraphs",
    ),
    '`stream_mode="values"`': (
        "p08_stream_values",
        "p65_stream_values_interrupt",
        "p92_no_outgoing_edge",
    ),
    "`print(message)`, `print(chunk)`": (
        "p82_print_message_chunks",
        "p147_print_stream_chunks",
        "p149_print_invoke_messages",
    ),
    "`graph.get_graph()`": (
        "p47_draw_mermaid",
        "p48_get_graph_nodes",
        "p96_draw_mermaid_path_map",
        "p97_get_graph_xray",
        "p98_draw_mermaid_command_send",
        "p99_draw_mermaid_options",
        "p101_get_graph_open_branch",
        "p103_draw_mermaid_names",
        "p104_get_graph_joins",
        "p105_get_graph_xray_called_subgraph",
    ),
    "`get_graph().to_json()`": ("p100_get_graph_metadata_tools",),
    "an `Interrupt`'s `id`": ("p81_interrupt_repr",),
    "a compiled subgraph as a node": ("p18_subgraph_shared_state", "p110_subgraph_whole_state"),
    "a pydantic state's field with a reducer": ("p114_pydantic_reducer_start",),
    "a `@dataclass` state": ("p32_dataclass_state", "p113_dataclass_state_reducers"),
    "`get_state(config).tasks`": ("p70_get_state_tasks", "p111_state_tasks_detail"),
    "a node returning `None`": ("p75_node_returns_none", "p134_breakpoints"),
    '`stream_mode="debug"`': ("p176_debug_mode",),
    '`stream_mode="messages"`': (
        "p10_stream_messages_tokens",
        "p168_messages_metadata",
        "p178_messages_mode_react",
    ),
    '`stream_mode="custom"`': ("p09_stream_multiple_modes", "p11_stream_custom"),
    "`stream(..., subgraphs=True)`": (
        "p12_stream_subgraphs",
        "p88_stream_v2_subgraphs",
        "p179_nested_subgraph_modes",
        "p182_subgraph_invoked_in_a_node",
        "p183_subgraph_in_a_node_tokens",
    ),
    "breaking out of": ("p46_break_stream",),
    # functional API
    "`from langgraph.func import entrypoint, task`": (
        "p43_functional_entrypoint",
        "p44_functional_interrupt",
        "p45_functional_previous",
        "p72_ainvoke_functional",
        "p175_entrypoint_injected",
    ),
    "`@task(retry_policy=...)`": ("p90_task_retry_policy", "p72_ainvoke_functional"),
    # threads, checkpoints, interrupts
    '`get_state(config).values["messages"]`': (
        "p01_chatbot_memory",
        "p05_create_react_agent_memory",
    ),
    "`get_state_history(config)`": (
        "p24_time_travel_history",
        "p135_time_travel_update",
        "p180_edit_first_message",
    ),
    "`update_state(config, values, as_node=...)`": (
        "p26_update_state_as_node",
        "p25_fork_checkpoint_id",
    ),
    "`get_state(config).interrupts`": ("p20_interrupt_resume",),
    "forking a thread": ("p93_fork_reruns_tools",),
    '`invoke(Command(resume="no"), checkpoint_config)`': ("p174_resume_answered_interrupt",),
    '`result = graph.invoke(...)` then `result["__interrupt__"]`': (
        "p20_interrupt_resume",
        "p64_multiple_interrupts",
    ),
    "`compile(interrupt_before=[...])`": (
        "p22_interrupt_before",
        "p83_react_agent_interrupt_before",
        "p170_interrupt_before_per_invoke",
        "p181_interrupt_every_node",
    ),
    "`invoke` with a message already in the thread": ("p95_same_message_twice",),
}
"""Row (a prefix of its LangGraph cell) -> the programs that run it on both libraries."""

PORTED: dict[str, tuple[str, ...]] = {
    "`add_node(name, fn, defer=True)`": ("p62_defer_node",),
    "`set_entry_point`": ("p63_entry_finish_points",),
    "`add_conditional_edges(src, path,": (
        "p13_conditional_branches",
        "p17_send_map_reduce",
        "p161_conditional_edges_forms",
    ),
    "a `TypedDict` field with a reducer": ("p49_empty_reducer_state",),
    "`snapshot.config`, `snapshot.parent_config`": ("p169_snapshot_configs",),
    "`graph.with_config(": ("p139_runtime_context",),
}
"""What ports as it is: named in the paragraph below the table, not in a row of it (the
table keeps a row only for what differs), each run by its programs."""


EXEMPT: dict[str, str] = {
    "`langgraph dev` / `langgraph up`": "the LangGraph server, not in the library",
    "`client.store.put_item(": "the LangGraph server's /store API, not in the library",
    "`langchain_mcp_adapters.client.MultiServerMCPClient": "langchain-mcp-adapters, not "
    "installed beside LangGraph, and it needs an MCP server",
}
"""Rows with nothing in the LangGraph library to run, with why."""


def table() -> list[tuple[str, str]]:
    """The (LangGraph, flowgraph) cells of the migration table's rows."""
    rows = []
    lines = MIGRATION.read_text().splitlines()
    start = lines.index("| LangGraph | flowgraph |")
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = line.strip().removeprefix("| ").removesuffix(" |").split(" | ")
        assert len(cells) == 2, f"a row of two cells (no ' | ' inside one): {line}"
        rows.append((cells[0], cells[1]))
    return rows


def says_the_same(flowgraph_cell: str) -> bool:
    return re.search(r"\bthe same\b", flowgraph_cell, re.IGNORECASE) is not None


def matching(prefix: str, rows: list[tuple[str, str]]) -> list[str]:
    return [langgraph for langgraph, _ in rows if langgraph.startswith(prefix)]


def test_the_table_parses() -> None:
    rows = table()
    assert len(rows) >= 60
    assert rows[0][0] == "`from langgraph.graph import StateGraph, START, END`"
    assert sum(says_the_same(flowgraph) for _, flowgraph in rows) >= 40


def test_every_row_that_says_the_same_is_run_or_exempt() -> None:
    uncovered = [
        langgraph
        for langgraph, flowgraph in table()
        if says_the_same(flowgraph) and not any(langgraph.startswith(p) for p in (*ROWS, *EXEMPT))
    ]
    assert uncovered == [], "name a program in ROWS (or a reason in EXEMPT) for each"


@pytest.mark.parametrize("prefix", [*ROWS, *EXEMPT])
def test_each_entry_matches_one_row(prefix: str) -> None:
    found = matching(prefix, table())
    assert len(found) == 1, f"{prefix!r} matches {len(found)} rows: a row renamed or dropped?"


def test_no_row_is_both_run_and_exempt() -> None:
    rows = table()
    run = {row for prefix in ROWS for row in matching(prefix, rows)}
    exempt = {row for prefix in EXEMPT for row in matching(prefix, rows)}
    assert run.isdisjoint(exempt)


@pytest.mark.parametrize("prefix", ROWS)
def test_each_named_program_exists(prefix: str) -> None:
    assert ROWS[prefix], "name at least one program"
    missing = [stem for stem in ROWS[prefix] if not (PROGRAMS / f"{stem}.py").is_file()]
    assert missing == []


def test_every_documented_difference_has_its_row() -> None:
    # an EXPECTED program asserts a difference, so a row names it (or, for these three,
    # the list of differences below the table, checked by its titles)
    named = {stem for stems in (*ROWS.values(), *PORTED.values()) for stem in stems}
    below_the_table = {"p29_recursion_default", "p76_typed_validation", "p77_unreachable_node"}
    assert set(EXPECTED) - named == below_the_table
    text = MIGRATION.read_text()
    for title in ("**Recursion limit 100 steps**", "**Typed state.**", "**Every node reachable.**"):
        assert title in text


def test_no_row_says_only_the_same() -> None:
    plain = [row for row, flowgraph in table() if flowgraph == "the same"]
    assert plain == [], "move a row with nothing to say into the paragraph below the table"


@pytest.mark.parametrize("prefix", PORTED)
def test_what_ports_as_it_is_is_named_below_the_table_with_its_programs(prefix: str) -> None:
    text = MIGRATION.read_text()
    start = text.index("Ported as they are")
    paragraph = text[start : text.index("\n\nThe same agent in both", start)]
    assert prefix in paragraph
    assert matching(prefix, table()) == []
    for stem in PORTED[prefix]:
        assert f"`{stem}`" in paragraph and (PROGRAMS / f"{stem}.py").is_file()
