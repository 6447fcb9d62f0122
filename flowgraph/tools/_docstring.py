"""Reading a tool's description and parameter descriptions from its docstring.

Google style (`Args:` / `Arguments:` / `Parameters:` sections) and Sphinx
style (`:param name: text`) are understood; anything else leaves the
parameters undescribed rather than guessing.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Kwargs):\s*$")
_ANY_SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")
_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")
_SPHINX = re.compile(r"^:param\s+(?:[^:\s]+\s+)?(?P<name>\w+)\s*:\s*(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """A docstring split into what a tool definition needs."""

    description: str
    """The first paragraph, its lines joined by single spaces."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name -> description, from the Args section (or :param lines)."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    return " ".join(part.strip() for part in lines if part.strip())


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """The first paragraph as the description, and each documented parameter's text.

    >>> parse_docstring('''Add two numbers.
    ...
    ...     Args:
    ...         a: the first
    ...         b (int): the second,
    ...             on two lines
    ...     ''').params
    {'a': 'the first', 'b': 'the second, on two lines'}
    """
    if not doc:
        return ParsedDocstring("")
    lines = inspect.cleandoc(doc).splitlines()
    first: list[str] = []
    for line in lines:
        if not line.strip() or _ANY_SECTION.match(line.strip()) or line.startswith(":"):
            break
        first.append(line)
    return ParsedDocstring(_join(first), _google_params(lines) or _sphinx_params(lines))


def _google_params(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    in_section = False
    section_indent = 0
    entry_indent: int | None = None
    current: list[str] | None = None
    name = ""
    for line in lines:
        stripped = line.strip()
        if not in_section:
            if _SECTION.match(stripped):
                in_section, section_indent, entry_indent = True, _indent(line), None
            continue
        if not stripped:
            continue
        indent = _indent(line)
        if indent <= section_indent:
            # the next section (Returns:, Raises:, ...) ends this one, unless it is another Args
            in_section = bool(_SECTION.match(stripped))
            entry_indent = None
            current = None
            continue
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.match(stripped)
        if indent == entry_indent and match:
            name = match["name"]
            current = [match["text"]]
            params[name] = _join(current)
        elif current is not None:
            current.append(stripped)
            params[name] = _join(current)
    return params


def _sphinx_params(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    name: str | None = None
    for line in lines:
        stripped = line.strip()
        match = _SPHINX.match(stripped)
        if match:
            name = match["name"]
            params[name] = match["text"].strip()
        elif name is not None and stripped and not stripped.startswith(":"):
            params[name] = _join([params[name], stripped])
        else:
            name = None
    return params
