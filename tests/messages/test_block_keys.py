"""Content parts read as LangChain's content blocks (dicts) too: `block["type"]`, `.get`."""

from __future__ import annotations

import pytest

from flowgraph.messages import (
    AIMessage,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolCallPart,
)


def test_each_part_reads_as_its_block() -> None:
    message = AIMessage(
        [ReasoningPart("why"), TextPart("Looking."), ToolCallPart(id="c1", name="f", args={"a": 1})]
    )
    assert [dict(block) for block in message.content_blocks] == [
        {"type": "reasoning", "reasoning": "why"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_call", "id": "c1", "name": "f", "args": {"a": 1}},
    ]
    text = message.content_blocks[1]
    assert (text["type"], text["text"], text.get("name"), text.get("id", "-")) == (
        "text",
        "Looking.",
        None,
        "-",
    )
    assert "text" in text and "args" not in text and 3 not in text
    with pytest.raises(KeyError):
        text["name"]


def test_fields_langchain_names_otherwise_read_under_its_key() -> None:
    reasoning = ReasoningPart("thinking", signature="sig")
    assert reasoning["reasoning"] == "thinking"
    assert reasoning.get("text") is None and "text" not in reasoning
    image = ImagePart(data=b"png", mime_type="image/png")
    assert (image["base64"], image["mime_type"], image.get("url")) == ("cG5n", "image/png", None)
    assert "data" not in image
    assert dict(FilePart(url="https://x/a.pdf", filename="a.pdf")) == {
        "url": "https://x/a.pdf",
        "type": "file",
        "filename": "a.pdf",
    }


def test_tool_calls_still_read_as_before() -> None:
    message = AIMessage("", tool_calls=[ToolCall(id="c1", name="f")])
    assert message.content_blocks[0]["args"] == {}
    assert message.tool_calls[0]["name"] == "f"
