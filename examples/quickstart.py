"""Quickstart: a tool-using agent whose every step is checkpointed to a SQLite file.

Runs offline by default: a ScriptedChatModel plays the LLM. Point it at a
real OpenAI-compatible endpoint with FLOWGRAPH_MODEL (e.g. "openai:gpt-4o-mini")
and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY.

    python examples/quickstart.py [path/to/checkpoints.db]   # a conversation, then its history
    flowgraph run examples/quickstart.py "What's the weather in Paris and Rome?"

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

FORECASTS = {"paris": "sunny, 24°C", "rome": "cloudy, 19°C"}
PACKING = {"sunny": "sunglasses", "cloudy": "a light jacket"}


@tool
def get_weather(city: str) -> str:
    """Look up today's weather.

    Args:
        city: The city to look up, e.g. "Paris".
    """
    return FORECASTS.get(city.lower(), "no forecast")


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: asks for the weather of the cities named, answers from the results."""
    last = messages[-1]
    results = {m.tool_call_id: m.text for m in messages if m.type == "tool"}
    looked_up = {  # city -> forecast, for every call answered so far
        call.args["city"]: results[call.id]
        for m in messages
        if m.type == "ai"
        for call in m.tool_calls
        if call.id in results
    }
    if last.type == "tool":  # this turn's results are in: one clause per city
        calls = [m for m in messages if m.type == "ai"][-1].tool_calls
        return "; ".join(_forecast(c.args["city"], results[c.id]) for c in calls) + "."
    cities = re.findall(r"\b(?:in|and) ([A-Z][a-z]+)", last.text)
    if cities:
        return {"tool_calls": [{"name": "get_weather", "args": {"city": c}} for c in cities]}
    if "pack" in last.text.lower() and looked_up:
        kit = [
            f"{PACKING.get(f.split(',')[0], 'an umbrella')} for {c}" for c, f in looked_up.items()
        ]
        return f"Pack {' and '.join(kit)}."
    return (
        "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); "
        'I look up the weather: ask "What\'s the weather in Paris?"'
    )


def _forecast(city: str, forecast: str) -> str:
    if forecast == "no forecast":
        return f"I have no forecast for {city}"
    sky, _, temperature = forecast.partition(", ")
    return f"{city} is {sky} ({temperature})"


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = create_react_agent(pick_model(), [get_weather], system="You are a concise travel assistant.")


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "chat.db"
    agent = app.with_checkpointer(SQLiteCheckpointer(db))
    thread = "quickstart"
    for question in ("What's the weather in Paris and Rome?", "What should I pack?"):
        print(f"user > {question}")
        for part in agent.stream(
            {"messages": [HumanMessage(question, name="traveller")]},
            thread_id=thread,
            mode="updates",
        ):
            for message in part.data.get("messages", []):
                if message.type == "ai" and message.tool_calls:
                    calls = ", ".join(f"{c.name}({c.args})" for c in message.tool_calls)
                    print(f"  step {part.step} {part.node}: calls {calls}")
                elif message.type == "tool":
                    print(f"  step {part.step} {part.node}: {message.name} -> {message.text}")
                elif message.type == "ai":
                    print(f"agent > {message.text}")
    history = list(agent.get_state_history(thread))
    print(f"\n{len(history)} checkpoints in {db}; newest first:")
    for snapshot in history[:5]:
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        print(f"  step {snapshot.step:>2}  {snapshot.metadata.get('source'):<6} {nodes}")
    print(f"The conversation has {len(agent.get_state(thread).values.messages)} messages.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
