"""A thread's path over its graph: visits, steps and taken edges from real checkpoints."""

from __future__ import annotations

import re
import subprocess

import pytest

from flowgraph import END, START, MessagesState, StateGraph
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import DiagramError
from flowgraph.viz import build_diagram, to_dot, to_mermaid
from flowgraph.viz._path import thread_path

from .conftest import build_react_app, run_react_thread
from .test_dot import DOT, dot_json


def taken(diagram):
    return {(e.source, e.target): e.taken for e in diagram.edges}


def visits(diagram):
    return {n.id: (n.visits, n.steps) for n in diagram.nodes}


def test_one_react_turn(react_thread):
    app, thread = react_thread
    diagram = build_diagram(app, thread_id=thread)
    assert diagram.thread_id == "t1"
    assert visits(diagram) == {
        START: (1, (0,)),
        "agent": (2, (1, 3)),
        "tools": (1, (2,)),
        END: (1, (3,)),
    }
    assert taken(diagram) == {
        (START, "agent"): 1,
        ("agent", "tools"): 1,
        ("agent", END): 1,
        ("tools", "agent"): 1,
    }


def test_two_turns_add_up(react_app):
    run_react_thread(react_app, "t2", turns=2)
    diagram = build_diagram(react_app, thread_id="t2")
    assert visits(diagram)["agent"] == (4, (1, 3, 5, 7))
    assert visits(diagram)[START] == (2, (0, 4))
    assert set(taken(diagram).values()) == {2}


def test_a_thread_on_sqlite(tmp_path):
    from flowgraph import ScriptedChatModel, create_react_agent

    from .conftest import get_weather

    model = ScriptedChatModel(["Hello."])
    app = create_react_agent(
        model, [get_weather], checkpointer=SQLiteCheckpointer(tmp_path / "c.db")
    )
    app.invoke({"messages": [("user", "hi")]}, thread_id="s")
    diagram = build_diagram(app, thread_id="s")
    assert taken(diagram) == {
        (START, "agent"): 1,
        ("agent", "tools"): 0,
        ("agent", END): 1,
        ("tools", "agent"): 0,
    }
    assert visits(diagram)["tools"] == (0, ())


def test_send_fan_out_counts_every_task(send_app):
    send_app.invoke({"messages": [("user", "jokes")]}, thread_id="m")
    diagram = build_diagram(send_app, thread_id="m")
    assert visits(diagram)["write_joke"] == (3, (2, 2, 2))
    assert taken(diagram)["plan", "write_joke"] == 3
    assert taken(diagram)["write_joke", "best"] == 1
    assert taken(diagram)["best", END] == 1


def test_command_and_labelled_branches(persona_app):
    persona_app.invoke({"messages": [("user", "please review my code")]}, thread_id="p")
    persona_app.invoke({"messages": [("user", "thanks")]}, thread_id="q")
    review = taken(build_diagram(persona_app, thread_id="p"))
    assert review["agent", "audit"] == 1 and review["audit", END] == 1
    assert review["agent", END] == 0 and review["audit", "triage"] == 0
    chat = taken(build_diagram(persona_app, thread_id="q"))
    assert chat["agent", END] == 1 and chat["agent", "audit"] == 0


def test_an_interrupted_run_has_not_reached_end():
    app = build_react_app()
    app.interrupt_before = ("tools",)
    app.invoke({"messages": [("user", "Weather in Paris?")]}, thread_id="i")
    diagram = build_diagram(app, thread_id="i")
    assert visits(diagram)[END] == (0, ())
    assert visits(diagram)["tools"] == (0, ())
    assert taken(diagram)["agent", END] == 0
    app.invoke(None, thread_id="i")
    resumed = build_diagram(app, thread_id="i")
    assert visits(resumed)["tools"][0] == 1 and visits(resumed)[END][0] == 1


def test_a_fork_shows_only_the_head_branch():
    app = build_react_app()
    run_react_thread(app, "f", turns=1)  # steps 0-3
    first = next(s for s in app.get_state_history("f") if s.step == 1)  # agent asked for tools
    # the fork re-runs tools; the scripted model now asks about Rome: tools, agent again
    app.invoke(None, thread_id="f", checkpoint_id=first.checkpoint_id)
    # both branches are kept: 8 stored steps, and the checkpoint before the one input
    assert len(list(app.get_state_history("f", before_inputs=False))) == 8
    assert [s.step for s in app.get_state_history("f") if s.next == (START,)] == [-1]
    path = thread_path(app, "f")
    assert [s.step for s in path.steps] == [0, 1, 2, 3, 4, 5]
    assert [s.source for s in path.steps] == ["input", "loop", "fork", "loop", "loop", "loop"]
    diagram = build_diagram(app, thread_id="f")
    assert visits(diagram)["agent"] == (3, (1, 3, 5))
    assert visits(diagram)["tools"] == (2, (2, 4))
    assert taken(diagram)["tools", "agent"] == 2


