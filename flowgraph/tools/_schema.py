"""A tool's arguments as a pydantic model, and that model as a provider-ready JSON schema.

The model is built from the function's signature: each parameter's type
hint, default and description (from `Annotated[T, "text"]`,
`Annotated[T, Field(...)]`, or the docstring's Args section). Parameters
annotated `InjectedState` / `InjectedToolCallId` / `InjectedStore`, or typed
`RunnableConfig` (the run's config) or `ToolRuntime` (the run's context,
store, config, state and call id), are left out: the node fills them, and
the model never sees or sets them.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from flowgraph._context import RunnableConfig, Runtime

__all__ = ["InjectedState", "InjectedStore", "InjectedToolCallId", "Injection"]
# also used by _tool: Signature, clean_json_schema, read_signature


class InjectedState:
    """Marks a tool parameter the ToolNode fills with the graph's state.

    `Annotated[State, InjectedState]` receives the whole state (the schema's
    type: a pydantic instance or a dict); `Annotated[list[AnyMessage],
    InjectedState("messages")]` receives one field of it. The parameter is
    hidden from the model: it is not in the tool's JSON schema, and a model
    that sends it anyway is told the argument is unexpected.
    """

    __slots__ = ("field",)

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def __repr__(self) -> str:
        return f"InjectedState({self.field!r})" if self.field else "InjectedState()"


class InjectedToolCallId:
    """Marks a tool parameter the ToolNode fills with the id of the call being answered.

    `Annotated[str, InjectedToolCallId]`; hidden from the model like InjectedState.
    """

    __slots__ = ()


class InjectedStore:
    """Marks a tool parameter filled with the run's long-term store (`flowgraph.store`).

    `store: Annotated[BaseStore, InjectedStore()]` (or `InjectedStore` bare)
    receives the store the graph was compiled with, the one `store=` gives
    `Tool.invoke`, so a tool can remember across threads. Hidden from the
    model like InjectedState.
    """

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Injection:
    """A parameter the node fills: the state (or one of its fields), the call id, the store."""

    param: str
    kind: Literal["state", "tool_call_id", "store", "config", "runtime"]
    field: str | None = None


def _bare(hint: object) -> object:
    """`hint` without `| None` and type arguments: `ToolRuntime[Ctx] | None` -> ToolRuntime."""
    options = [a for a in get_args(hint) if a is not type(None)]
    if get_origin(hint) in (Union, UnionType) and len(options) == 1:
        hint = options[0]
    return get_origin(hint) or hint


def _injection(param: str, hint: object) -> Injection | None:
    bare = _bare(hint)
    # LangChain's RunnableConfig and LangGraph's ToolRuntime (a port that kept their
    # imports) are taken by name: the tool gets flowgraph's, which reads the same
    name = getattr(bare, "__name__", None)
    if bare is RunnableConfig or name == "RunnableConfig":
        return Injection(param, "config")
    if (isinstance(bare, type) and issubclass(bare, Runtime)) or name == "ToolRuntime":
        return Injection(param, "runtime")
    if get_origin(hint) is not Annotated:
        return None
    for meta in get_args(hint)[1:]:
        if meta is InjectedState:
            return Injection(param, "state")
        if isinstance(meta, InjectedState):
            return Injection(param, "state", meta.field)
        if meta is InjectedToolCallId or isinstance(meta, InjectedToolCallId):
            return Injection(param, "tool_call_id")
        if meta is InjectedStore or isinstance(meta, InjectedStore):
            return Injection(param, "store")
    return None


@dataclass(frozen=True, slots=True)
class Signature:
    """What calling the function needs: argument model, name mapping, injections."""

    args_schema: type[BaseModel]
    fields: dict[str, str]
    """Field name of `args_schema` -> parameter name of the function."""
    positional_only: tuple[str, ...]
    """Parameters that must be passed by position, in order."""
    injections: tuple[Injection, ...]


_RESERVED = frozenset(dir(BaseModel))
_CONFIG = ConfigDict(extra="forbid", protected_namespaces=(), populate_by_name=False)


def _caller_locals() -> dict[str, Any]:
    """The local names of the code that made the tool (outside flowgraph).

    A function defined inside another function, under `from __future__
    import annotations`, names local classes its hints cannot resolve from
    module globals; the defining scope is where they live (pydantic looks
    there for the same reason).
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("flowgraph."):
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    return dict(frame.f_locals) if frame is not None else {}


def _hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    try:
        return get_type_hints(fn, include_extras=True)
    except NameError:
        pass
    try:
        return get_type_hints(fn, localns=_caller_locals(), include_extras=True)
    except Exception as exc:  # a forward reference that does not resolve, a typo in a hint
        raise TypeError(
            f"Tool '{tool_name}': cannot read the type hints of {fn!r} ({exc}); "
            "make every annotation importable where the function is defined"
        ) from exc


