"""Owner pages in a real browser (Chromium, the real app under uvicorn): the shared snippet copy
button (static/owner/snippet-copy.js) copies through the Clipboard API and, where the page may not
use it, selects the code instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import owner_page

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "e2e-layout-pass-1"


@pytest.fixture
def owned(live_app: str, django_user_model) -> tuple[str, str]:
    """A bot and its owner (committed: the app's process reads them); yields (slug, username).
    Every test's rows are flushed after it (transaction=True)."""
    from assistant.bots.models import Bot, Membership

    bot = Bot.objects.create(name="Магазин вёрстки", slug="e2e-layout", allowed_origins=[live_app])
    user = django_user_model.objects.create_user(username="layout@shop.example", password=PASSWORD)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    return bot.slug, user.username


def sign_in(page: Page, live_app: str, username: str, next_path: str) -> None:
    page.goto(f"{live_app}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{live_app}{next_path}")


@pytest.fixture
def owner_tab(browser: Browser, live_app: str) -> Iterator[Page]:
    with owner_page(browser, live_app) as tab:
        yield tab


def test_the_setup_snippet_is_copied_exactly(owner_tab: Page, live_app: str, owned: tuple[str, str]):
    slug, username = owned
    sign_in(owner_tab, live_app, username, f"/b/{slug}/setup/")
    owner_tab.locator("#copy-snippet").click()
    expect(owner_tab.locator("#copy-status")).to_have_text("Скопировано.")
    copied = owner_tab.evaluate("navigator.clipboard.readText()")
    assert copied == owner_tab.locator("#snippet-code").text_content()
    assert "/static/assistant/widget.js" in copied


def test_without_the_clipboard_api_the_snippet_is_selected(owner_tab: Page, live_app: str, owned: tuple[str, str]):
    slug, username = owned
    # As on a plain-http address: no navigator.clipboard before the page's scripts run.
    owner_tab.add_init_script("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    sign_in(owner_tab, live_app, username, f"/b/{slug}/setup/")
    owner_tab.locator("#copy-snippet").click()
    expect(owner_tab.locator("#copy-status")).to_have_text("Код выделен — нажмите Ctrl+C.")
    selected = owner_tab.evaluate("window.getSelection().toString()")
    assert selected == owner_tab.locator("#snippet-code").text_content()
