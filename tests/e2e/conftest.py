"""Browser fixtures: Debian's Chromium driven by Playwright (its own browser download does not work
on these machines), the demo shop on a free port, and the chat server the widget talks to: the real
app under uvicorn on the test database (tests/e2e/netfault.py puts network faults in front of it)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, sync_playwright
from pytest_django import DjangoDbBlocker

from demo.server import DemoServer, serve_in_thread
from tests.conftest import REPO
from tests.e2e.widget import Frames

SCREENSHOTS = REPO / "docs" / "screenshots"
# Looked up on the PATH in the same order as .ci/run does, which installs Debian's package when neither is there.
CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
APP_DB_NAME = "spravka-e2e-app"

ShopFactory = Callable[..., str]
T = TypeVar("T")


def chromium_path() -> str:
    """The Chromium Playwright drives: the first of CHROMIUM_NAMES on the PATH."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError(
        "Chromium not found on the PATH (looked for chromium, then chromium-browser). Install Debian's "
        "package (apt-get install chromium; .ci/run does this) or put a Chromium on the PATH."
    )


# Module scope, not session: a sync Playwright must not outlive into the asyncio loops that
# pytest-asyncio runs for async tests elsewhere in the same session.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an asyncio loop alive in this thread, so Django refuses ORM
    # calls (test data, the flush after a transactional test) as if they came from async code.
    # They do not: allow them exactly while the browser lives.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
        chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile per test: a new visitor with empty localStorage."""
    ctx = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab that fails the test on any uncaught JavaScript error."""
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    assert errors == [], f"JavaScript errors on the page: {errors}"


@contextmanager
def owner_page(browser: Browser, app_url: str, *, locale: str = "ru-RU") -> Iterator[Page]:
    """A browser profile of its own (in `locale`), allowed to use the clipboard on the app's pages;
    fails the test on any uncaught JavaScript error."""
    ctx = browser.new_context(viewport=DESKTOP, locale=locale)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    tab = ctx.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield tab
    finally:
        ctx.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def snippet(app_url: str, public_key: str, **attrs: str) -> str:
    extra = "".join(f' data-{name}="{value}"' for name, value in attrs.items())
    return f'<script src="{app_url}/static/assistant/widget.js" data-bot="{public_key}"{extra} async></script>'


@pytest.fixture(scope="module")
def shop_factory() -> Iterator[ShopFactory]:
    """Start the demo shop with a given widget snippet; returns its origin."""
    servers: list[DemoServer] = []

    def start(widget_snippet: str) -> str:
        server = serve_in_thread("127.0.0.1", 0, widget_snippet)
        servers.append(server)
        return server.base_url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def frames(page: Page) -> Frames:
    """The page's widget sockets and their frames, as Chromium sent and received them."""
    return Frames(page)


# ----- the real app -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url(db: dict[str, object]) -> str:
    """settings.DATABASES["default"] (pointing at the test database) as a DATABASE_URL."""
    user = quote(str(db.get("USER") or ""), safe="")
    password = quote(str(db.get("PASSWORD") or ""), safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port, name = str(db.get("HOST") or ""), str(db.get("PORT") or ""), quote(str(db["NAME"]), safe="")
    if host.startswith("/"):  # the embedded server listens on a unix socket
        return f"postgresql://{auth}/{name}?host={quote(host, safe='/')}" + (f"&port={port}" if port else "")
    return f"postgresql://{auth}{host or 'localhost'}{':' + port if port else ''}/{name}"


def wait_until_serving(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with code {process.returncode}")
        try:
            with urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"uvicorn did not serve {url} within {timeout:.0f} s")


@contextmanager
def serving_app(django_db_blocker: DjangoDbBlocker, **extra_env: str) -> Iterator[str]:
    """The real ASGI app (HTTP + the widget websocket) in a uvicorn subprocess on the test
    database; `extra_env` overrides its environment (a model for it, say; a PGAPPNAME of its own
    when another app of the module outlives it). It sees only committed rows: write them outside a
    test transaction (or with `committed`)."""
    from django.conf import settings
    from django.db import connection

    # pytest-django creates the test database only when a collected test is marked django_db;
    # without one, this would point the app (and the fixtures' writes) at the developer's own.
    assert connection.settings_dict["NAME"] == connection.settings_dict["TEST"]["NAME"], (
        "live_app needs the test database: mark the test module with pytest.mark.django_db"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "REDIS_URL": settings.REDIS_URL,
        "LLM_PROVIDER": "none",  # retrieval-only: the answer and its link come from the knowledge base
        "ANTHROPIC_API_KEY": "",
        # Every test browses from 127.0.0.1, a new visitor each: the per-address limits on messages and new
        # conversations would trip across tests (and modules: a worker's Redis keys are shared); tests/chat tests them.
        "CHAT_RATE_IP": "0",
        "CHAT_RATE_CONVERSATIONS_IP": "0",
        "DEBUG": "1",  # serve /static/ from the app, as `make run` does
        "PGAPPNAME": APP_DB_NAME,  # libpq tags the app's sessions: teardown waits for them to end
        "SPRAVKA_PUBLIC_URL": url,  # the widget snippet the app shows points at this very server
        **extra_env,
    }
    app = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        cwd=REPO, env=env,
    )
    try:
        wait_until_serving(f"{url}/static/assistant/widget.js", app)
        yield url
    finally:
        app.terminate()
        try:
            app.wait(timeout=15)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        with django_db_blocker.unblock():
            wait_for_app_sessions_to_end(env["PGAPPNAME"])


@pytest.fixture(scope="module")
def live_app(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """The real app under uvicorn, retrieval-only (no model)."""
    with serving_app(django_db_blocker) as url:
        yield url


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a test's screenshots go: docs/screenshots/ when SPRAVKA_SCREENSHOTS=1, else a temporary folder."""
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def committed(func: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run an ORM call on a connection of its own, committed at once (its on-commit hooks run), so
    the app process sees it: the test's own connection sits inside a transaction that is rolled back."""
    from django.db import connections

    def run() -> T:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result(timeout=30)


def wait_for_app_sessions_to_end(app_name: str = APP_DB_NAME, timeout: float = 10.0) -> None:
    """PostgreSQL notices a dead client's sessions a moment after the process exits; until then
    the test database cannot be dropped at the end of the run."""
    from django.db import connection, connections

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
                [app_name],
            )
            (left,) = cursor.fetchone() or (0,)
        if not left:
            break
        time.sleep(0.1)
    # While Playwright's loop runs, Django keeps this thread's connection in a context-local slot
    # that pytest-django does not close; close it, or the test database cannot be dropped.
    connections.close_all()
