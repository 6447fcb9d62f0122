"""Tool.invoke / ainvoke: validation the model can read, sync and async tools, injection."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

from flowgraph.errors import ToolError
from flowgraph.messages import ToolCall
from flowgraph.tools import InjectedState, InjectedToolCallId, tool


@tool
def book(city: str, nights: int, room: Literal["single", "double"] = "single") -> dict[str, Any]:
    """Book a hotel room."""
    return {"city": city, "nights": nights, "room": room}


@tool
async def abook(city: str, nights: int = 1) -> str:
    """Book a hotel room, asynchronously."""
    await asyncio.sleep(0)
    return f"{city} x{nights}"


def test_invoke_validates_and_coerces() -> None:
    assert book.invoke({"city": "Rome", "nights": "2"}) == {
        "city": "Rome",
        "nights": 2,
        "room": "single",
    }


def test_invoke_with_a_tool_call() -> None:
    call = ToolCall(id="c1", name="book", args={"city": "Oslo", "nights": 1, "room": "double"})
    assert book.invoke(call)["room"] == "double"


def test_validation_error_names_each_field_for_the_model() -> None:
    with pytest.raises(ToolError) as caught:
        book.invoke({"nights": "many", "room": "suite", "breakfast": True})
    error = caught.value
    assert error.tool_name == "book"
    assert str(error) == (
        "Invalid arguments for tool `book`:\n"
        "- city: Field required\n"
        "- nights: Input should be a valid integer, unable to parse string as an integer "
        "(got 'many')\n"
        "- room: Input should be 'single' or 'double' (got 'suite')\n"
        "- breakfast: unexpected argument; `book` takes: city, nights, room\n"
        "Call `book` again with arguments that match its schema."
    )


def test_long_inputs_are_shortened_in_errors() -> None:
    with pytest.raises(ToolError) as caught:
        book.invoke({"city": "x", "nights": "9" * 20 + "z" * 200})
    line = str(caught.value).splitlines()[1]
    assert line.endswith("...)")
    assert len(line) < 200


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(ToolError, match="expected a JSON object of named arguments, got list"):
        book.invoke([1, 2])  # type: ignore[arg-type]


def test_an_instance_of_the_args_model_is_accepted() -> None:
    args = book.args_schema.model_validate({"city": "Kyiv", "nights": 3})
    assert book.invoke(args)["nights"] == 3


def test_ainvoke_of_an_async_tool() -> None:
    assert asyncio.run(abook.ainvoke({"city": "Lima"})) == "Lima x1"
    assert abook.is_async


def test_ainvoke_runs_a_sync_tool_in_a_thread_with_the_callers_context() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    @tool
    def where() -> tuple[int, str]:
        """Where am I."""
        return threading.get_ident(), var.get()

    async def main() -> tuple[int, tuple[int, str]]:
        var.set("from caller")
        return threading.get_ident(), await where.ainvoke({})

    loop_thread, (tool_thread, seen) = asyncio.run(main())
    assert tool_thread != loop_thread
    assert seen == "from caller"


def test_sync_invoke_of_an_async_tool() -> None:
    assert abook.invoke({"city": "Quito", "nights": 2}) == "Quito x2"


def test_sync_invoke_of_an_async_tool_inside_a_running_loop() -> None:
    # a sync caller inside async code cannot re-enter the loop; the tool gets its own
    async def main() -> Any:
        return abook.invoke({"city": "Cairo"})

    assert asyncio.run(main()) == "Cairo x1"


def test_errors_of_an_async_tool_reach_a_sync_caller() -> None:
    @tool
    async def fail() -> None:
        """Fail."""
        raise LookupError("gone")

    with pytest.raises(LookupError, match="gone"):
        fail.invoke({})


def test_errors_of_an_async_tool_reach_a_sync_caller_inside_a_loop() -> None:
    @tool
    async def fail() -> None:
        """Fail."""
        raise LookupError("gone")

    async def main() -> None:
        fail.invoke({})

    with pytest.raises(LookupError, match="gone"):
        asyncio.run(main())


def test_content_and_artifact() -> None:
    @tool(response_format="content_and_artifact")
    def table(n: int) -> tuple[str, list[int]]:
        """Make a table."""
        return f"{n} rows", list(range(n))

    assert table.invoke({"n": 3}) == ("3 rows", [0, 1, 2])


def test_content_and_artifact_must_return_a_pair() -> None:
    @tool(response_format="content_and_artifact")
    def table(n: int) -> str:
        """Make a table."""
        return "oops"

    with pytest.raises(ToolError, match=r"must return a \(content, artifact\) tuple, not str"):
        table.invoke({"n": 1})


# ------------------------------------------------------------------ injected parameters


class Profile(BaseModel):
    user: str
    messages: list[Any] = []


@tool
def greet(
    greeting: str,
    state: Annotated[Profile, InjectedState],
    user: Annotated[str, InjectedState("user")],
    call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Greet the user."""
    assert state.user == user
    return f"{greeting}, {user} ({call_id})"


def test_injected_values_are_passed_by_the_caller() -> None:
    profile = Profile(user="Ada")
    assert greet.invoke({"greeting": "Hi"}, state=profile, tool_call_id="c9") == "Hi, Ada (c9)"
    assert greet.invoke(
        ToolCall(id="c7", name="greet", args={"greeting": "Yo"}), state=profile
    ) == ("Yo, Ada (c7)")


def test_injected_field_from_a_dict_state() -> None:
    @tool
    def who(user: Annotated[str, InjectedState("user")]) -> str:
        """Who."""
        return user

    assert who.invoke({}, state={"user": "Grace"}) == "Grace"
    with pytest.raises(ToolError, match=r"reads state field 'user'.*no such field"):
        who.invoke({}, state={"other": 1})


def test_model_cannot_set_an_injected_parameter() -> None:
    with pytest.raises(ToolError, match="- state: unexpected argument; `greet` takes: greeting"):
        greet.invoke({"greeting": "Hi", "state": {"user": "Mallory"}}, state=Profile(user="A"))


def test_missing_injected_values_say_how_to_pass_them() -> None:
    with pytest.raises(ToolError, match="reads the graph state in 'state'; pass state="):
        greet.invoke({"greeting": "Hi"}, tool_call_id="c1")
    with pytest.raises(ToolError, match="takes the tool call id in 'call_id'; pass tool_call_id="):
        greet.invoke({"greeting": "Hi"}, state=Profile(user="A"))


def test_positional_only_parameters() -> None:
    def power(base: float, exp: int = 2, /) -> float:
        """Raise to a power."""
        return base**exp

    made = tool(power)
    assert made.invoke({"base": 3, "exp": 3}) == 27
    assert made.invoke({"base": 3}) == 9
