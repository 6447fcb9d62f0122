"""A ReAct agent: the model asks for tools in parallel, reads the results, and answers.

One of the tools fails (there is no weather in Atlantis): the failure becomes a
ToolMessage with status="error" that the model can read and work around -- the
run does not crash. Knowing the temperature, the model goes round the loop
again to convert it to °F. Every step is a checkpoint, listed at the end.

Runs offline with a scripted model; set FLOWGRAPH_MODEL (e.g. "openai:gpt-4o-mini")
and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY to use a real one.

    python examples/react_agent.py [path/to/checkpoints.db]
    flowgraph run examples/react_agent.py "Weather in Paris (also in °F) and in Atlantis?"

`app` below is what `flowgraph run` (and `draw`) loads; main() puts the same
app on a SQLite file of its own with `app.with_checkpointer(...)`.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from flowgraph import HumanMessage, create_react_agent, tool
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

WEATHER = {"paris": "sunny, 24°C", "oslo": "snowy, -3°C"}


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city to look up, e.g. "Paris".
    """
    if city.lower() not in WEATHER:
        # An exception is fine: ToolNode turns it into a status="error" result.
        raise LookupError(f"no weather station in {city}")
    return WEATHER[city.lower()]


@tool
def convert(celsius: float) -> str:
    """Convert a temperature from Celsius to Fahrenheit."""
    return f"{celsius * 9 / 5 + 32:.1f}°F"


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: weather for each city named, then °F once it knows the °C."""
    asked = max(i for i, m in enumerate(messages) if m.type == "human")
    question, turn = messages[asked].text, messages[asked + 1 :]
    cities = re.findall(r"\bin ([A-Z][a-z]+)", question)
    if not cities:
        return (
            "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); "
            'I read weather stations: ask "Weather in Paris (also in °F)?"'
        )
    if not turn:  # round 1: every city at once; ToolNode runs the calls concurrently
        return {"tool_calls": [{"name": "get_weather", "args": {"city": c}} for c in cities]}
    results = {m.tool_call_id: m for m in turn if m.type == "tool"}
    calls = [(c, results[c.id]) for m in turn if m.type == "ai" for c in m.tool_calls]
    weather = {
        c.args["city"]: r.text
        for c, r in calls
        if c.name == "get_weather" and r.status == "success"
    }
    celsius = {
        city: float(text.split(", ")[1].removesuffix("°C")) for city, text in weather.items()
    }
    fahrenheit = {c.args["celsius"]: r.text for c, r in calls if c.name == "convert"}
    if "°F" in question and celsius and not fahrenheit:  # round 2: convert what it read
        return {
            "tool_calls": [{"name": "convert", "args": {"celsius": t}} for t in celsius.values()]
        }
    answer = []
    for city, text in weather.items():
        also = fahrenheit.get(celsius[city])
        answer.append(f"{city} is {text.replace(', ', ' at ')}{f' ({also})' if also else ''}.")
    answer += [f"I could not find any weather for {c}." for c in cities if c not in weather]
    return " ".join(answer)


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = create_react_agent(
    pick_model(),
    [get_weather, convert],
    system="You are a weather assistant. Use the tools; say so when one fails.",
)


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "react.db"
    agent = app.with_checkpointer(SQLiteCheckpointer(db))
    thread = "react-demo"
    question = "Weather in Paris (also in °F) and in Atlantis?"
    state = agent.invoke({"messages": [HumanMessage(question)]}, thread_id=thread)

    # The whole conversation is in the state, tool results included.
    for message in state.messages:
        if message.type == "human":
            print(f"user  > {message.text}")
        elif message.type == "ai" and message.tool_calls:
            for call in message.tool_calls:
                print(f"agent > calls {call.name}({call.args})  [{call.id}]")
        elif message.type == "tool":
            print(f"tool  < {message.name} [{message.status}]: {message.text}")
        elif message.type == "ai":
            print(f"agent > {message.text}")

    # Each step left a checkpoint: a place to inspect, resume or fork from.
    print("\nCheckpoints, newest first:")
    for snapshot in agent.get_state_history(thread):
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        upcoming = ", ".join(snapshot.next) or "(done)"
        count = len(snapshot.values.messages)
        print(f"  step {snapshot.step}: ran {nodes:<10} next {upcoming:<7} messages: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
