"""A small MCP server for examples/mcp_tools.py, written with the MCP SDK's MCPServer.

It runs on its own too: `python examples/_mcp_weather_server.py` (stdio), or
`python examples/_mcp_weather_server.py --port 8000` (http://127.0.0.1:8000/mcp).
It knows nothing of flowgraph: any MCP client can use it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
from typing import TypedDict

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("weather", log_level="WARNING")

FORECASTS = {"paris": ("sunny", 24.0), "oslo": ("snow", -3.0)}
# a 1x1 PNG, standing in for a rendered map
MAP_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


class Forecast(TypedDict):
    city: str
    conditions: str
    temperature_c: float


@server.tool()
def get_forecast(city: str) -> Forecast:
    """Today's forecast for a city, e.g. "Paris"."""
    if city.lower() not in FORECASTS:
        raise ToolError(f"no weather station in {city}")
    conditions, temperature = FORECASTS[city.lower()]
    return {"city": city, "conditions": conditions, "temperature_c": temperature}


@server.tool(structured_output=False)
def weather_map(city: str) -> list[object]:
    """A weather map of a city, as an image."""
    return [f"Weather map of {city}", Image(data=MAP_PNG, format="png")]


@server.tool()
async def station_report(city: str, ctx: Context) -> str:
    """Collects the readings of every station in a city (slow; reports progress)."""
    stations = 3
    for done in range(1, stations + 1):
        await asyncio.sleep(0.05)
        await ctx.report_progress(done, stations, f"station {done} of {stations} read")
    return f"{stations} stations in {city} agree with the forecast."


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    port = parser.parse_args().port
    if port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)
