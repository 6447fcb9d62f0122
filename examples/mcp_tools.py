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
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from flowgraph import HumanMessage, ImagePart, ToolMessage, create_react_agent
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.integrations.mcp import MCPClient
from flowgraph.models import ScriptedChatModel, init_chat_model

SERVER = Path(__file__).resolve().parent / "_mcp_weather_server.py"


def pick_model() -> object:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(
        [
            {
                "tool_calls": [
                    {"name": "get_forecast", "args": {"city": "Paris"}},
                    {"name": "get_forecast", "args": {"city": "Atlantis"}},
                    {"name": "weather_map", "args": {"city": "Paris"}},
                    {"name": "station_report", "args": {"city": "Paris"}},
                ]
            },
            "Paris: sunny, 24°C (map attached). There is no weather station in Atlantis.",
        ]
    )


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "mcp.db"
    connections = {
        "weather": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)]}
    }
    with MCPClient(connections) as client:  # closing it stops the server process
        tools = asyncio.run(client.get_tools())  # the session outlives this event loop
        print("tools from the MCP server:")
        for tool in tools:
            print(f"  {tool.name}: {tool.description}")
        app = create_react_agent(
            pick_model(),  # type: ignore[arg-type]  # a ChatModel either way
            tools,
            system="You are a weather assistant. Use the tools.",
            checkpointer=SQLiteCheckpointer(db),
        )
        question = "Weather in Paris and in Atlantis? Show me a map of Paris."
        for part in app.stream(
            {"messages": [HumanMessage(question)]}, thread_id="mcp-demo", mode="events"
        ):
            if part.data.get("event") == "progress":
                data = part.data
                print(
                    f"  progress [{data['tool']}]: {data['progress']:g}/{data['total']:g} "
                    f"{data['message']}"
                )
        state = app.get_state("mcp-demo").values

    for message in state.messages:
        if isinstance(message, ToolMessage):
            images = [p for p in message.content if isinstance(p, ImagePart)]
            shown = " ".join(message.text.split())
            print(f"tool  < {message.name} [{message.status}]: {shown}")
            if message.artifact is not None:
                print(f"        artifact: {message.artifact}")
            for image in images:
                print(f"        image: {image.mime_type}, {len(image.as_bytes())} bytes")
        elif message.type == "ai" and message.text:
            print(f"agent > {message.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