def _field_info(
    hint: Any, default: Any, description: str | None, alias: str | None
) -> tuple[Any, Any]:
    """The (annotation, default) pair pydantic's create_model needs for one parameter.

    Descriptions the code gives (`Annotated[T, "text"]`, a `Field(description=...)`
    in the hint or as the default) win over the docstring's, which is placed
    first so that any later one overrides it.
    """
    base, meta = hint, []
    if get_origin(hint) is Annotated:
        base, *meta = get_args(hint)
    leading: list[Any] = [Field(description=description)] if description else []
    kept: list[Any] = []
    for item in meta:
        kept.append(Field(description=item) if isinstance(item, str) else item)
    trailing: list[Any] = [Field(alias=alias)] if alias else []
    extras = [*leading, *kept, *trailing]
    annotation = Annotated[(base, *extras)] if extras else base
    if isinstance(default, FieldInfo):
        return annotation, default
    if default is inspect.Parameter.empty:
        return annotation, ...
    return annotation, default


def read_signature(
    fn: Callable[..., Any],
    tool_name: str,
    param_docs: Mapping[str, str],
    args_schema: type[BaseModel] | None = None,
) -> Signature:
    """The argument model of `fn` (or `args_schema`, checked against `fn`), and its injections."""
    signature = inspect.signature(fn)
    hints = _hints(fn, tool_name)
    injections: list[Injection] = []
    definitions: dict[str, Any] = {}
    fields: dict[str, str] = {}
    positional_only: list[str] = []
    accepts_any = False
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_any = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(
                f"Tool '{tool_name}' takes *{name}; a model can only pass named "
                "arguments, so give the function named parameters"
            )
        hint = hints.get(name, Any)
        injection = _injection(name, hint)
        if injection is not None:
            injections.append(injection)
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(name)
        if args_schema is not None:
            continue
        field_name, alias = name, None
        if name in _RESERVED or name.startswith("_"):
            field_name, alias = f"{name.strip('_')}_arg_", name
        definitions[field_name] = _field_info(hint, param.default, param_docs.get(name), alias)
        fields[field_name] = name
    if args_schema is not None:
        fields = {field: field for field in args_schema.model_fields}
        params = set(signature.parameters)
        unknown = [f for f in fields if f not in params]
        if unknown and not accepts_any:
            raise TypeError(
                f"Tool '{tool_name}': args_schema {args_schema.__name__} has field(s) "
                f"{', '.join(unknown)} that the function does not take"
            )
        return Signature(args_schema, fields, tuple(positional_only), tuple(injections))
    try:
        model: type[BaseModel] = create_model(
            f"{tool_name}_args", __config__=_CONFIG, **definitions
        )
        model.model_json_schema()
    except Exception as exc:
        raise TypeError(
            f"Tool '{tool_name}': a parameter type cannot be described to a model as JSON "
            f"schema ({exc}); use JSON-friendly types (str, int, float, bool, list, dict, "
            "Literal, Enum, pydantic models) or annotate the parameter InjectedState"
        ) from exc
    return Signature(model, fields, tuple(positional_only), tuple(injections))


# -- JSON schema ----------------------------------------------------------------

_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")
_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")


def _refs_in(schema: Any, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref.removeprefix("#/$defs/"))
        for value in schema.values():
            _refs_in(value, found)
    elif isinstance(schema, list):
        for item in schema:
            _refs_in(item, found)
    return found


def _recursive_defs(defs: Mapping[str, Any]) -> set[str]:
    """Definitions that reach themselves through $refs (these cannot be inlined)."""
    edges = {name: _refs_in(body, set()) for name, body in defs.items()}
    recursive = set()
    for start in defs:
        seen: set[str] = set()
        stack = list(edges.get(start, ()))
        while stack:
            name = stack.pop()
            if name == start:
                recursive.add(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges.get(name, ()))
    return recursive


def _clean(schema: Any, defs: Mapping[str, Any], keep: set[str]) -> Any:
    """Strip titles, inline non-recursive $refs; recurse into sub-schemas only."""
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in defs and name not in keep:
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            return _clean({**defs[name], **extra}, defs, keep)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, keep) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean(sub, defs, keep) for sub in value]
        elif key in _SCHEMA_VALUES and isinstance(value, dict):
            out[key] = _clean(value, defs, keep)
        else:
            out[key] = value
    return out


def clean_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The parameters schema a provider expects: an object, no titles, refs inlined.

    Inlined definitions make the schema readable by every provider (some
    reject `$ref`); only recursive models keep `$defs`.
    """
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.pop("$defs", {})
    keep = _recursive_defs(defs)
    raw.pop("description", None)  # the tool's description says it once
    cleaned: dict[str, Any] = _clean(raw, defs, keep)
    out: dict[str, Any] = {"type": "object", "properties": cleaned.pop("properties", {})}
    cleaned.pop("type", None)
    out.update(cleaned)
    if keep:
        out["$defs"] = {name: _clean(defs[name], defs, keep) for name in sorted(keep)}
    return out
