"""Prompt templates: text with `{name}` / `${name}` placeholders that renders to messages.

Both placeholder styles mean the same thing, so templates written for
LangChain (`{topic}`) or Spring AI / shell habits (`${topic}`) work
unchanged. `{{` and `}}` are literal braces (`${{x}}` renders `${x}`). A
placeholder may reach into a value with dots: `{user.name}` reads the key
or attribute `name` of `user`. The template is parsed once, when built: an
unbalanced brace is an error at that point, not at render time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from flowgraph.messages import BaseMessage, HumanMessage, SystemMessage

__all__ = ["PromptTemplate", "SystemPromptTemplate"]

_TOKEN = re.compile(r"\{\{|\}\}|\$?\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"^[A-Za-z_]\w*(\.\w+)*$")


@dataclass(frozen=True, slots=True)
class _Placeholder:
    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.path[0]


def _parse(template: str) -> tuple[str | _Placeholder, ...]:
    segments: list[str | _Placeholder] = []
    text: list[str] = []
    position = 0
    for match in _TOKEN.finditer(template):
        text.append(template[position : match.start()])
        position = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            text.append(token[0])
            continue
        inner = match.group(1)
        if inner is None:
            raise ValueError(
                f"Unmatched {token!r} at position {match.start()} of the template; write "
                f"'{token * 2}' for a literal brace"
            )
        name = inner.strip()
        if not _NAME.match(name):
            raise ValueError(
                f"Placeholder {token!r} at position {match.start()} is not a variable name; "
                "use {name} or ${name} (letters, digits, '_', dots for fields), "
                "or '{{' and '}}' for literal braces"
            )
        if text:
            segments.append("".join(text))
            text = []
        segments.append(_Placeholder(tuple(name.split("."))))
    text.append(template[position:])
    if any(text):
        segments.append("".join(text))
    return tuple(segments)


def _lookup(value: Any, path: tuple[str, ...], full: str) -> Any:
    for part in path:
        if isinstance(value, Mapping):
            if part not in value:
                raise ValueError(f"Template variable {{{full}}}: {part!r} is not in the value")
            value = value[part]
        elif hasattr(value, part):
            value = getattr(value, part)
        else:
            raise ValueError(
                f"Template variable {{{full}}}: {type(value).__name__} has no field {part!r}"
            )
    return value


class PromptTemplate:
    """A text template that renders to a string or a `HumanMessage`.

    >>> PromptTemplate("Review this ${language} code: {code}").format(
    ...     language="Python", code="print(1)"
    ... )
    'Review this Python code: print(1)'

    Extra variables are ignored; a missing one raises a ValueError naming it.
    """

    message_class: ClassVar[type[BaseMessage]] = HumanMessage

    __slots__ = ("_partials", "_segments", "template")

    def __init__(self, template: str, *, partial_variables: Mapping[str, Any] | None = None):
        if not isinstance(template, str):
            raise TypeError(f"A prompt template is a string, not {type(template).__name__}")
        self.template = template
        self._segments = _parse(template)
        self._partials: dict[str, Any] = dict(partial_variables or {})

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables the template needs, in order of first use (partials excluded)."""
        names = (s.name for s in self._segments if isinstance(s, _Placeholder))
        return tuple(n for n in dict.fromkeys(names) if n not in self._partials)

    def partial(self, **variables: Any) -> PromptTemplate:
        """A copy with some variables fixed now, the rest given at render time."""
        return type(self)(self.template, partial_variables={**self._partials, **variables})

    def render(self, variables: Mapping[str, Any] | None = None, /, **kwargs: Any) -> str:
        """The text with every placeholder filled from `variables` and keyword arguments."""
        values = {**self._partials, **(variables or {}), **kwargs}
        missing = [name for name in self.variables if name not in values]
        if missing:
            needed = ", ".join(self.variables)
            raise ValueError(
                f"Prompt template is missing variable(s) {', '.join(map(repr, missing))} "
                f"(it uses: {needed}); pass {missing[0]}=..."
            )
        out = []
        for segment in self._segments:
            if isinstance(segment, str):
                out.append(segment)
            else:
                value = _lookup(values[segment.name], segment.path[1:], ".".join(segment.path))
                out.append(value if isinstance(value, str) else str(value))
        return "".join(out)

    def format(self, **variables: Any) -> str:
        """`render` with keyword arguments only, as `str.format` is called."""
        return self.render(variables)

    def to_message(
        self, variables: Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> BaseMessage:
        """The rendered text as a message of this template's kind (a HumanMessage here)."""
        return self.message_class(content=self.render(variables, **kwargs))

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, PromptTemplate)
            and (other.template, other._partials) == (self.template, self._partials)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.template))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.template!r})"


class SystemPromptTemplate(PromptTemplate):
    """A template whose message is a `SystemMessage` (instructions, a persona)."""

    message_class: ClassVar[type[BaseMessage]] = SystemMessage

    __slots__ = ()

    def to_message(
        self, variables: Mapping[str, Any] | None = None, /, **kwargs: Any
    ) -> SystemMessage:
        """The rendered text as a SystemMessage."""
        return SystemMessage(content=self.render(variables, **kwargs))
