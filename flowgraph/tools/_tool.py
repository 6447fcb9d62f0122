"""`Tool` and the `@tool` decorator: a function a model can call, described and validated.

A tool knows its name, its description (the docstring's first paragraph),
a pydantic model of its arguments (from the type hints) and that model as
the JSON schema providers expect. `invoke` / `ainvoke` validate the
arguments a model sent and call the function; a validation failure is a
`ToolError` whose text tells the model what to fix.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ValidationError

from flowgraph._context import (
    ToolRuntime,
    current_run,
    current_store,
    get_stream_writer,
    run_config,
)
from flowgraph.errors import ToolError
from flowgraph.messages import ToolCall
from flowgraph.tools._docstring import ParsedDocstring
from flowgraph.tools._docstring import parse_docstring as read_docstring
from flowgraph.tools._schema import Injection, Signature, clean_json_schema, read_signature

__all__ = ["Tool", "ToolResponseFormat", "tool"]

ToolResponseFormat = Literal["content", "content_and_artifact"]
"""`"content"`: the return value is what the model sees. `"content_and_artifact"`:
the function returns `(content, artifact)`; the model sees only `content`, and
the artifact stays on `ToolMessage.artifact` for the application."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAX_INPUT_REPR = 80

T = TypeVar("T")


def _run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    """Run an async tool from sync code, also when an event loop is running here.

    A running loop cannot be re-entered, so the coroutine then runs on a
    loop of its own in a helper thread, with the caller's context variables.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(make))
    context = contextvars.copy_context()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, _awaited(make))
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="flowgraph-async-tool")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]  # set by target


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def _describe_errors(tool_name: str, exc: ValidationError, accepted: list[str]) -> str:
    lines = [f"Invalid arguments for tool `{tool_name}`:"]
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            takes = ", ".join(accepted) if accepted else "no arguments"
            lines.append(f"- {where}: unexpected argument; `{tool_name}` takes: {takes}")
            continue
        given = repr(error.get("input"))
        if len(given) > _MAX_INPUT_REPR:
            given = given[: _MAX_INPUT_REPR - 3] + "..."
        got = "" if error["type"] == "missing" else f" (got {given})"
        lines.append(f"- {where}: {error['msg']}{got}")
    lines.append(f"Call `{tool_name}` again with arguments that match its schema.")
    return "\n".join(lines)


class Tool:
    """A function a model can call: name, description, argument schema, invocation.

    Build one with `@tool` or `Tool.from_function(fn)`. The argument model
    comes from `fn`'s type hints, or from `args_schema=` (a pydantic model
    whose fields are passed to `fn` as keyword arguments). Calling the tool
    object directly calls the function unchanged; `invoke(args)` validates
    a model's arguments first.
    """

    func: Callable[..., Any]
    """The wrapped function, sync or async."""
    name: str
    description: str
    """What the model reads to decide when to call the tool."""
    args_schema: type[BaseModel]
    """The pydantic model the model's arguments are validated with."""
    response_format: ToolResponseFormat
    is_async: bool

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        args_schema: type[BaseModel] | None = None,
        response_format: ToolResponseFormat = "content",
        parse_docstring: bool = True,
    ) -> None:
        if isinstance(func, Tool):
            func = func.func
        if not callable(func):
            raise TypeError(f"A tool wraps a function, not {type(func).__name__}")
        tool_name = name or getattr(func, "__name__", None) or type(func).__name__
        if not _NAME.match(tool_name):
            raise ValueError(
                f"Tool name {tool_name!r} is not valid for model providers; use 1-64 letters, "
                "digits, '_' or '-' (pass name=...)"
            )
        if response_format not in ("content", "content_and_artifact"):
            raise ValueError(
                f"Tool '{tool_name}': response_format must be 'content' or "
                f"'content_and_artifact', not {response_format!r}"
            )
        doc = inspect.getdoc(func)
        # parse_docstring=False: the whole docstring describes the tool, parameters undescribed
        docs = read_docstring(doc) if parse_docstring else ParsedDocstring((doc or "").strip())
        if description is None:
            description = docs.description
            if not description and args_schema is not None and args_schema.__doc__:
                description = read_docstring(args_schema.__doc__).description
        if not description:
            raise ValueError(
                f"Tool '{tool_name}' needs a description for the model: give the function "
                "a docstring or pass description=..."
            )
        self.func = func
        self.name = tool_name
        self.description = description
        self.response_format = response_format
        self._signature: Signature = read_signature(func, tool_name, docs.params, args_schema)
        self.args_schema = self._signature.args_schema
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - an object with an async __call__
        )
        functools.update_wrapper(self, func, updated=())  # keeps __doc__, __name__, __wrapped__

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        args_schema: type[BaseModel] | None = None,
        response_format: ToolResponseFormat = "content",
        parse_docstring: bool = True,
    ) -> Tool:
        """A tool from a plain (sync or async) function; the same as `@tool` with options."""
        return cls(
            func,
            name=name,
            description=description,
            args_schema=args_schema,
            response_format=response_format,
            parse_docstring=parse_docstring,
        )

    # -- description ----------------------------------------------------------

    @functools.cached_property
    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, ready for any provider's function calling.

        An object schema with `properties`, `required` and
        `additionalProperties: false`; titles dropped and `$ref`s inlined
        (only recursive models keep `$defs`), because some providers reject
        references. Injected parameters are not in it. This is OpenAI's
        `parameters`, Anthropic's `input_schema`, Ollama's `parameters`.
        """
        return clean_json_schema(self.args_schema)

    @property
    def args(self) -> dict[str, Any]:
        """Each argument's JSON schema, titles kept, by name (LangChain's `tool.args`)."""
        properties: dict[str, Any] = self.args_schema.model_json_schema().get("properties", {})
        return properties

    def to_openai(self) -> dict[str, Any]:
        """The tool as OpenAI's Chat Completions `tools` entry.

        `{"type": "function", "function": {"name", "description", "parameters"}}`.
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema,
            },
        }

    @property
    def injections(self) -> tuple[Injection, ...]:
        """Parameters the ToolNode fills (state, call id), hidden from the model."""
        return self._signature.injections

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    # -- calling --------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function itself, unvalidated, as if it were not a tool."""
        return self.func(*args, **kwargs)

    def parse_args(self, args: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
        """Validated keyword arguments for the function, or a ToolError the model can read."""
        schema = self.args_schema
        validated: BaseModel
        if type(args) is not dict and isinstance(args, schema):
            validated = args
        else:
            if type(args) is not dict:  # a model's arguments are a dict: no conversion
                args = self._named_arguments(args)
            try:
                validated = schema.model_validate(args)
            except ValidationError as exc:
                accepted = sorted(self.json_schema.get("properties", {}))
                raise ToolError(
                    _describe_errors(self.name, exc, accepted), tool_name=self.name
                ) from None
        fields = self._signature.fields
        return {param: getattr(validated, field) for field, param in fields.items()}

    def _named_arguments(self, args: object) -> dict[str, Any]:
        """`args` (a mapping or a pydantic model) as a dict, or a ToolError the model can read."""
        if isinstance(args, BaseModel):
            args = args.model_dump()
        if not isinstance(args, Mapping):
            raise ToolError(
                f"Invalid arguments for tool `{self.name}`: expected a JSON object of named "
                f"arguments, got {type(args).__name__}",
                tool_name=self.name,
            )
        return dict(args)

    def _arguments(
        self, kwargs: dict[str, Any], state: Any, tool_call_id: str | None, store: Any = None
    ) -> tuple[list[Any], dict[str, Any]]:
        for injection in self._signature.injections:
            if injection.kind == "store":
                kwargs[injection.param] = _run_store(store, injection, self.name)
                continue
            if injection.kind == "config":
                kwargs[injection.param] = run_config()
                continue
            if injection.kind == "runtime":
                kwargs[injection.param] = _tool_runtime(state, tool_call_id, store)
                continue
            if injection.kind == "tool_call_id":
                if tool_call_id is None:
                    raise ToolError(
                        f"Tool `{self.name}` takes the tool call id in "
                        f"'{injection.param}'; pass tool_call_id=... (a ToolNode does)",
                        tool_name=self.name,
                    )
                kwargs[injection.param] = tool_call_id
                continue
            if state is None:
                raise ToolError(
                    f"Tool `{self.name}` reads the graph state in '{injection.param}'; "
                    "pass state=... (a ToolNode does)",
                    tool_name=self.name,
                )
            kwargs[injection.param] = _state_value(state, injection, self.name)
        positional = [kwargs.pop(name) for name in self._signature.positional_only]
        return positional, kwargs

    def _check_result(self, result: Any) -> Any:
        if self.response_format == "content_and_artifact" and not (
            isinstance(result, tuple) and len(result) == 2
        ):
            raise ToolError(
                f"Tool `{self.name}` has response_format='content_and_artifact' and must "
                f"return a (content, artifact) tuple, not {type(result).__name__}",
                tool_name=self.name,
            )
        return result

    def invoke(
        self,
        args: Mapping[str, Any] | BaseModel | ToolCall,
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
    ) -> Any:
        """Validate `args` and call the tool; returns what the function returns.

        An async tool runs to completion on an event loop of its own. With
        `response_format="content_and_artifact"` the result is the
        `(content, artifact)` tuple. `state` and `tool_call_id` fill the
        injected parameters (a ToolNode passes them); `store` fills an
        `InjectedStore` one (default: the running graph's store). A
        `RunnableConfig` or `ToolRuntime` parameter gets the running graph's.
        """
        if isinstance(args, ToolCall):
            tool_call_id = tool_call_id or args.id
            args = args.args
        return self.run_validated(
            self.parse_args(args), state=state, tool_call_id=tool_call_id, store=store
        )

    async def ainvoke(
        self,
        args: Mapping[str, Any] | BaseModel | ToolCall,
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
    ) -> Any:
        """`invoke` for async code: an async tool is awaited, a sync one runs in a thread."""
        if isinstance(args, ToolCall):
            tool_call_id = tool_call_id or args.id
            args = args.args
        kwargs = self.parse_args(args)
        return await self.arun_validated(
            kwargs, state=state, tool_call_id=tool_call_id, store=store
        )

    def run_validated(
        self,
        kwargs: dict[str, Any],
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
    ) -> Any:
        """Call the function with arguments `parse_args` returned (no second validation)."""
        positional, named = self._arguments(dict(kwargs), state, tool_call_id, store)
        if self.is_async:
            return self._check_result(_run_coroutine(lambda: self.func(*positional, **named)))
        result = self.func(*positional, **named)
        if inspect.isawaitable(result):
            result = _run_coroutine(lambda: result)
        return self._check_result(result)

    async def arun_validated(
        self,
        kwargs: dict[str, Any],
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
        offload: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
    ) -> Any:
        """`run_validated` for async code: a sync tool runs in a worker thread.

        The thread inherits the caller's context variables, so a tool that
        calls a model or a graph still reports to the run it belongs to.
        `offload` runs a sync tool's call instead (given it as a function of
        no arguments): a ToolNode passes the engine's worker threads, or a
        call in place when nothing else can wait on this event loop.
        """
        positional, named = self._arguments(dict(kwargs), state, tool_call_id, store)
        if self.is_async:
            result = await self.func(*positional, **named)
        else:
            if offload is None:
                result = await asyncio.to_thread(self.func, *positional, **named)
            else:
                result = await offload(functools.partial(self.func, *positional, **named))
            if type(result) is not str and inspect.isawaitable(result):
                # a sync function that returned a coroutine: its code may need a Task (a
                # ToolNode of sync tools is stepped without one, see `runs_without_task`)
                if asyncio.current_task() is None:
                    result = asyncio.ensure_future(result)
                result = await result
        return self._check_result(result)


def _run_store(store: Any, injection: Injection, tool_name: str) -> Any:
    """The store given to this call, else the running graph's (see `_context.bind_store`)."""
    if store is None:
        store = current_store.get()
    if store is None:
        raise ToolError(
            f"Tool `{tool_name}` uses the long-term store in '{injection.param}', but none "
            "is set: compile the graph with store=... (or pass store=... to invoke)",
            tool_name=tool_name,
        )
    return store


def _tool_runtime(state: Any, tool_call_id: str | None, store: Any) -> ToolRuntime[Any]:
    """What a `runtime: ToolRuntime` parameter receives: the run's and the call's details."""
    info = current_run.get()
    return ToolRuntime(
        context=None if info is None else info.context,
        store=store if store is not None else current_store.get(),
        stream_writer=get_stream_writer(),
        state=state,
        config=run_config(),
        tool_call_id=tool_call_id,
    )


def _state_value(state: Any, injection: Injection, tool_name: str) -> Any:
    field = injection.field
    if field is None:
        return state
    if isinstance(state, Mapping):
        if field in state:
            return state[field]
    elif hasattr(state, field):
        return getattr(state, field)
    raise ToolError(
        f"Tool `{tool_name}` reads state field '{field}' in '{injection.param}', "
        "but the state has no such field",
        tool_name=tool_name,
    )


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    name: str | None = None,
    /,
    *,
    description: str | None = None,
    args_schema: type[BaseModel] | None = None,
    response_format: ToolResponseFormat = "content",
    parse_docstring: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | str | None = None,
    /,
    *,
    description: str | None = None,
    args_schema: type[BaseModel] | None = None,
    response_format: ToolResponseFormat = "content",
    parse_docstring: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a `Tool`: `@tool`, `@tool("name")` or `@tool(response_format=...)`.

    >>> @tool
    ... def get_weather(city: str, unit: Literal["C", "F"] = "C") -> str:
    ...     '''Current weather for a city.
    ...
    ...     Args:
    ...         city: The city name, e.g. "Paris".
    ...         unit: Temperature unit.
    ...     '''
    ...     return f"18 {unit} in {city}"
    >>> get_weather.json_schema["required"]
    ['city']
    """
    if callable(func):
        return Tool(
            func,
            description=description,
            args_schema=args_schema,
            response_format=response_format,
            parse_docstring=parse_docstring,
        )
    name = func

    def decorate(fn: Callable[..., Any]) -> Tool:
        return Tool(
            fn,
            name=name,
            description=description,
            args_schema=args_schema,
            response_format=response_format,
            parse_docstring=parse_docstring,
        )

    return decorate
