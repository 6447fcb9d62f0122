"""Sample graphs every diagram test draws (shared by the text and the SVG/HTML tests).

Each builder returns a freshly compiled app with a MemoryCheckpointer, so a
test may run threads on it. The fixtures of the same names call them.

- `build_react_app`: the prebuilt ReAct agent (model <-> tools, conditional to END).
- `build_persona_app`: a Router node, a PersonaSwitch, a model, a conditional
  edge whose path_map keys differ from its targets ("finish" -> END) and a
  node routing with `Command` to declared destinations.
- `build_hard_names_app`: node names with spaces, quotes, brackets, pipes,
  Chinese, HTML, colons and Mermaid/DOT keywords (`end`, `graph`, `subgraph`).
- `build_send_app`: map-reduce, a branch returning `Send`s to a node nothing
  else leads to, then a join.
- `build_subgraph_app`: a compiled graph used as a node (a cluster in diagrams).
- `build_nested_app`: a subgraph inside a subgraph.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    CompiledGraph,
    MessagesState,
    ScriptedChatModel,
    Send,
    StateGraph,
    create_react_agent,
    tool,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.nodes import ModelNode, PersonaSwitch, Router

HARD_NAMES = (
    "my node",
    "my_node",
    'say "hi"',
    "[draft]",
    "问候",
    "end",
    "graph",
    "subgraph",
    "a-->b",
    "x;y",
    "{curly}",
    "<b>&amp;</b>",
    "back\\slash",
    "#hash",
    "pipe|bar",
    "ns:colon",
    "class",
)
"""Every name is a node of `build_hard_names_app`, chained in this order."""

HARD_LABELS = {'go "back"': "my node", "stop | done": END, "[中文]": "end"}
"""The path_map of the conditional edge leaving the last hard-named node."""


@tool
def get_weather(city: str) -> str:
    """Look up today's weather.

    Args:
        city: The city, e.g. "Paris".
    """
    return f"sunny in {city}"


def build_react_app() -> CompiledGraph:
    """The ReAct agent; one user turn makes one tool call, then answers."""
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            "It is sunny in Paris.",
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Rome"}}]},
            "Sunny in Rome too.",
        ]
    )
    return create_react_agent(model, [get_weather], checkpointer=MemoryCheckpointer())


def run_react_thread(app: CompiledGraph, thread_id: str = "t1", turns: int = 1) -> str:
    """Run `turns` user turns (each: agent, tools, agent) on `thread_id`."""
    questions = ["Weather in Paris?", "And in Rome?"]
    for question in questions[:turns]:
        app.invoke({"messages": [("user", question)]}, thread_id=thread_id)
    return thread_id


class PersonaState(MessagesState):
    persona: str = "friendly"
    audited: Annotated[list[str], operator.add] = []  # noqa: RUF012 - a pydantic field; pydantic copies the default


def _wants_review(state: PersonaState) -> bool:
    return "review" in state.messages[-1].text.lower()


def _after_agent(state: PersonaState) -> str:
    return "audit" if "review" in state.persona else "finish"


def _audit(state: PersonaState) -> Command:
    return Command(goto=END, update={"audited": [state.persona]})


def build_persona_app() -> CompiledGraph:
    """triage (router) -> persona (switch) -> agent (model) -> audit (Command) or END."""
    model = ScriptedChatModel(lambda messages: f"As {messages[0].text.split()[2]}: ok")
    graph = StateGraph(PersonaState)
    graph.add_node("triage", Router({"code_reviewer": _wants_review}, "friendly", key="persona"))
    graph.add_node(
        "persona",
        PersonaSwitch(
            {"friendly": "You are friendly.", "code_reviewer": "You are strict reviewing code."}
        ),
    )
    graph.add_node("agent", ModelNode(model))
    graph.add_node("audit", _audit, destinations=["triage", END])
    graph.add_edge(START, "triage").add_edge("triage", "persona").add_edge("persona", "agent")
    graph.add_conditional_edges("agent", _after_agent, {"audit": "audit", "finish": END})
    return graph.compile(checkpointer=MemoryCheckpointer(), name="persona")


class HardState(MessagesState):
    seen: Annotated[list[str], operator.add] = []  # noqa: RUF012 - a pydantic field; pydantic copies the default


def _hard_node(name: str) -> Any:
    def node(state: HardState) -> dict[str, list[str]]:
        return {"seen": [name]}

    return node


def _hard_exit(state: HardState) -> str:
    return "stop | done"


def build_hard_names_app() -> CompiledGraph:
    """A chain through every HARD_NAMES node, then a branch labelled with HARD_LABELS."""
    graph = StateGraph(HardState)
    graph.add_sequence([(name, _hard_node(name)) for name in HARD_NAMES])
    graph.add_edge(START, HARD_NAMES[0])
    graph.add_conditional_edges(HARD_NAMES[-1], _hard_exit, HARD_LABELS)
    return graph.compile(checkpointer=MemoryCheckpointer(), name='hard "names"')


class MapState(MessagesState):
    subjects: list[str] = []  # noqa: RUF012 - a pydantic field; pydantic copies the default
    jokes: Annotated[list[str], operator.add] = []  # noqa: RUF012 - a pydantic field; pydantic copies the default
    best: str = ""


def _plan(state: MapState) -> dict[str, list[str]]:
    return {"subjects": ["cats", "dogs", "owls"]}


def _fan_out(state: MapState) -> list[Send]:
    return [Send("write_joke", {"subjects": [s]}) for s in state.subjects]


def _write_joke(arg: dict[str, Any]) -> dict[str, list[str]]:
    return {"jokes": [f"a joke about {arg['subjects'][0]}"]}


def _pick_best(state: MapState) -> dict[str, str]:
    return {"best": sorted(state.jokes)[0]}


def build_send_app() -> CompiledGraph:
    """plan -> Send x N -> write_joke -> best -> END."""
    graph = StateGraph(MapState)
    graph.add_node("plan", _plan)
    graph.add_node("write_joke", _write_joke)
    graph.add_node("best", _pick_best)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", _fan_out)
    graph.add_edge("write_joke", "best")
    graph.add_edge("best", END)
    return graph.compile(checkpointer=MemoryCheckpointer(), name="map_reduce")


def _note(text: str) -> Any:
    def node(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(text)]}

    return node


def _more_research(state: MessagesState) -> Literal["search", "__end__"]:
    return "search" if len(state.messages) < 3 else END


def build_research_app() -> CompiledGraph:
    """The inner graph: search -> summarize, looping back to search once."""
    graph = StateGraph(MessagesState)
    graph.add_node("search", _note("found"))
    graph.add_node("summarize", _note("summary"))
    graph.add_edge(START, "search").add_edge("search", "summarize")
    graph.add_conditional_edges("summarize", _more_research)
    return graph.compile(name="research")


def build_subgraph_app() -> CompiledGraph:
    """plan -> research (a compiled graph) -> write -> END."""
    graph = StateGraph(MessagesState)
    graph.add_node("plan", _note("plan"))
    graph.add_node("research", build_research_app())
    graph.add_node("write", _note("report"))
    graph.add_edge(START, "plan").add_edge("plan", "research")
    graph.add_edge("research", "write").add_edge("write", END)
    return graph.compile(checkpointer=MemoryCheckpointer(), name="report")


def build_nested_app() -> CompiledGraph:
    """outer -> team (whose node `research` is itself a subgraph) -> END."""
    team = StateGraph(MessagesState)
    team.add_node("lead", _note("lead"))
    team.add_node("research", build_research_app())
    team.add_edge(START, "lead").add_edge("lead", "research").add_edge("research", END)
    graph = StateGraph(MessagesState)
    graph.add_node("team", team.compile(name="team"))
    graph.add_edge(START, "team").add_edge("team", END)
    return graph.compile(checkpointer=MemoryCheckpointer(), name="nested")


SAMPLE_BUILDERS = {
    "react": build_react_app,
    "persona": build_persona_app,
    "hard_names": build_hard_names_app,
    "send": build_send_app,
    "subgraph": build_subgraph_app,
    "nested": build_nested_app,
}
"""Every sample graph by name, for tests parametrized over all of them."""


@pytest.fixture
def react_app() -> CompiledGraph:
    return build_react_app()


@pytest.fixture
def react_thread(react_app: CompiledGraph) -> tuple[CompiledGraph, str]:
    """The ReAct agent after one turn on thread "t1" (agent, tools, agent)."""
    return react_app, run_react_thread(react_app, "t1")


@pytest.fixture
def persona_app() -> CompiledGraph:
    return build_persona_app()


@pytest.fixture
def hard_names_app() -> CompiledGraph:
    return build_hard_names_app()


@pytest.fixture
def send_app() -> CompiledGraph:
    return build_send_app()


@pytest.fixture
def subgraph_app() -> CompiledGraph:
    return build_subgraph_app()


@pytest.fixture
def nested_app() -> CompiledGraph:
    return build_nested_app()


@pytest.fixture(params=sorted(SAMPLE_BUILDERS))
def sample_app(request: pytest.FixtureRequest) -> CompiledGraph:
    """Each sample graph in turn."""
    return SAMPLE_BUILDERS[request.param]()