@pytest.mark.parametrize("turn", [0, 1])
def test_new_input_before_a_turn_draws_the_branch_it_starts(turn):
    """Editing a message runs new input at the checkpoint before it: the path is the
    turns before that message, then the new turn; not the edited turn nor what followed."""
    from flowgraph import ScriptedChatModel, create_react_agent

    from .conftest import get_weather

    def reply(messages):
        if messages[-1].type == "human":
            return {"tool_calls": [{"name": "get_weather", "args": {"city": messages[-1].text}}]}
        return "ok"

    app = create_react_agent(
        ScriptedChatModel(reply), [get_weather], checkpointer=MemoryCheckpointer()
    )
    for city in ("Paris", "Rome"):
        app.invoke({"messages": [("user", city)]}, thread_id="e")
    befores = [s for s in app.get_state_history("e") if s.next == (START,)][::-1]
    app.invoke({"messages": [("user", "Oslo")]}, befores[turn].config)

    path = thread_path(app, "e")
    steps = list(range(4 * (turn + 1)))
    assert [s.step for s in path.steps] == steps
    assert [s.source for s in path.steps] == ["input", "loop", "loop", "loop"] * turn + [
        "fork", "loop", "loop", "loop"
    ]  # fmt: skip
    diagram = build_diagram(app, thread_id="e")
    assert visits(diagram)[START] == (turn + 1, tuple(steps[::4]))
    assert visits(diagram)["tools"] == (turn + 1, tuple(steps[2::4]))
    assert taken(diagram)["tools", "agent"] == turn + 1


def test_subgraph_node_visits_and_exit_edge(subgraph_app):
    subgraph_app.invoke({"messages": [("user", "report")]}, thread_id="r")
    diagram = build_diagram(subgraph_app, thread_id="r")
    assert visits(diagram)["research"] == (1, (2,))
    assert taken(diagram)["plan", "research"] == 1
    assert taken(diagram)["research:__end__", "write"] == 1
    assert visits(diagram)["research:search"] == (0, ())  # inside a subgraph: no checkpoints


def test_update_state_as_node_leads_on(react_app):
    run_react_thread(react_app, "u")
    react_app.update_state("u", {"messages": [("user", "more")]}, as_node="tools")
    react_app.invoke(None, thread_id="u")
    diagram = build_diagram(react_app, thread_id="u")
    # steps: 0 input, 1 agent, 2 tools, 3 agent, 4 update as tools, 5 agent (asks about
    # Rome), 6 tools, 7 agent: tools -> agent after steps 2, 4 and 6
    assert taken(diagram)["tools", "agent"] == 3
    assert visits(diagram)["tools"] == (2, (2, 6))  # an update is not a visit
    assert visits(diagram)["agent"] == (4, (1, 3, 5, 7))


def test_without_checkpointer_or_history_the_error_names_the_thread():
    graph = StateGraph(MessagesState)
    graph.add_node("a", lambda s: {}).add_edge(START, "a").add_edge("a", END)
    with pytest.raises(DiagramError, match="keeps no history") as info:
        build_diagram(graph.compile(), thread_id="x")
    assert info.value.thread_id == "x"
    with pytest.raises(DiagramError, match="'nope' has no checkpoints"):
        build_diagram(graph.compile(checkpointer=MemoryCheckpointer()), thread_id="nope")


def test_mermaid_overlay_marks_visited_nodes_and_taken_links(react_thread):
    app, thread = react_thread
    text = to_mermaid(app, thread_id=thread)
    assert app.to_mermaid(thread_id=thread) == text
    assert 'title: "react_agent (thread t1)"' in text
    assert 'agent("agent<br>2x · steps 1, 3")' in text
    assert 'tools[["tools<br>1x · step 2"]]' in text
    edge_lines = [
        line.strip() for line in text.splitlines() if re.search(r" (-->|-\.->|==>)", line)
    ]
    assert edge_lines == [
        '__start__ -->|"1x"| agent',
        'agent -.->|"tools (1x)"| tools',
        'agent -.->|"END (1x)"| __end__',
        'tools -->|"1x"| agent',
    ]
    assert "    linkStyle 0,1,2,3 stroke:#d9480f,stroke-width:3px" in text.splitlines()
    assert "    class __start__,agent,tools,__end__ fg_visited" in text.splitlines()


def test_mermaid_overlay_fades_what_was_not_taken(react_app):
    run_react_thread(react_app, "t1")
    react_app.invoke({"messages": [("user", "x")]}, thread_id="t3", interrupt_before=["agent"])
    text = to_mermaid(react_app, thread_id="t3")
    assert "    class __start__ fg_visited" in text.splitlines()
    assert "    class agent,tools,__end__ fg_faded" in text.splitlines()
    assert "linkStyle" not in text  # paused before agent: no edge was followed yet


@pytest.mark.skipif(
    DOT is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)"
)
def test_dot_overlay_highlights_taken_edges(react_thread):
    app, thread = react_thread
    text = to_dot(app, thread_id=thread)
    assert app.to_dot(thread_id=thread) == text
    rendered = dot_json(text)
    names = {o["_gvid"]: o["name"] for o in rendered["objects"]}
    colors = {(names[e["tail"]], names[e["head"]]): e.get("color") for e in rendered["edges"]}
    assert set(colors.values()) == {"#d9480f"}
    labels = {o["name"]: o["label"] for o in rendered["objects"]}
    assert labels["agent"] == "agent\\n2x · steps 1, 3"
    assert subprocess.run([DOT, "-Tsvg"], input=text.encode(), capture_output=True).returncode == 0
