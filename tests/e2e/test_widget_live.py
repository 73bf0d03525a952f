"""A visitor on the demo shop, the real app behind the widget: uvicorn serving the ASGI app on the
test database, pages of the demo site in the knowledge base, no language model (retrieval only),
so every answer and its link come from the shop's own pages.

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_widget_live.py"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.request import urlopen

import pytest
from django.db import connections
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot
from tests.e2e.conftest import DESKTOP, PHONE, SCREENSHOTS, ShopFactory, snippet
from tests.e2e.widget import NO_ANSWER, Frames, Widget

# The tests themselves only drive the browser; the mark makes pytest-django create the test
# database the module fixture writes to and the app reads from.
pytestmark = pytest.mark.django_db

OFF_TOPIC = "Какая завтра погода в Антарктиде?"  # nothing on the shop's pages comes close (top score 0.06)
# ms: the first answer and the first «no exact answer» of a process load the embedding model and the
# speller's dictionary, slower still while the other test worker's app shares the cores
FIRST = 60000
XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss=1</script>"


# The pages a visitor's questions here touch, plus near neighbours the search must tell apart
# (returns of a defective item, delivery, payment, warranty). The whole site would take minutes
# to embed on a busy machine; these go through the crawler's own extraction and chunking.
PAGES = ["/returns/", "/returns/defective/", "/delivery/", "/payment/", "/warranty/", "/faq/"]


def learn_pages(bot: Bot, origin: str, pages: list[str] = PAGES) -> None:
    from knowledge.chunking import page_drafts
    from knowledge.extract import html_extract
    from knowledge.indexing import embed_pending
    from knowledge.services import entry_upsert, source_get_or_create

    source = source_get_or_create(bot=bot, kind="site", url=f"{origin}/", title="Демо-магазин")
    for path in pages:
        url = f"{origin}{path}"
        with urlopen(url, timeout=10) as response:
            page = html_extract(response.read(), url=url)
        for draft in page_drafts(url=url, title=page.title, blocks=page.blocks):
            entry_upsert(bot=bot, source=source, draft=draft)
    assert embed_pending(bot_id=bot.pk) > 0


@pytest.fixture(scope="module")
def shop(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """The demo shop with the widget of a bot that knows the shop's pages; yields the shop origin.

    Loaded once for the module and committed outside any test transaction, so the uvicorn
    process sees it (what `django_db(transaction=True)` gives, without re-embedding per test).
    Each test is a new browser profile, hence a new visitor and conversation."""
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-tehnodom")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        learn_pages(bot, origin)
    yield origin
    with django_db_blocker.unblock():
        bot.delete()
        connections.close_all()  # see wait_for_app_sessions_to_end in conftest.py


def returns_page(shop: str) -> re.Pattern[str]:
    """The returns page itself or one of its sections (/returns/#refund), not /returns/defective/."""
    return re.compile(re.escape(f"{shop}/returns/") + r"(#[\w-]+)?$")


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: docs/screenshots/ with SPRAVKA_SCREENSHOTS=1 (so an ordinary test
    run leaves the working tree clean), a temporary folder otherwise."""
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def shoot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / name))


def test_a_visitor_gets_a_sourced_answer_an_honest_no_and_their_history_back(
    page: Page, frames: Frames, shop: str, shots: Path
):
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()

    widget.ask("Можно ли вернуть товар?")
    answer = widget.last("bot")
    link = answer.locator(".src a")
    expect(link).to_have_attribute("href", returns_page(shop), timeout=FIRST)
    expect(link).to_have_attribute("target", "_blank")  # the source opens in a new tab
    expect(link).to_have_attribute("rel", "noopener")
    expect(answer.locator(".src")).to_contain_text("Источник: ")
    expect(answer.locator(".bubble")).to_contain_text("14 дней")
    shoot(page, shots, "widget-answer.png")

    widget.ask(OFF_TOPIC)
    refusal = widget.messages("bot").nth(1)
    expect(refusal.locator(".bubble")).to_contain_text(NO_ANSWER, timeout=FIRST)
    expect(refusal.get_by_role("button", name="Позвать оператора")).to_be_visible()
    expect(refusal.locator(".src")).to_have_count(0)
    shoot(page, shots, "widget-no-answer.png")

    for payload in (XSS_IMG, XSS_SCRIPT):
        widget.ask(payload)
        expect(widget.last("visitor").locator(".bubble")).to_have_text(payload)
        expect(widget.last("visitor")).not_to_have_class("msg visitor pending")
    expect(widget.messages("bot")).to_have_count(4, timeout=30000)
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("spravka-widget img, spravka-widget script").count() == 0

    page.reload()
    widget.open()
    expect(widget.messages("visitor")).to_have_count(4)
    expect(widget.messages("visitor").first.locator(".bubble")).to_have_text("Можно ли вернуть товар?")
    expect(widget.messages("bot").first.locator(".src a")).to_have_attribute("href", returns_page(shop))
    assert page.evaluate("() => window.__xss") is None
    # The same visitor, asking for the whole history: a fresh page has seen nothing yet.
    first, again = frames.sent("hello")
    assert again == {"type": "hello", "visitor_id": first["visitor_id"], "last_seen_id": None, "page_url": f"{shop}/"}


@pytest.fixture
def english_tab(browser: Browser) -> Iterator[Page]:
    """A visitor whose browser asks for English, on a Russian shop."""
    ctx = browser.new_context(viewport=DESKTOP, locale="en-US", extra_http_headers={"Accept-Language": "en-US,en"})
    tab = ctx.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    ctx.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def test_an_english_visitor_reads_english_labels_and_the_russian_page_under_an_english_line(
    english_tab: Page, shop: str, shots: Path
):
    page = english_tab
    page.goto(f"{shop}/")
    widget = Widget(page)
    expect(widget.launcher).to_have_attribute("aria-label", "Open chat")
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    expect(page.locator("spravka-widget .compose .send")).to_have_attribute("aria-label", "Send")
    expect(widget.launcher).to_have_attribute("aria-label", "Close chat")

    widget.ask("How can I return an item?")
    answer = widget.last("bot")
    expect(answer.locator(".src a")).to_have_attribute("href", returns_page(shop), timeout=30000)
    expect(answer.locator(".src")).to_contain_text("Source: ")
    expect(answer.locator(".bubble")).to_contain_text("Here is what our site says (in Russian):")
    expect(answer.get_by_role("button", name="Helpful", exact=True)).to_be_visible()
    shoot(page, shots, "widget-english.png")

    widget.ask("Who wrote War and Peace?")
    refusal = widget.messages("bot").nth(1)
    expect(refusal.locator(".bubble")).to_contain_text("Sorry, I do not have an exact answer to that.", timeout=30000)
    expect(refusal.get_by_role("button", name="Call an operator")).to_be_visible()


def test_the_widget_turns_to_the_language_the_visitor_writes_in(page: Page, shop: str):
    """A Russian browser, an English question: the labels turn English (earlier messages' too), stay
    so on the next page, and turn back when the visitor writes Russian."""
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Напишите вопрос…")

    widget.ask("How can I return an item?")
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    expect(widget.last("visitor").locator(".sr")).to_have_text("You:")
    expect(widget.last("bot").locator(".src")).to_contain_text("Source: ", timeout=30000)

    page.reload()
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    expect(widget.messages("bot").first.get_by_role("button", name="Not helpful", exact=True)).to_be_visible()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.input).to_have_attribute("placeholder", "Напишите вопрос…")
    expect(widget.messages("bot").first.get_by_role("button", name="Ответ не помог", exact=True)).to_be_visible()


def test_an_answer_made_of_list_items_shows_as_a_list_without_a_model(page: Page, shop: str, shots: Path):
    """Retrieval only: the excerpt is whole list items of the returns page, one per line, and the
    widget shows them as a list (text nodes in <li>, never HTML from the server)."""
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()

    widget.ask("Какие условия возврата товара?")
    answer = widget.last("bot")
    expect(answer.locator(".src a")).to_have_attribute("href", returns_page(shop), timeout=30000)
    items = answer.locator(".bubble li")
    expect(items.first).to_be_visible()
    assert items.count() >= 2
    assert all(not text.startswith("•") for text in items.all_inner_texts())
    shoot(page, shots, "widget-list.png")


def test_a_product_the_shop_does_not_sell_gets_an_honest_no(page: Page, shop: str):
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Продаёте ли вы автомобили?")
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_contain_text(NO_ANSWER, timeout=30000)
    expect(answer.get_by_role("button", name="Позвать оператора")).to_be_visible()


def test_the_operator_button_hands_the_conversation_over(page: Page, frames: Frames, shop: str):
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()
    widget.ask(OFF_TOPIC)
    button = widget.last("bot").get_by_role("button", name="Позвать оператора")
    button.click()
    # Nobody has the inbox open: the visitor hears so at once (chat/presence.py); the wait goes on.
    expect(widget.last("system")).to_contain_text("Сейчас никого из операторов нет на месте", timeout=30000)
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.")
    expect(button).to_be_disabled()
    assert frames.sent("button") == [{"type": "button", "id": "operator"}]


def test_keyboard_only(page: Page, shop: str):
    page.goto(f"{shop}/")
    widget = Widget(page)
    for _ in range(80):  # the launcher comes last in the tab order, after the shop's own links
        page.keyboard.press("Tab")
        if widget.focused() == "launcher":
            break
    assert widget.focused() == "launcher"
    page.keyboard.press("Enter")
    expect(widget.panel).to_be_visible()
    expect(widget.input).to_be_focused()
    page.keyboard.type("Можно ли вернуть товар?")
    page.keyboard.press("Enter")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=30000)
    page.keyboard.press("Escape")
    expect(widget.panel).to_be_hidden()
    assert widget.focused() == "launcher"


def test_on_a_phone(page: Page, shop: str, shots: Path):
    page.set_viewport_size(PHONE)
    page.goto(f"{shop}/delivery/")
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=30000)
    assert widget.panel.bounding_box() == {"x": 0, "y": 0, "width": PHONE["width"], "height": PHONE["height"]}
    assert widget.input.evaluate("el => getComputedStyle(el).fontSize") == "16px"
    shoot(page, shots, "widget-mobile.png")
    expect(widget.launcher).to_be_hidden()  # covered by the panel: closing is the header's button
    page.get_by_role("button", name="Закрыть чат").last.click()
    expect(widget.panel).to_be_hidden()
    expect(widget.launcher).to_be_focused()


@pytest.fixture(scope="module")
def owner_login(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[tuple[str, str, str]]:
    """A bot whose owner may try its widget on the app's own page; yields (slug, user, password)."""
    from django.contrib.auth import get_user_model

    from bots.models import Membership

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="Проверочный бот", slug="e2e-try", allowed_origins=[live_app])
        user = get_user_model().objects.create_user(username="e2e-owner", password="e2e-pass-1", is_staff=True)
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    yield bot.slug, "e2e-owner", "e2e-pass-1"
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


def test_an_owner_tries_the_widget_on_the_setup_page(page: Page, live_app: str, owner_login):
    """The old try page's address still works: after sign-in it leads to the setup page."""
    slug, username, password = owner_login
    page.goto(f"{live_app}/bots/{slug}/try/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{live_app}/b/{slug}/setup/")
    expect(page.locator("#snippet-code")).to_contain_text('data-bot="')
    expect(page.locator(".check-error")).to_have_count(0)  # the app's own origin is allowed here
    widget = Widget(page)
    widget.open()
    expect(page.locator("spravka-widget h2")).to_have_text("Проверочный бот")
    widget.ask(OFF_TOPIC)
    expect(widget.last("bot").locator(".bubble")).to_contain_text(NO_ANSWER, timeout=30000)
