"""Export diagrams of two agents in every format: Mermaid, DOT, SVG, HTML and PNG.

`app.render(path)` picks the format from the suffix. SVG and HTML are laid
out by flowgraph itself, so they need nothing installed; the HTML page is one
file with pan/zoom and node details on hover that loads nothing from the
network. PNG is drawn by Graphviz and is skipped (with the reason) when its
`dot` program is missing. With `thread_id=...` the diagram shows the path a
conversation actually took: nodes and edges with how often and in which steps.

Runs offline with scripted models; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/export_diagrams.py [output-directory]   (default: ./diagrams)
    flowgraph draw examples/export_diagrams.py -o persona.svg
    flowgraph draw examples/export_diagrams.py:react_agent -o react.html
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from flowgraph import (
    START,
    CompiledGraph,
    HumanMessage,
    MessagesState,
    ModelNode,
    PersonaSwitch,
    Router,
    ScriptedChatModel,
    StateGraph,
    ToolNode,
    create_react_agent,
    tool,
    tools_condition,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import DiagramError
from flowgraph.models import init_chat_model

FORMATS = (".mmd", ".dot", ".svg", ".html", ".png")


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


@tool
def lint(code: str) -> str:
    """Run a linter over a snippet of Python code."""
    return "E999 division by zero possible" if "/" in code else "clean"


def pick_model(script: Any) -> Any:
    """The real model named by FLOWGRAPH_MODEL, or one playing `script` for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(script)


def weather_reply(messages: list[Any]) -> Any:
    """The scripted model of the ReAct agent: looks the city up, then says what it read."""
    last = messages[-1]
    if last.type == "tool":
        return f"It is {last.text}."
    city = re.search(r"\bin ([A-Z][a-z]+)", last.text)
    if city is None:
        return 'I am a scripted weather agent: ask "Weather in Paris?"'
    return {"tool_calls": [{"name": "get_weather", "args": {"city": city[1]}}]}


def react_agent() -> CompiledGraph:
    """The prebuilt ReAct agent: model <-> tools, conditional edges to END."""
    return create_react_agent(
        pick_model(weather_reply), [get_weather], checkpointer=MemoryCheckpointer()
    )


class ChatState(MessagesState):
    persona: str = "friendly"


def wants_review(state: ChatState) -> bool:
    return "review" in state.messages[-1].text.lower()


def review_reply(messages: list[Any]) -> Any:
    """The scripted model of the persona agent: a reviewer lints the code it is shown."""
    last = messages[-1]
    if last.type == "tool":
        return f"Lint says: {last.text}."
    if "code reviewer" not in messages[0].text:
        return 'Happy to help! Ask me to "review: <some code>" to meet the reviewer.'
    code = last.text.partition(":")[2].strip() or last.text
    return {"tool_calls": [{"name": "lint", "args": {"code": code}}]}


def persona_agent() -> CompiledGraph:
    """A router picks a persona, PersonaSwitch installs its system message, the model may lint."""
    model = pick_model(review_reply)
    graph = StateGraph(ChatState)
    graph.add_node("triage", Router({"code_reviewer": wants_review}, "friendly", key="persona"))
    graph.add_node(
        "persona",
        PersonaSwitch(
            {
                "friendly": "You are a friendly assistant.",
                "code_reviewer": "You are a strict code reviewer.",
            }
        ),
    )
    graph.add_node("agent", ModelNode(model, tools=[lint]))
    graph.add_node("tools", ToolNode([lint]))
    graph.add_edge(START, "triage").add_edge("triage", "persona").add_edge("persona", "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=MemoryCheckpointer(), name="persona_switch")


# What `flowgraph run` and `flowgraph draw` load (the other one: export_diagrams.py:react_agent).
app = persona_agent()


def export(app: CompiledGraph, name: str, out: Path, thread_id: str) -> None:
    """Write `name.<suffix>` for every format, then the thread's path as SVG and HTML."""
    for suffix in FORMATS:
        target = out / f"{name}{suffix}"
        try:
            app.render(target)
        except DiagramError as error:  # only .png needs something installed: Graphviz
            print(f"  skipped {target.name}: {error}")
        else:
            print(f"  wrote {target.name}")
    for suffix in (".svg", ".html"):
        target = app.render(out / f"{name}.path{suffix}", thread_id=thread_id)
        print(f"  wrote {target.name} (path of thread {thread_id!r})")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("diagrams")
    out.mkdir(parents=True, exist_ok=True)

    react = react_agent()
    react.invoke({"messages": [HumanMessage("Weather in Paris?")]}, thread_id="weather")
    print(f"ReAct agent -> {out}")
    print(react.to_ascii())
    export(react, "react_agent", out, "weather")

    personas = persona_agent()
    question = "Please review: def f(n): return 10 / n"
    personas.invoke({"messages": [HumanMessage(question)]}, thread_id="review")
    print(f"\nPersona switch -> {out}")
    export(personas, "persona_switch", out, "review")

    page = out / "persona_switch.path.html"
    print(f"\nOpen {page} in a browser: one file, nothing loaded from the network.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
