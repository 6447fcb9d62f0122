"""A ReAct agent: the model asks for tools in parallel, reads the results, and answers.

One of the tools fails (there is no weather in Atlantis): the failure becomes a
ToolMessage with status="error" that the model can read and work around -- the
run does not crash. Every step is a checkpoint, listed at the end.

Runs offline with a scripted model; set FLOWGRAPH_MODEL (e.g. "openai:gpt-4o-mini")
and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY to use a real one.

    python examples/react_agent.py [path/to/checkpoints.db]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from flowgraph import HumanMessage, create_react_agent, tool
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

WEATHER = {"paris": "sunny, 24°C", "oslo": "snow, -3°C"}


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


def pick_model() -> object:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(
        [
            # one model turn, three tool calls: ToolNode runs them concurrently
            {
                "tool_calls": [
                    {"name": "get_weather", "args": {"city": "Paris"}},
                    {"name": "get_weather", "args": {"city": "Atlantis"}},
                    {"name": "convert", "args": {"celsius": 24}},
                ]
            },
            "Paris is sunny at 24°C (75.2°F). I could not find any weather for Atlantis.",
        ]
    )


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "react.db"
    app = create_react_agent(
        pick_model(),  # type: ignore[arg-type]  # a ChatModel either way
        [get_weather, convert],
        system="You are a weather assistant. Use the tools; say so when one fails.",
        checkpointer=SQLiteCheckpointer(db),
    )
    thread = "react-demo"
    question = "Weather in Paris (also in °F) and in Atlantis?"
    state = app.invoke({"messages": [HumanMessage(question)]}, thread_id=thread)

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
    for snapshot in app.get_state_history(thread):
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        upcoming = ", ".join(snapshot.next) or "(done)"
        count = len(snapshot.values.messages)
        print(f"  step {snapshot.step}: ran {nodes:<10} next {upcoming:<7} messages: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
