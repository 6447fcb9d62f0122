"""Finding the user's app: `FILE[:name]` or `package.module[:name]`.

The name may be a compiled graph, a `StateGraph` (compiled here), or a
function (a factory) returning either. Without a name, `app` is used, or
the module's only compiled graph. A file is imported under its own stem
(`agent.py` becomes module `agent`, with its directory on `sys.path`), as
`import agent` would, so classes it registers with the codec keep the
names a script importing it would give them.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from flowgraph.cli._errors import CliError, UsageError
from flowgraph.graph import CompiledGraph, StateGraph

__all__ = ["LoadedApp", "load_app"]

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
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and isinstance(value, (CompiledGraph, StateGraph))
    ]


def _attribute(module: ModuleType, name: str | None, where: str) -> tuple[str, Any]:
    if name is None:
        if hasattr(module, DEFAULT_NAME):
            name = DEFAULT_NAME
        else:
            found = _candidates(module)
            if len(found) != 1:
                listed = f" (it has: {', '.join(found)})" if found else ""
                raise CliError(
                    f"{where} has no `{DEFAULT_NAME}` and no single graph to pick{listed}; "
                    f"name one: {where}:NAME"
                )
            name = found[0]
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            found = _candidates(module)
            listed = f"; graphs it defines: {', '.join(found)}" if found else ""
            raise CliError(f"{where} has no attribute {name!r}{listed}")
        value = getattr(value, part)
    return name, value


def _as_app(value: Any, label: str) -> CompiledGraph:
    if isinstance(value, CompiledGraph):
        return value
    if isinstance(value, StateGraph):
        return value.compile()
    if callable(value) and not isinstance(value, type):
        required = [
            p
            for p in inspect.signature(value).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if required:
            names = ", ".join(p.name for p in required)
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
