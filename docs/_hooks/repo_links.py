"""MkDocs hook: links from a page to the repository's own files (outside docs/).

The pages link to the code as it sits next to them in the repository
(`../examples/quickstart.py` from `docs/examples.md`), so they read the same
on a forge as on the site. MkDocs cannot find such a target among the
documentation files, so this hook checks that the file exists (a warning
otherwise, which `mkdocs build --strict` fails on) and points the link at it:
at `repo_url`/blob/main/PATH when mkdocs.yml sets `repo_url`, otherwise at a
copy of the file placed in the site under `repo/`, so the site stands alone.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.repo_links")

LINK = re.compile(r"(\]\()(\.\./[^)\s#]+)(#[^)\s]*)?(\))")
CODE = re.compile(r"(^```.*?^```)", re.M | re.S)
COPIES = "repo"


def _repository(config: Any) -> Path:
    return Path(config["docs_dir"]).resolve().parent


def _targets(config: Any, files: Files) -> dict[str, Path]:
    """Repository files the pages link to: path in the repository -> file."""
    root = _repository(config)
    found: dict[str, Path] = {}
    for page in files.documentation_pages():
        text = Path(page.abs_src_path or "").read_text(encoding="utf-8")
        for match in LINK.finditer("".join(_prose(text)[::2])):
            path = _resolve(page.src_uri, match.group(2))
            if path is not None and (root / path).is_file():
                found[path] = root / path
    return found


def _prose(markdown: str) -> list[str]:
    """The markdown cut at its fenced code blocks: odd items are code (no links there)."""
    return CODE.split(markdown)


def _resolve(src_uri: str, url: str) -> str | None:
    """The repository path `url` names from the page `src_uri` (None: inside docs/)."""
    path = posixpath.normpath(posixpath.join("docs", posixpath.dirname(src_uri), url))
    if path.startswith("docs/") or path.startswith(".."):
        return None
    return path


def on_files(files: Files, config: Any) -> Files:
    if not config.get("repo_url"):
        for path, source in _targets(config, files).items():
            files.append(File.generated(config, f"{COPIES}/{path}", abs_src_path=str(source)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    root = _repository(config)
    repo_url = (config.get("repo_url") or "").rstrip("/")
    depth = page.file.src_uri.count("/")

    def link(match: re.Match[str]) -> str:
        path = _resolve(page.file.src_uri, match.group(2))
        if path is None:
            return match.group(0)
        if not (root / path).is_file():
            log.warning("%s links to %s, which is not in the repository", page.file.src_uri, path)
            return match.group(0)
        if repo_url:
            target = f"{repo_url}/blob/main/{path}"
        else:
            target = "../" * depth + f"{COPIES}/{path}"
        return match.group(1) + target + (match.group(3) or "") + match.group(4)

    parts = _prose(markdown)
    return "".join(p if i % 2 else LINK.sub(link, p) for i, p in enumerate(parts))
