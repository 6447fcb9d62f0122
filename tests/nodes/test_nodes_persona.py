"""PersonaSwitch: one system message, first; same persona no change; a switch in place."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph import (
    END,
    REMOVE_ALL_MESSAGES,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    RemoveMessage,
    StateGraph,
    SystemMessage,
    add_messages,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.nodes import PersonaSwitch, Router
from flowgraph.prompts import SystemPromptTemplate

FRIENDLY = SystemPromptTemplate("You are a friendly assistant chatting with {user_name}.")
REVIEWER = "You are a strict code reviewer: point out every bug, be terse."
PERSONAS: dict[str, Any] = {"friendly": FRIENDLY, "code_reviewer": REVIEWER}


class ChatState(MessagesState):
    persona: str = "friendly"
    user_name: str = "Ada"


def switch_update(state: ChatState, switch: PersonaSwitch | None = None) -> Any:
    return (switch or PersonaSwitch(PERSONAS))(state)


def apply(state: ChatState, update: Any) -> ChatState:
    if update is None:
        return state
    return state.model_copy(update={"messages": add_messages(state.messages, update["messages"])})


# ------------------------------------------------------------------ the rules


def test_an_empty_conversation_gets_the_system_message() -> None:
    update = switch_update(ChatState())
    (system,) = update["messages"]
    assert isinstance(system, SystemMessage)
    assert system.content == "You are a friendly assistant chatting with Ada."
    assert system.metadata == {"persona": "friendly"}


def test_same_persona_is_no_change() -> None:
    state = ChatState(messages=[SystemMessage("x", id="s1"), HumanMessage("hi", id="h1")])
    state = apply(state, switch_update(state))  # "x" becomes the friendly persona, in place
    assert [m.id for m in state.messages] == ["s1", "h1"]
    assert switch_update(state) is None  # no new message, no new id, nothing to write
    # the same text written by hand (no persona metadata) also counts as no change
    by_hand = ChatState(
        messages=[SystemMessage("You are a friendly assistant chatting with Ada.", id="s9")]
    )
    assert switch_update(by_hand) is None


def test_a_different_persona_replaces_the_system_message_in_place() -> None:
    state = ChatState(
        messages=[
            SystemMessage("You are a friendly assistant chatting with Ada.", id="s1", name="sys"),
            HumanMessage("review this", id="h1"),
            AIMessage("sure", id="a1"),
        ],
        persona="code_reviewer",
    )
    update = switch_update(state)
    (replaced,) = update["messages"]
    assert (replaced.id, replaced.name, replaced.content) == ("s1", "sys", REVIEWER)
    assert replaced.metadata == {"persona": "code_reviewer"}
    after = apply(state, update)
    assert [m.id for m in after.messages] == ["s1", "h1", "a1"]
    assert after.messages[0].content == REVIEWER


def test_a_template_renders_from_the_state_and_follows_it() -> None:
    state = apply(ChatState(), switch_update(ChatState()))
    renamed = state.model_copy(update={"user_name": "Grace"})
    (replaced,) = switch_update(renamed)["messages"]
    assert replaced.id == state.messages[0].id
    assert replaced.content == "You are a friendly assistant chatting with Grace."


def test_a_conversation_without_a_system_message_gets_one_first() -> None:
    state = ChatState(messages=[HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")])
    update = switch_update(state)
    assert update["messages"][0] == RemoveMessage(REMOVE_ALL_MESSAGES)
    after = apply(state, update)
    assert [type(m) for m in after.messages] == [SystemMessage, HumanMessage, AIMessage]
    assert [m.id for m in after.messages[1:]] == ["h1", "a1"]
    assert switch_update(after) is None


def test_other_system_messages_are_removed() -> None:
    state = ChatState(
        messages=[
            SystemMessage("You are a friendly assistant chatting with Ada.", id="s1"),
            HumanMessage("hi", id="h1"),
            SystemMessage("stray", id="s2"),
        ]
    )
    assert switch_update(state) == {"messages": [RemoveMessage("s2")]}
    after = apply(state, switch_update(state))
    assert [m.id for m in after.messages] == ["s1", "h1"]


def test_a_system_message_not_first_moves_first() -> None:
    state = ChatState(messages=[HumanMessage("hi", id="h1"), SystemMessage("old", id="s1")])
    after = apply(state, switch_update(state))
    assert [type(m) for m in after.messages] == [SystemMessage, HumanMessage]
    assert after.messages[0].content == "You are a friendly assistant chatting with Ada."


def test_unknown_persona_lists_the_choices() -> None:
    with pytest.raises(ValueError, match=r"Persona 'pirate'.*not one of: friendly, code_reviewer"):
        switch_update(ChatState(persona="pirate"))


def test_missing_template_variable_names_it() -> None:
    switch = PersonaSwitch({"p": SystemPromptTemplate("Hello {nickname}")}, key="persona")
    with pytest.raises(ValueError, match=r"missing variable.*'nickname'"):
        switch({"persona": "p", "messages": []})


def test_dict_state_and_custom_keys() -> None:
    switch = PersonaSwitch({"a": "A", "b": "B"}, key="mode", messages_key="history")
    update = switch({"mode": "b", "history": []})
    assert update is not None
    assert update["history"][0].content == "B"
    assert repr(switch) == "PersonaSwitch([a, b], key='mode')"
    assert switch.node_kind == "persona"


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="at least one persona"):
        PersonaSwitch({})
    with pytest.raises(TypeError, match="Persona 'x' must be a string or a SystemPromptTemplate"):
        PersonaSwitch({"x": 42})  # type: ignore[dict-item]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["friendly", "code_reviewer"]), st.sampled_from(["Ada", "Bo"])),
        min_size=1,
        max_size=12,
    )
)
def test_any_switch_sequence_keeps_one_system_message_first(
    steps: list[tuple[str, str]],
) -> None:
    state = ChatState()
    system_id = None
    for turn, (persona, user) in enumerate(steps):
        state = state.model_copy(update={"persona": persona, "user_name": user})
        before = list(state.messages)
        update = switch_update(state)
        state = apply(state, update)
        systems = [m for m in state.messages if isinstance(m, SystemMessage)]
        assert len(systems) == 1
        assert state.messages[0] is systems[0]
        assert system_id in (None, systems[0].id)  # the id never changes
        system_id = systems[0].id
        expected = REVIEWER if persona == "code_reviewer" else FRIENDLY.render(user_name=user)
        assert systems[0].content == expected
        if before and before[0].content == expected:
            assert update is None
        state = apply(state, {"messages": [HumanMessage(f"turn {turn}")]})


# ------------------------------------------------------------------ in a checkpointed graph


def wants_review(state: ChatState) -> bool:
    last_user = next(m for m in reversed(state.messages) if isinstance(m, HumanMessage))
    return "review" in last_user.text.lower()


def reply(state: ChatState) -> dict[str, Any]:
    system = state.messages[0]
    return {"messages": [AIMessage(f"[{system.metadata['persona']}] ok", name="assistant")]}


def persona_graph() -> Any:
    g = StateGraph(ChatState)
    g.add_node("triage", Router({"code_reviewer": wants_review}, default="friendly", key="persona"))
    g.add_node("persona", PersonaSwitch(PERSONAS))
    g.add_node("agent", reply)
    g.add_edge(START, "triage").add_edge("triage", "persona")
    g.add_edge("persona", "agent").add_edge("agent", END)
    return g.compile(checkpointer=MemoryCheckpointer())


def test_switching_persona_is_a_checkpointed_transition() -> None:
    app = persona_graph()
    assert [app.graph.nodes[n]["kind"] for n in ("triage", "persona", "agent")] == [
        "router",
        "persona",
        "function",
    ]
    app.invoke({"messages": [HumanMessage("Hi there!", name="User_A")]}, thread_id="t")
    first = app.get_state("t").values
    system_id = first.messages[0].id
    assert [m.type for m in first.messages] == ["system", "human", "ai"]
    assert first.messages[-1].content == "[friendly] ok"

    app.invoke({"messages": [HumanMessage("How are you?", name="User_A")]}, thread_id="t")
    app.invoke(
        {"messages": [HumanMessage("Please review this code: x = 1/0", name="User_A")]},
        thread_id="t",
    )
    final = app.get_state("t").values
    assert final.persona == "code_reviewer"
    assert [m.type for m in final.messages] == ["system"] + ["human", "ai"] * 3
    assert (final.messages[0].id, final.messages[0].content) == (system_id, REVIEWER)
    assert [m.content for m in final.messages if m.type == "ai"] == [
        "[friendly] ok",
        "[friendly] ok",
        "[code_reviewer] ok",
    ]

    history = list(reversed(list(app.get_state_history("t"))))  # oldest first
    # (the checkpoints before the inputs ran no node: they have no "nodes")
    persona_steps = [s for s in history if s.metadata.get("nodes") == ["persona"]]
    assert len(persona_steps) == 3
    systems = [s.values.messages[0] for s in persona_steps]
    assert [s.metadata["persona"] for s in systems] == ["friendly", "friendly", "code_reviewer"]
    assert {s.id for s in systems} == {system_id}
    # turn 2 kept the persona: the persona step changed nothing
    turn2 = history.index(persona_steps[1])
    assert history[turn2].values.messages == history[turn2 - 1].values.messages
    # turn 3 switched: the step before it still has the friendly system message
    turn3 = history.index(persona_steps[2])
    before, after = history[turn3 - 1].values, history[turn3].values
    assert (before.persona, before.messages[0].metadata["persona"]) == ("code_reviewer", "friendly")
    assert after.messages[0].content == REVIEWER
    assert [m.id for m in before.messages] == [m.id for m in after.messages]
