"""`content` reads as LangChain's; `content_blocks` holds every part in order.

Each reading is compared with langchain_core's own messages, built from the
same arguments. Threads written before the split load from a stored
checkpoint blob and message dicts (tests/messages/data, written by the
earlier code) and read the same text, tool calls and parts.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core import messages as lc

from flowgraph.checkpoint import serde
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    RemoveMessage,
    TextPart,
    ToolCall,
    ToolCallChunk,
    ToolCallPart,
    messages_from_dicts,
    messages_to_dicts,
)

CALLS = [{"id": "c1", "name": "add", "args": {"a": 2}}]
STORED = Path(__file__).parent / "data" / "stored_before_content_blocks.json"
ROOT = Path(__file__).parents[2]
"""Where flowgraph's source is: the checkers are pointed at it (an editable install's
finder hook is invisible to them, which another part of #30 deals with)."""


def _printed(message: Any) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print(message.content)
        message.pretty_print()
    return out.getvalue()


@pytest.mark.parametrize(
    ("content", "calls"),
    [("", CALLS), ("Let me add.", CALLS), ("plain", []), ("", [])],
)
def test_content_of_text_and_tool_calls_reads_as_langchain(content: str, calls: Any) -> None:
    ours = AIMessage(content, tool_calls=calls)
    theirs = lc.AIMessage(content, tool_calls=calls)
    assert ours.content == theirs.content
    assert ours.text == theirs.text
    assert [dict(c) for c in ours.tool_calls] == theirs.tool_calls
    assert _printed(ours) == _printed(theirs)  # print(m.content) and pretty_print()


def test_content_blocks_are_every_part_in_order_as_langchain() -> None:
    ours = AIMessage("Let me add.", tool_calls=CALLS)
    theirs = lc.AIMessage("Let me add.", tool_calls=CALLS)
    assert [p.model_dump() for p in ours.content_blocks] == theirs.content_blocks
    assert AIMessage("").content_blocks == lc.AIMessage("").content_blocks == []
    assert HumanMessage("hi").content_blocks == [TextPart("hi")]


def test_a_list_with_reasoning_or_media_reads_as_the_list() -> None:
    parts = [ReasoningPart("think"), ToolCallPart(id="c1", name="add"), TextPart("done")]
    message = AIMessage(parts)
    assert message.content == parts == message.content_blocks
    assert message.text == "done" and message.reasoning == "think"
    assert [c.id for c in message.tool_calls] == ["c1"]
    picture = HumanMessage(["look", ImagePart(url="https://example.com/a.png")])
    assert picture.content == [TextPart("look"), ImagePart(url="https://example.com/a.png")]
    # a list of text parts alone stays a list, as LangChain's does
    assert AIMessage([TextPart("hi")]).content == [TextPart("hi")]
    text_parts = [{"type": "text", "text": "hi"}]
    assert lc.AIMessage(text_parts).content == text_parts


def test_interleaved_text_and_calls_read_as_the_text_and_keep_their_order() -> None:
    message = AIMessage([TextPart("a"), ToolCallPart(id="c1", name="f"), TextPart("b")])
    assert message.content == "ab"
    assert [type(p) for p in message.content_blocks] == [TextPart, ToolCallPart, TextPart]


def test_list_content_with_tool_calls_keeps_both() -> None:
    """LangChain keeps `content=[...]` and adds `tool_calls=` after it in content_blocks;
    so does flowgraph. Text parts and calls only read as the text (DESIGN §1), where
    LangChain gives back the list it was given."""
    ours = AIMessage([TextPart("hi")], tool_calls=CALLS)
    theirs = lc.AIMessage([{"type": "text", "text": "hi"}], tool_calls=CALLS)
    assert [p.model_dump() for p in ours.content_blocks] == theirs.content_blocks
    assert [dict(c) for c in ours.tool_calls] == theirs.tool_calls
    assert ours.content == "hi" and theirs.content == [{"type": "text", "text": "hi"}]
    dict_parts = AIMessage(content=[{"type": "text", "text": "hi"}], tool_calls=CALLS)
    assert dict_parts == ours


def test_equality_dumps_and_repr() -> None:
    message = AIMessage("hi", tool_calls=CALLS)
    assert message == AIMessage(content=[TextPart("hi"), ToolCallPart(**CALLS[0])])
    assert message != AIMessage("hi")
    # dumps keep every part in order under "content", so they load back equal
    assert messages_from_dicts(messages_to_dicts([message])) == [message]
    assert AIMessage(**message.model_dump()) == message
    shown = repr(message)
    assert shown == repr(lc.AIMessage("hi", tool_calls=CALLS))
    assert "content='hi'" in shown
    assert (
        "tool_calls=[{'name': 'add', 'args': {'a': 2}, 'id': 'c1', 'type': 'tool_call'}]" in shown
    )


def test_remove_message_reads_as_an_empty_message() -> None:
    theirs = lc.RemoveMessage(id="m1")
    ours = RemoveMessage("m1")
    assert (ours.content, ours.text, ours.content_blocks) == (
        theirs.content,
        theirs.text,
        theirs.content_blocks,
    )
    assert ours.name is None


