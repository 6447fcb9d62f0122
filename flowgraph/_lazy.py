"""Names a package exports but imports only when first asked for (module `__getattr__`).

`import flowgraph` loads almost nothing: each name, and each subpackage, is
imported the first time a program asks for it, so a CLI command, a worker
or a serverless function that resumes one thread pays only for what it
uses. `from flowgraph import X`, `dir()` and `__all__` stay as if
everything were imported.

Providers let a lower layer reach code of a higher one without importing
it: the graph's diagram methods are drawn by `flowgraph.viz`, which the
top-level package registers here as the provider of "diagrams".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["LazyModule", "lazy_exports", "load_provider", "register_provider"]


def lazy_exports(
    package: str,
    names: Mapping[str, str],
    namespace: dict[str, Any],
    submodules: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for `names` (name -> module that defines it).

    `submodules` are the package's own modules reachable as attributes
    (`flowgraph.checkpoint` after a bare `import flowgraph`). A loaded name is
    stored in `namespace` (the package's globals), so the import happens once
    and later lookups are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if name in submodules:
                return importlib.import_module(f"{package}.{name}")  # sets the attribute
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names) | set(submodules))

    return __getattr__, __dir__


class LazyModule:
    """A module imported at the first attribute read: `serde = LazyModule("...serde")`.

    For a module only some runs need (the checkpoint codec: runs without a
    checkpointer never encode). Each attribute read once is kept on the
    object, so later reads cost what a module attribute read costs. Declare
    the real import under TYPE_CHECKING so type checkers see the module.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<LazyModule {self._name!r}>"


_providers: dict[str, str] = {}


def register_provider(kind: str, module: str) -> None:
    """Name the module that provides `kind` (it registers itself when imported)."""
    _providers[kind] = module


def load_provider(kind: str) -> bool:
    """Import the module registered for `kind`; False when none is registered."""
    module = _providers.get(kind)
    if module is None:
        return False
    importlib.import_module(module)
    return True
