"""Headless Chromium driven over the Chrome DevTools Protocol, from Python, offline.

Nothing to install beyond Debian's `chromium`: the browser is started with a
fresh profile and `--remote-debugging-port=0`, writes the port it took to
`DevToolsActivePort`, and is spoken to over its websocket with `websockets`
(already here: the official `langgraph-sdk` depends on it). Clicks and typing
go through `Input.*`, as a user's would: a click lands on whatever is drawn at
the element's centre. Every request the page makes, every console error and
every uncaught exception is recorded for the test to check.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viz.test_chromium import FLAGS as OFFLINE_FLAGS  # the flags that keep Chromium offline
from websockets.sync.client import ClientConnection, connect

FLAGS = (*OFFLINE_FLAGS, "--remote-debugging-port=0")


class BrowserError(AssertionError):
    """The page did not get where a test waited for it to get."""


@dataclass
class Request:
    url: str
    method: str
    headers: dict[str, str]
    status: int | None = None


@dataclass
class Chromium:
    """One browser with one page; `close()` ends the process."""

    executable: str
    profile: Path
    width: int = 1440
    height: int = 1000
    process: subprocess.Popen[bytes] = field(init=False)
    socket: ClientConnection = field(init=False)
    session: str = field(init=False)
    requests: dict[str, Request] = field(init=False, default_factory=dict)
    errors: list[str] = field(init=False, default_factory=list)
    _next: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.profile.mkdir(parents=True, exist_ok=True)
        self.log = self.profile.parent / f"{self.profile.name}.log"
        self._port_file = self.profile / "DevToolsActivePort"
        self._port_file.unlink(missing_ok=True)  # a reused profile's names a port long closed
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [self.executable, *FLAGS, f"--user-data-dir={self.profile}",
                 f"--window-size={self.width},{self.height}", "about:blank"],
                stdout=log, stderr=subprocess.STDOUT,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.profile)},
            )  # fmt: skip
        try:
            self._connect()
        except BaseException:
            self.process.kill()
            self.process.wait(10)
            raise

    def _connect(self) -> None:
        port_file = self._port_file
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise BrowserError(f"Chromium did not open its DevTools port:\n{self._log()}")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self._exit = contextlib.ExitStack()
        self.socket = self._exit.enter_context(
            connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=30)
        )
        target = self.call("Target.createTarget", url="about:blank", browser=True)["targetId"]
        attached = self.call("Target.attachToTarget", targetId=target, flatten=True, browser=True)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=self.width, height=self.height, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip

    def _log(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    # -- the protocol -----------------------------------------------------------------

    def call(self, method: str, *, browser: bool = False, **params: Any) -> Any:
        """Send one command (to the page, or with `browser` to the browser); its result.

        Events that arrive meanwhile are recorded.
        """
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if not browser:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + 60
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer {method} in 60 s")
            reply = json.loads(self.socket.recv(timeout=left))
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method} failed: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._record(reply["method"], reply.get("params", {}))

    def _record(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            request = params["request"]
            self.requests[params["requestId"]] = Request(
                request["url"], request["method"], dict(request.get("headers", {}))
            )
        elif method == "Network.responseReceived":
            seen = self.requests.get(params["requestId"])
            if seen is not None:
                seen.status = params["response"]["status"]
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(
                "console: "
                + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded":
            entry = params["entry"]
            # a 401 before the token is typed is the page working as meant, not an error
            if entry.get("level") == "error" and entry.get("source") != "network":
                self.errors.append(f"{entry.get('source')}: {entry.get('text')}")

    # -- what a test does -------------------------------------------------------------

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", what=f"{url} to load")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(
                f"{expression!r} threw: "
                f"{details.get('exception', {}).get('description') or details.get('text')}"
            )
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 30.0, what: str = "") -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        value: Any = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise BrowserError(
            f"Waited {timeout} s for {what or expression}; last value {value!r}; "
            f"page errors: {self.errors}; page text:\n{self.text('body')[:3000]}"
        )

    def text(self, selector: str) -> str:
        """The element's text as drawn (innerText); '' when there is no such element."""
        value = self.evaluate(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''")
        return str(value)

    def texts(self, selector: str) -> list[str]:
        return list(
            self.evaluate(
                f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.innerText)"
            )
        )

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element (scrolled into view first)."""
        box = self.wait_for(
            f"""(() => {{
              const el = document.querySelector({json.dumps(selector)});
              if (!el) return null;
              el.scrollIntoView({{block: 'center', inline: 'center'}});
              const r = el.getBoundingClientRect();
              return r.width && r.height ? {{x: r.x + r.width / 2, y: r.y + r.height / 2}} : null;
            }})()""",
            what=f"{selector} to be shown",
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                button="left", clickCount=1,
            )  # fmt: skip

    def type(self, selector: str, text: str) -> None:
        """Click into the field and type `text` (as an input method would insert it)."""
        self.click(selector)
        self.call("Input.insertText", text=text)

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                windowsVirtualKeyCode=13, text="\r" if kind == "keyDown" else "",
            )  # fmt: skip

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True)
        except Exception:  # already gone: the process is ended below either way
            pass
        try:
            self._exit.close()
        finally:
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
