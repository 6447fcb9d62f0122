"""Names a package exports but imports only when first asked for (module `__getattr__`).

Keeps optional or heavy dependencies (httpx, the diagram code, database
drivers) off `import flowgraph`, while `from flowgraph import X`, `dir()`
and `__all__` stay as if everything were imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for `names` (name -> module that defines it).

    A loaded name is stored in `namespace` (the package's globals), so the
    import happens once and later lookups are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
