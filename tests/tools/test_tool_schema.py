"""@tool and Tool: names, descriptions from docstrings, argument models and JSON schemas."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from flowgraph.messages import AnyMessage
from flowgraph.tools import InjectedState, InjectedToolCallId, Tool, parse_docstring, tool


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Location(BaseModel):
    """A place on Earth."""

    city: str
    country: str | None = None


@tool
def get_weather(
    location: Location,
    days: int = 1,
    unit: Unit = Unit.CELSIUS,
    detail: Literal["short", "full"] = "short",
    hours: list[int] | None = None,
    note: Optional[str] = None,  # noqa: UP045 - the typing.Optional spelling must work too
) -> str:
    """Get the weather forecast for a location.

    The forecast comes from a mock service; this second paragraph is not
    part of the description.

    Args:
        location: Where to look.
        days (int): How many days ahead,
            counting today.
        unit: Temperature unit.
        detail: How much to say.

    Returns:
        The forecast as text.
    """
    return f"{location.city}: sunny for {days} day(s) in {unit.value}"


def test_name_and_description_come_from_the_function() -> None:
    assert isinstance(get_weather, Tool)
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get the weather forecast for a location."
    assert repr(get_weather) == "Tool(name='get_weather')"


def test_openai_tool_entry() -> None:
    entry = get_weather.to_openai()
    assert list(entry) == ["type", "function"]
    assert entry["type"] == "function"
    function = entry["function"]
    assert function["name"] == "get_weather"
    assert function["description"] == "Get the weather forecast for a location."
    assert function["parameters"] is get_weather.json_schema
    json.dumps(entry)  # plain JSON all the way down


def test_the_models_layer_reads_the_tool() -> None:
    from flowgraph.models import tool_specs

    (spec,) = tool_specs([get_weather])
    assert (spec.name, spec.description) == (get_weather.name, get_weather.description)
    assert spec.parameters == get_weather.json_schema


def test_json_schema_from_type_hints() -> None:
    params = get_weather.json_schema
    assert params["type"] == "object"
    assert params["required"] == ["location"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert list(props) == ["location", "days", "unit", "detail", "hours", "note"]
    # nested model inlined (no $ref), its description overridden by the Args section
    assert props["location"] == {
        "description": "Where to look.",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
    }
    assert props["days"] == {
        "type": "integer",
        "default": 1,
        "description": "How many days ahead, counting today.",
    }
    assert props["unit"] == {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "default": "celsius",
        "description": "Temperature unit.",
    }
    assert props["detail"] == {
        "type": "string",
        "enum": ["short", "full"],
        "default": "short",
        "description": "How much to say.",
    }
    assert props["hours"] == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
        "default": None,
    }
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert "$defs" not in params
    assert "title" not in json.dumps(params)


def test_required_and_optional_are_right() -> None:
    @tool
    def f(a: str, b: int | None, c: float = 1.5, d: bool = False) -> None:
        """F."""

    assert f.json_schema["required"] == ["a", "b"]
    assert f.json_schema["properties"]["b"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert f.json_schema["properties"]["c"] == {"type": "number", "default": 1.5}
    assert f.json_schema["properties"]["d"] == {"type": "boolean", "default": False}


def test_no_parameters_is_an_empty_object() -> None:
    @tool
    def now() -> str:
        """The current time."""
        return "noon"

    assert now.json_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_descriptions_in_code_win_over_the_docstring() -> None:
    @tool
    def f(
        a: Annotated[str, "from Annotated"],
        b: Annotated[int, Field(description="from Field", ge=0)],
        c: str = Field("x", description="from the default"),
        d: str = "",
    ) -> None:
        """F.

        Args:
            a: docstring a
            b: docstring b
            c: docstring c
            d: docstring d
        """

    props = f.json_schema["properties"]
    assert props["a"]["description"] == "from Annotated"
    assert props["b"] == {"type": "integer", "minimum": 0, "description": "from Field"}
    assert props["c"]["description"] == "from the default"
    assert props["d"]["description"] == "docstring d"


def test_untyped_parameter_accepts_anything() -> None:
    @tool
    def echo(value) -> Any:  # type: ignore[no-untyped-def]  # the point of the test
        """Echo."""
        return value

    assert echo.json_schema["properties"]["value"] == {}
    assert echo.invoke({"value": [1, "a"]}) == [1, "a"]


def test_names_that_shadow_basemodel_attributes_keep_their_names() -> None:
    @tool
    def f(json: str, schema: int = 0, _hidden: int = 1) -> str:
        """F."""
        return f"{json}-{schema}-{_hidden}"

    assert list(f.json_schema["properties"]) == ["json", "schema", "_hidden"]
    assert f.invoke({"json": "j", "schema": 2, "_hidden": 3}) == "j-2-3"


class TreeNode(BaseModel):
    """A tree node."""

    name: str
    children: list[TreeNode] = []


def size(tree: TreeNode) -> int:
    """Count the nodes of a tree."""
    return 1 + sum(size(child) for child in tree.children)


def test_recursive_models_keep_defs() -> None:
    made = Tool(size)
    params = made.json_schema
    assert params["properties"]["tree"] == {"$ref": "#/$defs/TreeNode"}
    node = params["$defs"]["TreeNode"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    tree = {"name": "a", "children": [{"name": "b"}, {"name": "c", "children": [{"name": "d"}]}]}
    assert made.invoke({"tree": tree}) == 4


def test_hints_naming_local_classes_resolve_in_the_defining_scope() -> None:
    class Local(BaseModel):
        x: int

    @tool
    def f(v: Local) -> int:
        """F."""
        return v.x

    assert f.invoke({"v": {"x": 3}}) == 3
    assert Tool(f.func).json_schema["required"] == ["v"]


def test_unresolvable_hints_are_a_clear_error() -> None:
    def f(v: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821 - the point of the test
        """F."""

    with pytest.raises(
        TypeError, match=r"cannot read the type hints.*name 'Missing' is not defined"
    ):
        tool(f)


# ------------------------------------------------------------------ injected parameters


def test_injected_parameters_are_hidden_from_the_schema() -> None:
    @tool
    def remember(
        fact: str,
        state: Annotated[dict[str, Any], InjectedState],
        history: Annotated[list[AnyMessage], InjectedState("messages")],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        """Remember a fact."""
        return fact

    assert list(remember.json_schema["properties"]) == ["fact"]
    assert remember.json_schema["required"] == ["fact"]
    assert [(i.param, i.kind, i.field) for i in remember.injections] == [
        ("state", "state", None),
        ("history", "state", "messages"),
        ("call_id", "tool_call_id", None),
    ]


# ------------------------------------------------------------------ decorator forms


def test_decorator_forms() -> None:
    @tool("lookup_user")
    def find(user_id: int) -> str:
        """Find a user by id."""
        return str(user_id)

    @tool(description="Explicit description.", response_format="content_and_artifact")
    def load(path: str) -> tuple[str, bytes]:
        """Ignored docstring."""
        return "loaded", b""

    assert (find.name, find.description) == ("lookup_user", "Find a user by id.")
    assert (load.name, load.description) == ("load", "Explicit description.")
    assert load.response_format == "content_and_artifact"
    # the tool stays callable as the plain function
    assert find(7) == "7"
    assert find.__name__ == "find"
    assert find.__doc__ == "Find a user by id."


def test_from_function() -> None:
    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    made = Tool.from_function(multiply, name="times")
    assert (made.name, made.description) == ("times", "Multiply two numbers.")
    assert made.invoke({"a": 2, "b": 3.5}) == 7.0
    assert Tool(made).func is multiply  # wrapping a tool again wraps its function


def test_tool_from_a_pydantic_args_model() -> None:
    class SearchArgs(BaseModel):
        """Search the documentation."""

        query: str = Field(description="What to look for.")
        limit: int = Field(5, ge=1, le=50, description="How many hits.")

    def search(query: str, limit: int) -> list[str]:
        return [f"{query}-{i}" for i in range(limit)]

    made = Tool.from_function(search, args_schema=SearchArgs)
    assert made.args_schema is SearchArgs
    assert made.description == "Search the documentation."
    assert made.json_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "default": 5,
                "minimum": 1,
                "maximum": 50,
                "description": "How many hits.",
            },
        },
        "required": ["query"],
    }
    assert made.invoke({"query": "tools", "limit": 2}) == ["tools-0", "tools-1"]

    @tool(args_schema=SearchArgs)
    def search2(query: str, limit: int, state: Annotated[Any, InjectedState]) -> str:
        """Search, seeing the state."""
        return f"{query}/{limit}/{state['k']}"

    assert search2.description == "Search, seeing the state."
    assert search2.invoke({"query": "q"}, state={"k": "v"}) == "q/5/v"


def test_args_schema_fields_must_match_the_function() -> None:
    class Args(BaseModel):
        a: int
        b: int

    def f(a: int) -> int:
        """F."""
        return a

    with pytest.raises(TypeError, match=r"args_schema Args has field\(s\) b"):
        Tool(f, args_schema=Args)


# ------------------------------------------------------------------ definition errors


def test_a_description_is_required() -> None:
    def f(a: int) -> int:
        return a

    with pytest.raises(ValueError, match=r"needs a description.*docstring or pass description="):
        tool(f)
    assert tool(description="Explicit.")(f).description == "Explicit."


@pytest.mark.parametrize("name", ["has space", "", "x" * 65, "dot.ted"])
def test_invalid_names_are_rejected(name: str) -> None:
    def f() -> None:
        """F."""

    with pytest.raises(ValueError, match="not valid for model providers"):
        Tool(f, name=name or "?")


def test_var_positional_is_rejected() -> None:
    def f(*items: str) -> None:
        """F."""

    with pytest.raises(TypeError, match=r"takes \*items; a model can only pass named arguments"):
        tool(f)


def test_var_keyword_is_accepted_and_not_in_the_schema() -> None:
    @tool
    def f(a: int, **extra: Any) -> int:
        """F."""
        return a

    assert list(f.json_schema["properties"]) == ["a"]


def test_unschematizable_type_is_a_clear_error() -> None:
    class Opaque:
        pass

    def f(x: Opaque) -> None:
        """F."""

    with pytest.raises(TypeError, match="cannot be described to a model as JSON schema"):
        tool(f)


def test_bad_response_format() -> None:
    def f() -> None:
        """F."""

    with pytest.raises(ValueError, match="response_format must be"):
        Tool(f, response_format="json")  # type: ignore[arg-type]


# ------------------------------------------------------------------ docstrings


def test_parse_google_docstring() -> None:
    parsed = parse_docstring(
        """Fetch rows
        from the table.

        Longer explanation.

        Args:
            table: The table
                name.
            limit (int, optional): Max rows.
            *columns: ignored style, still read.

        Returns:
            rows
        """
    )
    assert parsed.description == "Fetch rows from the table."
    assert parsed.params == {
        "table": "The table name.",
        "limit": "Max rows.",
        "columns": "ignored style, still read.",
    }


def test_parse_sphinx_docstring() -> None:
    parsed = parse_docstring(
        """Fetch rows.

        :param table: The table
            name.
        :param int limit: Max rows.
        :returns: rows
        """
    )
    assert parsed.description == "Fetch rows."
    assert parsed.params == {"table": "The table name.", "limit": "Max rows."}


def test_parse_empty_docstring() -> None:
    assert parse_docstring(None).description == ""
    assert parse_docstring("Only a line.").params == {}


def test_parse_docstring_false_describes_the_tool_with_the_whole_docstring() -> None:
    def f(a: int) -> None:
        """F.

        Args:
            a: described
        """

    made = Tool(f, parse_docstring=False)
    assert made.description == "F.\n\nArgs:\n    a: described"
    assert "description" not in made.json_schema["properties"]["a"]
