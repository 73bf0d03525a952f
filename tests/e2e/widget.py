"""The widget as a test sees it. Playwright's CSS locators pierce open shadow roots, so plain
selectors reach inside; focus inside the shadow root is read through `shadowRoot.activeElement`.
`Frames` is what went over the widget's sockets, as Chromium itself saw it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Locator, Page, WebSocket, expect

NO_ANSWER = "точного ответа у меня нет"


class Widget:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.launcher = page.locator("spravka-widget .launcher")
        self.panel = page.locator("spravka-widget .panel")
        self.log = page.locator("spravka-widget [role=log]")
        self.input = page.locator("spravka-widget .compose textarea")
        self.notice = page.locator("spravka-widget .notice")
        self.status = page.locator("spravka-widget .status")

    def open(self) -> None:
        if not self.panel.is_visible():
            self.launcher.click()
        expect(self.panel).to_be_visible()

    def ask(self, text: str) -> None:
        self.input.fill(text)
        self.input.press("Enter")

    def messages(self, role: str) -> Locator:
        return self.log.locator(f".msg.{role}")

    def last(self, role: str) -> Locator:
        return self.messages(role).last

    def focused(self) -> str:
        """Class of the focused element inside the widget ("" when focus is elsewhere)."""
        return str(self.page.evaluate(
            "() => { const host = document.querySelector('spravka-widget');"
            " const el = host && host.shadowRoot.activeElement;"
            " return el ? (el.className || el.tagName.toLowerCase()) : ''; }"
        ))


def wait_for(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Poll a condition on the test side (server state), where Playwright's expect cannot look."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


@dataclass
class Socket:
    url: str
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False


class Frames:
    """Every websocket the page opens (across reloads and navigations of the tab) and the JSON
    frames each way, in order, from Chromium's own record of them (Playwright's websocket events):
    nothing stands between the widget and the server. Playwright hands its events over only while
    the test waits on it, so conditions on frames are waited for with `wait`, never time.sleep."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.sockets: list[Socket] = []
        page.on("websocket", self._opened)

    def _opened(self, ws: WebSocket) -> None:
        socket = Socket(ws.url)
        self.sockets.append(socket)
        ws.on("framesent", lambda payload: socket.sent.append(_frame(payload)))
        ws.on("framereceived", lambda payload: socket.received.append(_frame(payload)))
        ws.on("close", lambda _ws: setattr(socket, "closed", True))

    def sent(self, kind: str) -> list[dict[str, Any]]:
        return [f for socket in self.sockets for f in socket.sent if f.get("type") == kind]

    def received(self, kind: str) -> list[dict[str, Any]]:
        return [f for socket in self.sockets for f in socket.received if f.get("type") == kind]

    def wait(self, condition: Callable[[], object], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"condition on the widget's frames not met in {timeout:.0f} s: {self.sockets}")
            self.page.wait_for_timeout(50)


def _frame(payload: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(payload)
    except ValueError:
        return {"type": "(not json)", "raw": str(payload)[:200]}
    return data if isinstance(data, dict) else {"type": "(not an object)", "raw": str(payload)[:200]}
