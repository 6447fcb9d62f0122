"""An agent whose tools come from an MCP server: the example starts the server itself.

`_mcp_weather_server.py` (beside this file) is a plain MCP server written with
the MCP SDK. `MCPClient` starts it as a subprocess (stdio), lists its tools and
hands them to `create_react_agent` as ordinary flowgraph tools. The run is a
sync `invoke`; the server's progress notifications arrive in
`stream(mode="events")`; an image comes back as an ImagePart and structured
content as the ToolMessage's artifact; the server's own error ("no weather
station") is a status="error" result the model reads.

Needs the MCP SDK: pip install 'flowgraph[mcp]'. Runs offline with a scripted
model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY) for a
real one.

    python examples/mcp_tools.py [path/to/checkpoints.db]
    flowgraph run examples/mcp_tools.py "Weather in Paris and in Atlantis? Show me a map of Paris."

`app` below is what `flowgraph run` (and `draw`) loads. Its tools come from the
server, so loading it starts the server to list them; the server stops when the
client closes, or when the process ends.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from flowgraph import HumanMessage, ImagePart, ToolMessage, create_react_agent
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.integrations.mcp import MCPClient
from flowgraph.models import ScriptedChatModel, init_chat_model

SERVER = Path(__file__).resolve().parent / "_mcp_weather_server.py"


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: a forecast per city named (a map and station readings if asked)."""
    asked = max(i for i, m in enumerate(messages) if m.type == "human")
    question, turn = messages[asked].text, messages[asked + 1 :]
    cities = re.findall(r"\bin ([A-Z][a-z]+)", question)
    if not cities:
        return (
            "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); "
            'ask "Weather in Paris? Show me a map of Paris."'
        )
    if not turn:  # one round: ToolNode runs the calls concurrently, on one MCP session
        calls = [{"name": "get_forecast", "args": {"city": c}} for c in cities]
        if "map" in question.lower():
            calls.append({"name": "weather_map", "args": {"city": cities[0]}})
        calls.append({"name": "station_report", "args": {"city": cities[0]}})
        return {"tool_calls": calls}
    results = [m for m in turn if isinstance(m, ToolMessage)]
    forecasts = {  # the structured content: no need to parse the text
        r.artifact["city"]: r.artifact
        for r in results
        if r.name == "get_forecast" and r.status == "success"
    }
    has_map = any(r.name == "weather_map" and r.status == "success" for r in results)
    answer = []
    for city, forecast in forecasts.items():
        shown = f"{city}: {forecast['conditions']}, {forecast['temperature_c']:g}°C"
        answer.append(shown + (" (map attached)." if has_map and city == cities[0] else "."))
    answer += [f"There is no weather station in {c}." for c in cities if c not in forecasts]
    return " ".join(answer)


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


# The server is started when first needed (here: to list its tools) and shared by every
# call; `client.close()` (or the end of the process) stops it.
client = MCPClient(
    {"weather": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)]}}
)
# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = create_react_agent(
    pick_model(),
    client.get_tools_sync(),
    system="You are a weather assistant. Use the tools.",
)


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "mcp.db"
    agent = app.with_checkpointer(SQLiteCheckpointer(db))
    print("tools from the MCP server:")
    for tool in client.get_tools_sync():
        print(f"  {tool.name}: {tool.description}")

    question = "Weather in Paris and in Atlantis? Show me a map of Paris."
    for part in agent.stream(
        {"messages": [HumanMessage(question)]}, thread_id="mcp-demo", mode="events"
    ):
        if part.data.get("event") == "progress":  # the server's progress notifications
            data = part.data
            print(
                f"  progress [{data['tool']}]: {data['progress']:g}/{data['total']:g} "
                f"{data['message']}"
            )
    client.close()  # stops the server process

    for message in agent.get_state("mcp-demo").values.messages:
        if isinstance(message, ToolMessage):
            shown = " ".join(message.text.split())
            print(f"tool  < {message.name} [{message.status}]: {shown}")
            if message.artifact is not None:
                print(f"        artifact: {message.artifact}")
            for image in (p for p in message.content if isinstance(p, ImagePart)):
                print(f"        image: {image.mime_type}, {len(image.as_bytes())} bytes")
        elif message.type == "ai" and message.text:
            print(f"agent > {message.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
