"""The widget as a test sees it. Playwright's CSS locators pierce open shadow roots, so plain
selectors reach inside; focus inside the shadow root is read through `shadowRoot.activeElement`."""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import Locator, Page, expect

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
