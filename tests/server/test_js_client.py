"""The JavaScript client, `@langchain/langgraph-sdk`, against the same server (node required).

The package is installed with npm into a cache folder shared by test runs;
without node or npm, or when the install fails (no registry), the test is
skipped saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import FakeLLM, Serve

SDK_VERSION = "1.15.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flowgraph-tests" / "js"
SCRIPT = Path(__file__).with_name("js_client.mjs")
TOKEN = "js-token"


def _installed_sdk() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the JavaScript client cannot run")
    package = CACHE / "node_modules" / "@langchain" / "langgraph-sdk" / "package.json"
    if package.exists() and json.loads(package.read_text())["version"] == SDK_VERSION:
        return CACHE
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "package.json").write_text('{"name": "fg-js-client", "private": true}')
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", f"@langchain/langgraph-sdk@{SDK_VERSION}"],
        cwd=CACHE, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"npm could not install @langchain/langgraph-sdk: {done.stderr[-500:]}")
    return CACHE


def test_the_javascript_client(serve: Serve, llm: FakeLLM, tmp_path: Path) -> None:
    cache = _installed_sdk()
    server = serve(None, "agent", "chat", "nested", token=TOKEN, env={"FG_TEST_LLM_URL": llm.url})
    script = cache / SCRIPT.name
    shutil.copy(SCRIPT, script)  # next to its node_modules, so the import resolves

    done = subprocess.run(
        ["node", str(script), server.url, TOKEN], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)

    assert seen["assistants"] == [
        ["agent", "fe096781-5601-53d2-b2f6-0d3403f7e9ca"],
        ["chat", seen["assistants"][1][1]],
        ["nested", seen["assistants"][2][1]],
    ]
    assert seen["paused"]["__interrupt__"][0]["value"] == {"question": "Approve?"}
    assert seen["status"] == "interrupted"
    assert seen["events"][0] == "metadata" and "updates" in seen["events"]
    assert [m["content"] for m in seen["last"]["messages"]] == [
        "hi from js", "echo: hi from js", "answer: js says yes"
    ]  # fmt: skip
    assert "".join(seen["tokens"]) == "".join(llm.words) and len(seen["tokens"]) > 1
    assert seen["next"] == [] and seen["history"] == 4
    assert seen["runs"] == ["success", "success"]
    namespaced = [e for e in seen["subgraphEvents"] if "|" in e]
    assert [e.split("|")[0] for e in namespaced] == ["custom", "custom", "updates"]
    assert namespaced[0].split("|")[1].startswith("child:")
    # resume, update and goto in one command: ask answered and reply ran (on n=40) in one
    # step, then ask asks again
    assert [m["content"] for m in seen["routed"]["messages"]] == [
        "first", "echo: first", "answer: ok", "echo: echo: first"
    ]  # fmt: skip
    assert seen["routed"]["n"] == 41 and seen["routed"]["__interrupt__"]
    assert seen["item"]["value"] == {"text": "from js"} and seen["item"]["createdAt"]
    assert seen["missing"] is None and seen["afterDelete"] is None
    assert [i["key"] for i in seen["found"]] == ["k1"]
    assert seen["namespaces"] == [["js", "notes"]]
