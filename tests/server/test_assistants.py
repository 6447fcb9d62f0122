"""Assistants as the official client reads them: one per graph, with LangGraph's UUIDs."""

from __future__ import annotations

import uuid

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError

from .conftest import Connect, Serve

# What LangGraph Server answers for a graph named "agent" (uuid5 of its namespace).
AGENT_UUID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca"


def test_search_get_graph_and_schemas(serve: Serve, connect: Connect) -> None:
    server = serve(None, "agent", "slow")
    client = connect(server)

    found = client.assistants.search()
    by_graph = {a["graph_id"]: a for a in found}
    by_id = client.assistants.get(AGENT_UUID)
    by_name = client.assistants.get("agent")
    graph = client.assistants.get_graph("agent")
    schemas = client.assistants.get_schemas(AGENT_UUID)

    assert sorted(by_graph) == ["agent", "slow"]
    assert by_graph["agent"]["assistant_id"] == AGENT_UUID
    assert by_graph["slow"]["assistant_id"] == str(
        uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "slow")
    )
    assert by_id == by_name == by_graph["agent"]
    assert by_id["name"] == "agent" and by_id["version"] == 1
    assert [n["id"] for n in graph["nodes"]] == ["__start__", "reply", "ask", "__end__"]
    assert graph["edges"] == [
        {"source": "__start__", "target": "reply"},
        {"source": "reply", "target": "ask"},
        {"source": "ask", "target": "__end__"},
    ]
    assert schemas["graph_id"] == "agent"
    assert set(schemas["state_schema"]["properties"]) == {"messages", "n"}
    assert client.assistants.search(graph_id="slow", limit=5)[0]["graph_id"] == "slow"
    assert client.assistants.search(limit=1, offset=1) == [by_graph["slow"]]
    assert client.assistants.count() == 2


def test_unknown_assistant_is_404_naming_the_served_graphs(serve: Serve, connect: Connect) -> None:
    server = serve(None, "agent")
    client = connect(server)

    with pytest.raises(NotFoundError) as caught:
        client.assistants.get("nope")
    with pytest.raises(httpx.HTTPStatusError) as waited:  # wait() raises httpx's own error
        client.runs.wait(None, "nope", input={})

    assert "nope" in str(caught.value) and "agent" in str(caught.value)
    assert waited.value.response.status_code == 404


def test_graph_drawings_for_the_inspector(serve: Serve, connect: Connect) -> None:
    server = serve(None, "agent")
    client = connect(server)

    mermaid = client.http.client.get("/assistants/agent/graph", params={"format": "mermaid"})
    svg = client.http.client.get("/assistants/agent/graph", params={"format": "svg"})

    assert mermaid.status_code == 200 and "reply --> ask" in mermaid.text.replace("  ", " ")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.lstrip().startswith(("<svg", "<?xml"))
