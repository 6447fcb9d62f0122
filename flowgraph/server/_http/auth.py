"""Who may call the API: a shared token, compared in constant time; and where to listen.

With a token every request needs `x-api-key: TOKEN` or `Authorization:
Bearer TOKEN`, else 401. `/ok`, `/info`, the inspector's static files
(`/ui`) and `/` (a redirect to them) stay open: a load balancer checks
health, and the inspector page asks for the token and sends it as a header.
"""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["OPEN_PATHS", "TokenAuth", "is_loopback"]

OPEN_PATHS = ("/", "/ok", "/info", "/ui")
OPEN_PREFIXES = ("/ui/",)
"""The inspector's static files: the page asks for the token and sends it itself."""


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token_of(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"x-api-key":
            return bytes(value).decode("latin-1")
        if name == b"authorization":
            scheme, _, credentials = bytes(value).decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return credentials.strip()
    return None


class TokenAuth:
    """ASGI middleware refusing API calls without the token (401, JSON `detail`)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES) or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        given = _token_of(scope)
        if given is not None and hmac.compare_digest(given.encode(), self.token):
            await self.app(scope, receive, send)
            return
        detail = (
            "Missing API token: send it as the x-api-key header or as Authorization: Bearer"
            if given is None
            else "Invalid API token"
        )
        body = json.dumps({"detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