def test_chunk_content_reads_as_text_and_tool_calls_parse_so_far() -> None:
    assert AIMessageChunk("Hel").content == lc.AIMessageChunk(content="Hel").content
    assert AIMessageChunk("Hel").content_blocks == [TextPart("Hel")]
    fragments = [
        {"index": 0, "id": "c1", "name": "add", "args": '{"a": 1, "b": "x'},
        {"index": 1, "id": None, "name": None, "args": ""},
    ]
    theirs = lc.AIMessageChunk(content="", tool_call_chunks=fragments)
    ours = AIMessageChunk([ToolCallChunk(**f) for f in fragments])
    assert ours.content == theirs.content == ""
    assert [{**dict(c), "id": c.id or None} for c in ours.tool_calls] == theirs.tool_calls
    broken = [{"index": 0, "id": "c1", "name": "add", "args": "nope"}]
    assert AIMessageChunk([ToolCallChunk(**broken[0])]).tool_calls == []
    assert lc.AIMessageChunk(content="", tool_call_chunks=broken).tool_calls == []
    whole = AIMessageChunk("The sum") + AIMessageChunk([ToolCallChunk(**fragments[0])])
    assert whole.content == "The sum"
    assert whole.tool_calls == [ToolCall(id="c1", name="add", args={"a": 1, "b": "x"})]
    thinking = AIMessageChunk([ReasoningPart("hm")])
    assert thinking.content == [ReasoningPart("hm")]


# -------------------------------------------------------- stored before the split


def _reads(messages: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": m.type,
            "text": m.text,
            "tool_calls": [c.model_dump() for c in getattr(m, "tool_calls", [])],
            "parts": [p.model_dump() for p in m.content_blocks],
        }
        for m in messages
    ]


def _old_reads() -> list[dict[str, Any]]:
    stored = json.loads(STORED.read_text())
    reads: list[dict[str, Any]] = stored["reads"]
    for read in reads:  # the old code kept a string content as it was
        if read["parts"] and isinstance(read["parts"][0], str):
            text = read["parts"][0]
            read["parts"] = [{"type": "text", "text": text}] if text else []
    return reads


def test_a_checkpoint_written_before_the_split_reads_the_same() -> None:
    stored = json.loads(STORED.read_text())
    loaded = serde.loads(base64.b64decode(stored["checkpoint_blob_b64"]))
    history = loaded["messages"]
    assert _reads(history) == _old_reads()
    assert history[2].content == ""  # AIMessage("", tool_calls=[...]) reads as LangChain's
    assert history[4].content == "Let me check."
    assert serde.loads(serde.dumps(loaded)) == loaded  # and writes back the same


def test_message_dicts_written_before_the_split_read_the_same() -> None:
    stored = json.loads(STORED.read_text())
    messages = messages_from_dicts(stored["messages_to_dicts"])
    assert _reads(messages) == _old_reads()
    assert messages_to_dicts(messages) == stored["messages_to_dicts"]


# ------------------------------------------------------------------- type checks

PROGRAM = """
from flowgraph import AIMessage, HumanMessage, MessagesState, SystemMessage, ToolMessage
from flowgraph.messages import AIMessageChunk, RemoveMessage


class State(MessagesState):
    pass


def reply(state: State) -> dict[str, list[AIMessage]]:
    return {"messages": [AIMessage("hi " + state.messages[-1].text)]}


asked = HumanMessage("x", name="ann")
rules = SystemMessage("be brief")
answer = ToolMessage("4", tool_call_id="c1")
call = AIMessage("", tool_calls=[{"id": "c1", "name": "add", "args": {}}])
named = AIMessage(content="kw", id="a1")
marker = RemoveMessage("a1")
piece = AIMessageChunk("he")
found: list[str] = [c.name for c in piece.tool_calls] + [marker.text, call.text]
"""


def _mypy(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)]
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    return subprocess.run(
        command, capture_output=True, text=True, check=False, cwd=tmp_path, env=env
    )


def test_messages_type_check_as_written_under_mypy_strict(tmp_path: Path) -> None:
    result = _mypy(PROGRAM, tmp_path)
    assert result.returncode == 0, result.stdout
    wrong = _mypy(PROGRAM + "\nHumanMessage(3)\nToolMessage('x')\n", tmp_path)
    assert 'incompatible type "int"' in wrong.stdout
    assert 'Missing named argument "tool_call_id"' in wrong.stdout


@pytest.mark.skipif(shutil.which("pyright") is None, reason="pyright is not installed")
def test_messages_type_check_as_written_under_pyright(tmp_path: Path) -> None:
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"extraPaths": [str(ROOT)]}))
    result = subprocess.run(
        ["pyright", str(path)], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout
    path.write_text(PROGRAM + "\nHumanMessage(3)\n")
    wrong = subprocess.run(
        ["pyright", str(path)], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert wrong.returncode == 1 and "1 error" in wrong.stdout
