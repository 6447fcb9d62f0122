"""Griffe extension: a docstring's doctest examples render as code on the API pages.

The docstrings show examples as doctests (`>>> ...` lines, then the output,
up to a blank line) without a Markdown fence; Markdown would read `>>>` as
nested quotes and `['city']` as a link. This wraps each such run of lines in
a ```pycon fence before the docstring is parsed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

PROMPT = re.compile(r"^(\s*)>>> ")


def fence_doctests(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        prompt = PROMPT.match(line)
        if fenced or not prompt:
            out.append(line)
            i += 1
            continue
        indent = prompt.group(1)
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
