"""Interrupts and time travel the way LangGraph's docs use them (issue 18, items 6 and 8).

`invoke()` of a paused run returns `"__interrupt__"`; the time-travel
how-to picks a past checkpoint from `get_state_history(config)`, edits it
with `update_state(selected.config, values)` and continues with
`invoke(None, new_config)`: the joke must be about the edited topic, not
the first one. Written once in LangGraph's spelling, run with both.
"""

from typing import Any, NotRequired

from typing_extensions import TypedDict

from tests.compat._libs import Lib


class Story(TypedDict):
    topic: NotRequired[str]
    joke: NotRequired[str]


def joke_graph(lib: Lib) -> Any:
    def generate_topic(state: Story) -> dict[str, Any]:
        return {"topic": "socks in the dryer"}

    def write_joke(state: Story) -> dict[str, Any]:
        return {"joke": f"Why do {state['topic']} vanish? Nobody knows."}

    builder = lib.StateGraph(Story)
    builder.add_node("generate_topic", generate_topic)
    builder.add_node("write_joke", write_joke)
    builder.add_edge(lib.START, "generate_topic")
    builder.add_edge("generate_topic", "write_joke")
    builder.add_edge("write_joke", lib.END)
    return builder.compile(checkpointer=lib.checkpointer())


def test_time_travel_edits_a_past_checkpoint_and_continues_from_it(lib: Lib) -> None:
    graph = joke_graph(lib)
    config = {"configurable": {"thread_id": "1"}}
    first = graph.invoke({}, config)
    assert first["joke"] == "Why do socks in the dryer vanish? Nobody knows."

    states = list(graph.get_state_history(config))
    # newest first; LangGraph has one more checkpoint at the end (next: __start__)
    assert [s.next for s in states[:3]] == [(), ("write_joke",), ("generate_topic",)]
    selected = states[1]
    assert selected.values == {"topic": "socks in the dryer"}

    new_config = graph.update_state(selected.config, values={"topic": "chickens"})
    assert new_config["configurable"]["thread_id"] == "1"
    assert (
        new_config["configurable"]["checkpoint_id"]
        != selected.config["configurable"]["checkpoint_id"]
    )
    replayed = graph.invoke(None, new_config)
    assert replayed == {"topic": "chickens", "joke": "Why do chickens vanish? Nobody knows."}
    assert graph.get_state(config).values == replayed
    # the first branch is kept beside the new one
    jokes = {s.values.get("joke") for s in graph.get_state_history(config)}
    assert "Why do socks in the dryer vanish? Nobody knows." in jokes


class Approval(TypedDict):
    plan: str
    verdict: NotRequired[str]


def test_a_paused_invoke_says_why(lib: Lib) -> None:
    def review(state: Approval) -> dict[str, Any]:
        verdict = lib.interrupt({"question": "Approve?", "plan": state["plan"]})
        return {"verdict": verdict}

    builder = lib.StateGraph(Approval)
    builder.add_node("review", review)
    builder.add_edge(lib.START, "review")
    builder.add_edge("review", lib.END)
    graph = builder.compile(checkpointer=lib.checkpointer())
    config = {"configurable": {"thread_id": "1"}}

    paused = graph.invoke({"plan": "ship it"}, config)
    [pending] = paused["__interrupt__"]
    assert pending.value == {"question": "Approve?", "plan": "ship it"}
    assert pending.id == graph.get_state(config).interrupts[0].id
    assert {k: v for k, v in paused.items() if k != "__interrupt__"} == {"plan": "ship it"}

    done = graph.invoke(lib.Command(resume="approved"), config)
    assert done == {"plan": "ship it", "verdict": "approved"}
