"""Quickstart: a tool-using agent whose every step is checkpointed to a SQLite file.

Runs offline by default: a ScriptedChatModel plays the LLM. Point it at a
real OpenAI-compatible endpoint with FLOWGRAPH_MODEL (e.g. "openai:gpt-4o-mini")
and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY.

    python examples/quickstart.py [path/to/checkpoints.db]   # a conversation, then its history
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from flowgraph import HumanMessage, create_react_agent, tool
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model


@tool
def get_weather(city: str) -> str:
    """Look up today's weather.

    Args:
        city: The city to look up, e.g. "Paris".
    """
    forecasts = {"paris": "sunny, 24°C", "rome": "cloudy, 19°C"}
    return forecasts.get(city.lower(), "no forecast")


def pick_model() -> object:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(
        [
            {
                "tool_calls": [
                    {"name": "get_weather", "args": {"city": "Paris"}},
                    {"name": "get_weather", "args": {"city": "Rome"}},
                ]
            },
            "Paris is sunny (24°C); Rome is cloudy (19°C).",
            "Pack sunglasses for Paris and a light jacket for Rome.",
        ]
    )


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "chat.db"
    app = create_react_agent(
        pick_model(),  # type: ignore[arg-type]  # a ChatModel either way
        [get_weather],
        system="You are a concise travel assistant.",
        checkpointer=SQLiteCheckpointer(db),
    )
    thread = "quickstart"
    for question in ("What's the weather in Paris and Rome?", "What should I pack?"):
        print(f"user > {question}")
        for part in app.stream(
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
    history = list(app.get_state_history(thread))
    print(f"\n{len(history)} checkpoints in {db}; newest first:")
    for snapshot in history[:5]:
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        print(f"  step {snapshot.step:>2}  {snapshot.metadata.get('source'):<6} {nodes}")
    print(f"The conversation has {len(app.get_state(thread).values.messages)} messages.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
