"""`pretty_print()` / `pretty_repr()` lay a transcript out as LangChain does (issue 18, item 2)."""

from __future__ import annotations

from typing import Any

import pytest

from flowgraph import AIMessage, HumanMessage, ImagePart, ReasoningPart, TextPart
from tests.compat._libs import Lib, load


def transcript(lib: Lib) -> list[Any]:
    return [
        lib.SystemMessage("You answer in one line."),
        lib.HumanMessage("What is the weather in Oslo?", name="ada"),
        lib.AIMessage(
            "Let me check.",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Oslo", "days": 2}, "id": "call_1"},
                {"name": "now", "args": {}, "id": "call_2"},
            ],
        ),
        lib.AIMessage(
            "", tool_calls=[{"name": "get_weather", "args": {"city": "Bergen"}, "id": "c3"}]
        ),
        lib.ToolMessage("sunny", tool_call_id="call_1", name="get_weather"),
        lib.AIMessage("Sunny in Oslo."),
    ]


def test_pretty_repr_is_langchains_layout(lib: Lib) -> None:
    flowgraph = [m.pretty_repr() for m in transcript(load("flowgraph"))]
    assert [m.pretty_repr() for m in transcript(lib)] == flowgraph
    assert flowgraph[1] == "\n".join(
        [
            "================================ Human Message =================================",
            "Name: ada",
            "",
            "What is the weather in Oslo?",
        ]
    )
    assert flowgraph[2].splitlines()[3:] == [
        "Tool Calls:",
        "  get_weather (call_1)",
        " Call ID: call_1",
        "  Args:",
        "    city: Oslo",
        "    days: 2",
        "  now (call_2)",
        " Call ID: call_2",
        "  Args:",
    ]


def test_html_makes_the_title_bold(lib: Lib) -> None:
    assert transcript(lib)[0].pretty_repr(html=True) == transcript(load("flowgraph"))[
        0
    ].pretty_repr(html=True)
    assert "\033[1m System Message \033[0m" in transcript(lib)[0].pretty_repr(html=True)


def test_invalid_tool_calls_are_listed(lib: Lib) -> None:
    bad = {"name": "add", "args": "{1, 2", "id": "c4", "error": "not JSON"}
    message = lib.AIMessage("Oops.", invalid_tool_calls=[bad])
    assert message.pretty_repr().splitlines()[2:] == [
        "Oops.",
        "Invalid Tool Calls:",
        "  add (c4)",
        " Call ID: c4",
        "  Error: not JSON",
        "  Args:",
        "    {1, 2",
    ]


def test_pretty_print_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    for message in transcript(load("flowgraph")):
        message.pretty_print()
    printed = capsys.readouterr().out
    assert printed == "".join(m.pretty_repr() + "\n" for m in transcript(load("flowgraph")))
    assert printed.count("=" * 32 + " Human Message " + "=" * 33) == 1


def test_content_parts_print_as_text_and_one_line_per_medium() -> None:
    look = HumanMessage([TextPart(text="Look:"), ImagePart(url="https://x.test/cat.png")])
    thought = AIMessage([ReasoningPart(text="a cat"), TextPart(text="A cat.")])
    assert look.pretty_repr().splitlines()[2:] == ["Look:", "[image: https://x.test/cat.png]"]
    assert thought.pretty_repr().splitlines()[2:] == ["[reasoning: a cat]", "A cat."]
