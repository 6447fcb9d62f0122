"""The inspector at `/ui`: static HTML, CSS and JavaScript, served as written (no build step).

The page calls the same API any client calls, with the token the user
types (sent as `x-api-key`, never in a URL), so it can see and do nothing
a client could not. Its files are open (the auth middleware lets `/ui`
through); a Content-Security-Policy on every file keeps the page from
loading or sending anything to another host, even if a thread's messages
carry links or markup.
"""

from __future__ import annotations

from pathlib import Path

from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["CONTENT_SECURITY_POLICY", "ROUTES", "UI_DIR"]

UI_DIR = Path(__file__).parents[1] / "ui"
"""The inspector's files, shipped as package data."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
"""Set here, not guessed: some systems map .js to text/plain, which browsers refuse to run."""


class InspectorFiles(StaticFiles):
    """StaticFiles with fixed content types and the headers that keep the page to itself."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            suffix = Path(path).suffix or ".html"  # "" is the folder: its index.html
            if suffix in _TYPES and response.status_code == 200:
                response.headers["content-type"] = _TYPES[suffix]
            response.headers["content-security-policy"] = CONTENT_SECURITY_POLICY
            response.headers["x-content-type-options"] = "nosniff"
            response.headers["referrer-policy"] = "no-referrer"
            response.headers["cache-control"] = "no-cache"
        return response


ROUTES = [Mount("/ui", app=InspectorFiles(directory=UI_DIR, html=True), name="ui")]
