"""Finding the user's app: `FILE[:name]` or `package.module[:name]`.

The name may be a compiled graph, a `StateGraph` (compiled here), or a
function (a factory) returning either. Without a name, `app` is used, or
the module's only graph; when neither is there, the error lists what the
module has that could be meant (graphs, StateGraphs, functions annotated
to return one), or shows the two shapes the CLI accepts. A file is imported under its own stem
(`agent.py` becomes module `agent`, with its directory on `sys.path`), as
`import agent` would, so classes it registers with the codec keep the
names a script importing it would give them.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, get_origin

from flowgraph.cli._errors import CliError, UsageError
from flowgraph.graph import CompiledGraph, StateGraph

__all__ = ["LoadedApp", "load_app", "named_spec"]

DEFAULT_NAME = "app"


@dataclass(frozen=True, slots=True)
class LoadedApp:
    app: CompiledGraph
    spec: str
    """Where it came from, absolute, so another command in another directory finds it."""


def _split(spec: str) -> tuple[str, str | None]:
    target, sep, name = spec.rpartition(":")
    if sep and target and all(part.isidentifier() for part in name.split(".")):
        return target, name
    if sep and not target:
        raise UsageError(f"App spec {spec!r} names no file or module before ':'")
    return spec, None


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target or Path(target).exists()


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise CliError(f"No such file: {path}")
    stem = path.stem if path.stem.isidentifier() else "flowgraph_app"
    existing = sys.modules.get(stem)
    if existing is not None and getattr(existing, "__file__", None) == str(path):
        return existing
    name = stem if existing is None else f"flowgraph_app_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise CliError(f"Importing {path} failed: {type(exc).__name__}: {exc}") from exc
    return module


def _import_module(name: str) -> ModuleType:
    sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise CliError(
                f"No such file or module: {name} (a file needs its path, e.g. ./{name}.py)"
            ) from exc
        raise CliError(f"Importing {name} failed: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise CliError(f"Importing {name} failed: {type(exc).__name__}: {exc}") from exc


def _candidates(module: ModuleType) -> list[str]:
    """The module's graphs, the only things picked without being named."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and isinstance(value, (CompiledGraph, StateGraph))
    ]


def _returns_graph(function: Any) -> str | None:
    """`CompiledGraph` or `StateGraph` if the function's return annotation says so."""
    try:
        returns = inspect.signature(function, eval_str=True).return_annotation
    except Exception:  # an annotation naming what only TYPE_CHECKING imports: read the text
        returns = inspect.signature(function).return_annotation
    returns = get_origin(returns) or returns  # `CompiledGraph[State]`: the class it types
    if isinstance(returns, type) and issubclass(returns, (CompiledGraph, StateGraph)):
        return "StateGraph" if issubclass(returns, StateGraph) else "CompiledGraph"
    if isinstance(returns, str):
        last = returns.strip().partition("[")[0].rpartition(".")[2]
        return last if last in ("CompiledGraph", "StateGraph") else None
    return None


def _required(function: Any) -> list[str]:
    """The parameters a call with no arguments would miss."""
    return [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


@dataclass(frozen=True, slots=True)
class _Meant:
    """Something in the module that may be the app the user meant."""

    name: str
    shown: str
    runnable: bool


def _could_be_meant(module: ModuleType) -> list[_Meant]:
    """What in the module looks like an app: graphs, StateGraphs, factories annotated so."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, CompiledGraph):
            found.append(_Meant(name, f"{name} (a compiled graph)", True))
        elif isinstance(value, StateGraph):
            found.append(_Meant(name, f"{name} (a StateGraph)", True))
        elif inspect.isfunction(value) and value.__module__ == module.__name__:
            returns = _returns_graph(value)
            if returns is None:
                continue
            needs = _required(value)
            if needs:
                shown = (
                    f"{name}({', '.join(needs)}) (returns {returns}; the CLI passes no arguments)"
                )
            else:
                shown = f"{name}() (returns {returns})"
            found.append(_Meant(name, shown, not needs))
    return found


def _shapes(where: str) -> str:
    """The two shapes the CLI accepts, each with a one-line example."""
    return (
        f"give it `app = graph.compile()` at module level (run as {where}), or a factory "
        f"`def make_app() -> CompiledGraph: ...` (run as {where}:make_app)"
    )


def _listed(meant: list[_Meant], where: str) -> str:
    """`it has: ...; name one: ...`, or what to add when nothing there can be run."""
    if not meant:
        return (
            f"it defines no compiled graph, StateGraph or function returning one; {_shapes(where)}"
        )
    has = f"it has: {', '.join(m.shown for m in meant)}"
    runnable = [m.name for m in meant if m.runnable]
    if runnable:
        return f"{has}; name one: {where}:{runnable[0]}"
    return f"{has}; none runs without arguments: {_shapes(where)}"


def _attribute(module: ModuleType, name: str | None, where: str) -> tuple[str, Any]:
    if name is None:
        if hasattr(module, DEFAULT_NAME):
            name = DEFAULT_NAME
        else:
            found = _candidates(module)
            if len(found) != 1:
                meant = _could_be_meant(module)
                what = " and no single graph to pick" if meant else ""
                raise CliError(f"{where} has no `{DEFAULT_NAME}`{what}; {_listed(meant, where)}")
            name = found[0]
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            listed = _listed(_could_be_meant(module), where)
            raise CliError(f"{where} has no attribute {name!r}; {listed}")
        value = getattr(value, part)
    return name, value


def _as_app(value: Any, label: str) -> CompiledGraph:
    if isinstance(value, CompiledGraph):
        return value
    if isinstance(value, StateGraph):
        return value.compile()
    if callable(value) and not isinstance(value, type):
        required = _required(value)
        if required:
            names = ", ".join(required)
            raise CliError(
                f"{label} is a function that needs arguments ({names}); "
                "the CLI calls a factory with none"
            )
        try:
            made = value()
        except Exception as exc:
            raise CliError(f"Calling {label}() failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(made, (CompiledGraph, StateGraph)):
            return _as_app(made, f"{label}()")
        raise CliError(
            f"{label}() returned {type(made).__name__}, not a compiled graph; "
            "return StateGraph.compile() from it"
        )
    raise CliError(
        f"{label} is {type(value).__name__}, not a compiled graph (StateGraph.compile()) "
        "or a function returning one"
    )


def load_app(spec: str) -> LoadedApp:
    """Import the app `spec` names; CliError with what to fix when it cannot."""
    target, name = _split(spec)
    if _is_file(target):
        path = Path(target).expanduser().resolve()
        module = _import_file(path)
        where, canonical = target, str(path)
    else:
        module = _import_module(target)
        where = canonical = target
    name, value = _attribute(module, name, where)
    return LoadedApp(_as_app(value, f"{where}:{name}"), f"{canonical}:{name}")


_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def named_spec(spec: str) -> tuple[str, str]:
    """(name, app spec) of `NAME=APP`, as `serve` and `mcp` take apps.

    Without `NAME=`: the app's NAME after ':', else the file's stem or the
    module's last name.
    """
    head, sep, rest = spec.partition("=")
    if sep and _NAME.fullmatch(head) and rest:
        return head, rest
    target, colon, name = spec.rpartition(":")
    if colon and target and name.replace(".", "").isidentifier():
        return name.split(".")[-1], spec
    if _is_file(spec):
        return Path(spec).stem, spec
    return spec.rsplit(".", 1)[-1], spec
