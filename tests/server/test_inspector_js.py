"""The inspector's pure JavaScript, run under node: the state diff and the SSE reader.

The browser test clicks through the common cases; these pin the edges a
click-through rarely meets (a CRLF cut between two network chunks, a message
edited in place, a nested field). The page's own files are imported as they
are shipped, as ES modules.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed: the inspector's scripts cannot run outside a page"
)
UI = ROOT / "flowgraph" / "server" / "ui"


def run_module(tmp_path: Path, body: str) -> Any:
    """Run `body` as an ES module beside copies of the page's scripts; what it prints (JSON)."""
    folder = tmp_path / "ui"
    shutil.copytree(UI, folder)
    (folder / "package.json").write_text('{"type": "module"}')
    (folder / "check.js").write_text(body)
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(folder / "check.js")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_diff_of_two_states(tmp_path: Path) -> None:
    out = run_module(
        tmp_path,
        """
import { countMessages, describe, diffValues } from "./diff.js";
const hi = { type: "human", content: "hi", id: "m1" };
const ai = { type: "ai", content: "echo", id: "m2", tool_calls: [] };
const cases = [
  [{}, { messages: [hi], n: 0 }],
  [{ messages: [hi] }, { messages: [hi, ai] }],
  [{ messages: [hi, ai] }, { messages: [hi, { ...ai, content: "edited" }] }],
  [{ messages: [hi, ai] }, { messages: [hi] }],
  [{ steps: ["one"] }, { steps: ["one", "two"] }],
  [{ steps: ["one", "two"] }, { steps: ["two"] }],
  [{ a: { b: 1, c: 2 }, gone: true }, { a: { b: 1, c: 3, d: [4] } }],
  [{ messages: [hi], n: 1 }, { messages: [hi], n: 1 }],
  [undefined, { text: "x" }],
];
console.log(JSON.stringify({
  lines: cases.map(([before, after]) => diffValues(before, after).map(describe)),
  kinds: diffValues({ messages: [hi, ai] }, { messages: [{ ...hi, content: "x" }] })
    .map((c) => [c.kind, c.added.length, c.removed.length, c.changed.length]),
  counts: [
    countMessages({ messages: [hi, ai], other: [hi] }),
    countMessages({ n: [1] }),
    countMessages(null),
  ],
}));
""",
    )
    assert out["lines"] == [
        ["messages: +1 human", "n: added 0"],
        ["messages: +1 ai"],
        ["messages: ~1 edited"],
        ["messages: \u22121 ai"],  # a minus sign
        ['steps: + "two"'],
        ['steps: ["one","two"] → ["two"]'],
        ["a.c: 2 → 3", "a.d: added [4]", "gone: removed (was true)"],
        [],
        ['text: added "x"'],
    ]
    assert out["kinds"] == [["messages", 0, 1, 1]]
    assert out["counts"] == [3, 0, 0]


def test_sse_reader(tmp_path: Path) -> None:
    out = run_module(
        tmp_path,
        """
import { readSse } from "./api.js";
const chunks = [
  "event: metadata\\r\\ndata: {\\"run_id\\": \\"r1\\"}\\r",  // a CRLF cut in two
  "\\nid: 0\\r\\n\\r\\n: heartbeat\\r\\n\\r\\nevent: values\\ndata: {\\"a\\":",
  " 1}\\nid: 1\\n\\nevent: custom\\ndata: line one\\ndata: line two\\n\\n",
  "event: nothing\\n\\ndata: [1, 2]",  // no event name; the stream ends without a blank line
];
const encoder = new TextEncoder();
const body = new ReadableStream({
  start(controller) {
    for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
    controller.close();
  },
});
const events = [];
for await (const event of readSse(body)) events.push(event);
console.log(JSON.stringify(events));
""",
    )
    assert out == [
        {"event": "metadata", "data": {"run_id": "r1"}, "id": "0"},
        {"event": "values", "data": {"a": 1}, "id": "1"},
        {"event": "custom", "data": "line one\nline two", "id": None},
        {"event": "message", "data": [1, 2], "id": None},
    ]
