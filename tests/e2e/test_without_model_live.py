"""The demo shop as every owner meets it first: no language model, the real app behind the widget
(uvicorn on the test database), the shop's pages and its feed in the bot's knowledge. One visitor,
one conversation: the Moscow price, a misspelt payment question read back («Вы имели в виду»),
Bosch kettles as cards, a charity question refused with the operator button, bad input answered,
and an English question answered with the page's Russian words under an English line, the
widget's labels turned English.

Refresh docs/screenshots/without-model-*.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_without_model_live.py"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import Locator, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot
from tests.e2e.conftest import ShopFactory, snippet
from tests.e2e.test_widget_live import learn_pages
from tests.e2e.widget import NO_ANSWER, Widget

pytestmark = pytest.mark.django_db

PAGES = ["/delivery/", "/delivery/moscow/", "/payment/", "/returns/", "/faq/", "/catalog/kitchen/"]
SLOW = 60000  # ms: the first search and the first spelling pass in a process load the model and the dictionary,
# slower still while other test workers share the cores


def learn(bot: Bot, origin: str) -> None:
    """The pages through the crawler's own extraction and chunking, and the feed through its import."""
    from knowledge.catalog import catalog
    from knowledge.catalog.embedding import offers_embed_pending

    learn_pages(bot, origin, PAGES)
    run = catalog.catalog_import_url(bot=bot, url=f"{origin}/market.xml").run
    assert run.status == "done", run.message
    offers_embed_pending(bot_id=bot.pk)


@pytest.fixture(scope="module")
def shop(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-without-model")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        learn(bot, origin)
    yield origin
    with django_db_blocker.unblock():
        bot.delete()
        connections.close_all()


def reply_to(widget: Widget, question: str, count: int) -> Locator:
    """Ask and wait for the bot's `count`-th reply of the conversation (1-based)."""
    widget.ask(question)
    expect(widget.messages("bot")).to_have_count(count, timeout=SLOW)
    return widget.messages("bot").nth(count - 1)


def page_of(shop: str, path: str) -> re.Pattern[str]:
    return re.compile(re.escape(f"{shop}{path}") + r"(#[\w-]+)?$")


def test_a_visitor_of_a_shop_without_a_model(page: Page, shop: str, shots: Path):
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()

    moscow = reply_to(widget, "Сколько стоит доставка по Москве?", 1)
    expect(moscow.locator(".src a")).to_have_attribute("href", page_of(shop, "/delivery/moscow/"))
    expect(moscow.locator(".bubble")).to_contain_text("350 ₽")

    # (the issue's «как поткючить оплату» is answered on the whole demo site, bench/misspellings.py; on
    # these six pages even «как подключить оплату» scores under the match threshold)
    typo = reply_to(widget, "какие спасобы аплаты", 2)
    expect(typo.locator(".bubble")).to_contain_text("Вы имели в виду: какие способы оплаты")
    expect(typo.locator(".src a")).to_have_attribute("href", page_of(shop, "/payment/"))
    page.screenshot(path=str(shots / "without-model-typo.png"))

    kettles = reply_to(widget, "покажите чайники Bosch", 3)
    cards = kettles.locator(".cards a.card")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text("Bosch")
    expect(cards.nth(1)).to_contain_text("Bosch")

    charity = reply_to(widget, "Вы принимаете пожертвования на благотворительность?", 4)
    expect(charity.locator(".bubble")).to_contain_text(NO_ANSWER)
    expect(charity.get_by_role("button", name="Позвать оператора")).to_be_visible()
    expect(charity.locator(".src")).to_have_count(0)
    page.screenshot(path=str(shots / "without-model-refusal.png"))

    # Bad input: each gets a reply a person understands, and the conversation goes on. A 5,000-
    # character question is held to the widget's limit as it is typed, and answered.
    for count, text in enumerate(["😀🎉🙈", "Skolько стоит dostavka по Moskve?"], start=5):
        expect(reply_to(widget, text, count).locator(".bubble")).not_to_be_empty()
    widget.input.fill("доставка " * 556)
    assert 0 < widget.input.evaluate("el => el.value.length") <= 2000
    widget.input.press("Enter")
    expect(widget.messages("bot")).to_have_count(7, timeout=SLOW)
    expect(widget.messages("bot").nth(6).locator(".bubble")).not_to_be_empty()

    english = reply_to(widget, "How much does delivery in Moscow cost?", 8)
    expect(english.locator(".bubble")).to_contain_text("Here is what our site says (in Russian):")
    expect(english.locator(".bubble")).to_contain_text("350 ₽")
    expect(english.locator(".src a")).to_have_attribute("href", page_of(shop, "/delivery/moscow/"))
    expect(english.locator(".src")).to_contain_text("Source: ")
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    page.screenshot(path=str(shots / "without-model-english.png"))
