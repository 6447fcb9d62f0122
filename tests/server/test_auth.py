"""The token: refused without it (401), accepted as x-api-key or Bearer; exposure refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.errors import AuthenticationError

from .conftest import APPS, ROOT, Connect, Serve

TOKEN = "s3cret-token"


def test_requests_without_the_token_are_refused(serve: Serve, connect: Connect) -> None:
    server = serve(None, "agent", token=TOKEN)
    anonymous = connect(server)
    wrong = connect(server, api_key="not-the-token")
    right = connect(server, api_key=TOKEN)

    with pytest.raises(AuthenticationError, match="Missing API token"):
        anonymous.assistants.search()
    with pytest.raises(AuthenticationError, match="Invalid API token"):
        wrong.threads.create()
    with pytest.raises(httpx.HTTPStatusError) as waited:
        wrong.runs.wait(None, "agent", input={})
    bearer = httpx.post(
        f"{server.url}/assistants/search", json={}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    open_paths = [httpx.get(f"{server.url}{p}").status_code for p in ("/ok", "/info")]
    # the inspector's files are open (the page asks for the token); nothing else is
    near_ui = [httpx.get(f"{server.url}{p}").status_code for p in ("/ui/", "/uifoo")]

    assert waited.value.response.status_code == 401
    assert [a["graph_id"] for a in right.assistants.search()] == ["agent"]
    assert bearer.status_code == 200 and bearer.json()[0]["graph_id"] == "agent"
    assert open_paths == [200, 200]
    assert near_ui == [200, 401]
    out = right.runs.wait(None, "agent", input={"messages": [("user", "hi")]})
    assert out["messages"][-1]["content"] == "echo: hi"


def test_refuses_to_expose_an_unauthenticated_server(tmp_path: Path) -> None:
    def serve_on(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flowgraph.cli", "--db", str(tmp_path / "s.db"), "serve",
             f"agent={APPS}:agent", *args],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip

    refused = serve_on("--host", "0.0.0.0", "--port", "1")

    assert refused.returncode == 2
    assert "Refusing to serve on 0.0.0.0 without a token" in refused.stderr
    assert "--auth-token" in refused.stderr and "--allow-unauthenticated" in refused.stderr


def test_cors_for_browser_pages_of_the_allowed_origin(serve: Serve) -> None:
    server = serve(None, "agent", token=TOKEN, extra=("--cors-origin", "http://ui.test"))
    preflight = {
        "Origin": "http://ui.test",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key, content-type",
    }

    allowed = httpx.options(f"{server.url}/threads/search", headers=preflight)
    other = httpx.options(
        f"{server.url}/threads/search", headers={**preflight, "Origin": "http://evil.test"}
    )
    call = httpx.post(
        f"{server.url}/threads/search",
        json={},
        headers={"Origin": "http://ui.test", "x-api-key": TOKEN},
    )

    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://ui.test"
    assert "access-control-allow-origin" not in other.headers
    assert (
        call.status_code == 200 and call.headers["access-control-allow-origin"] == "http://ui.test"
    )
