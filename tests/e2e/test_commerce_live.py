"""Issue 13's "Done when" in a real browser against the real app (uvicorn), the demo shop and a real
local order system: a visitor on a catalog page sees the owner's invitation, opens the chat from
it, asks for their order with the number and without it, asks for a product under a price and
gets cards copied from the shop's feed; the invitation's conversion is counted.

Refresh docs/screenshots/invitation.png and chat-product-cards.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_commerce_live.py"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import PHONE, SCREENSHOTS, ShopFactory, snippet
from tests.e2e.widget import Widget
from tests.knowledge.catalog.shop_api import ShopAPI

pytestmark = pytest.mark.django_db

INVITATION = "Подобрать пылесос? Спросите здесь — отвечу по каталогу магазина."
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"


@pytest.fixture(scope="module")
def shop(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """The demo shop's bot with its feed imported from the shop itself (market.xml), an order
    endpoint on a local order system and one invitation rule for the catalog pages; committed."""
    from behavior.models import InvitationRule
    from bots.models import Bot
    from knowledge.catalog import catalog
    from knowledge.catalog.services import order_endpoint_configure

    api = ShopAPI().start()
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-commerce")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        run = catalog.catalog_import_url(bot=bot, url=f"{origin}/market.xml").run
        assert (run.status, run.added) == ("done", 10), run.message
        order_endpoint_configure(bot=bot, url_template=api.template, status_pointer="/status",
                                 date_pointer="/delivery/date", tracking_pointer="/tracking_url")
        rule = InvitationRule.objects.create(bot=bot, name="Пылесосы", text=INVITATION, url_pattern="/catalog/*",
                                             seconds_on_page=1, show_on_mobile=False)
    yield {"shop": origin, "bot": bot, "rule": rule}
    api.stop()
    with django_db_blocker.unblock():
        bot.delete()
        connections.close_all()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def test_a_visitor_is_invited_asks_for_orders_and_gets_product_cards(
    page: Page, shop, shots: Path, django_db_blocker: DjangoDbBlocker
):
    from behavior.models import InvitationShow

    page.goto(f"{shop['shop']}/catalog/home/")
    widget = Widget(page)
    invite = page.locator("spravka-widget .invite")
    expect(invite).to_be_visible(timeout=15000)
    expect(invite.locator(".invite-text")).to_have_text(INVITATION)
    expect(widget.panel).to_be_hidden()
    page.screenshot(path=str(shots / "invitation.png"))

    invite.locator(".invite-text").focus()  # keyboard: the invitation is a button
    page.keyboard.press("Enter")
    expect(widget.panel).to_be_visible()
    expect(invite).to_have_count(0)
    expect(page.locator("spravka-widget .empty")).to_have_text(INVITATION)

    widget.ask("где мой заказ 48213?")
    expect(widget.last("bot").locator(".bubble")).to_contain_text("Заказ 48213: Передан в службу доставки.",
                                                                  timeout=30000)
    widget.ask("Где мой заказ?")
    expect(widget.messages("bot")).to_have_count(2, timeout=30000)
    expect(widget.last("bot").locator(".bubble")).to_contain_text("номер заказа")
    widget.ask("48213")
    expect(widget.messages("bot")).to_have_count(3, timeout=30000)
    expect(widget.last("bot").locator(".bubble")).to_contain_text("Заказ 48213: Передан в службу доставки.")

    widget.ask("Есть пылесос до 10 000?")
    expect(widget.messages("bot")).to_have_count(4, timeout=30000)
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_have_text("Вот что нашлось в каталоге (до 10\u00a0000\u00a0₽):")
    cards = answer.locator(".cards a.card")
    expect(cards).to_have_count(2)
    first, second = cards.nth(0), cards.nth(1)
    expect(first.locator(".name")).to_have_text("Пылесос «Вихрь Циклон»")
    expect(first.locator(".prices")).to_contain_text("8\u00a0490\u00a0₽")
    expect(first.locator(".old")).to_contain_text("9\u00a0990\u00a0₽")
    expect(first.locator(".stock")).to_have_text("В наличии")
    expect(second.locator(".name")).to_have_text("Пылесос «Вихрь Классик»")
    expect(second.locator(".stock")).to_have_text("Нет в наличии")
    expect(first).to_have_attribute("href", f"{shop['shop']}/catalog/home/#vacuums")
    picture = first.locator("img")
    expect(picture).to_have_attribute("alt", "Пылесос «Вихрь Циклон»")
    expect(picture).to_have_attribute("loading", "lazy")
    page.wait_for_function(
        "() => [...document.querySelector('spravka-widget').shadowRoot.querySelectorAll('.card img')]"
        ".every((img) => img.complete && img.naturalWidth > 0)"
    )
    widget.input.focus()
    page.keyboard.press("Shift+Tab")  # the rating of the last answer, then its cards, by keyboard
    for _ in range(4):
        if "card" in widget.focused():
            break
        page.keyboard.press("Shift+Tab")
    assert "card" in widget.focused()
    page.screenshot(path=str(shots / "chat-product-cards.png"))

    with django_db_blocker.unblock():
        deadline = time.monotonic() + 10
        while not InvitationShow.objects.filter(rule=shop["rule"], converted_at__isnull=False).exists():
            assert time.monotonic() < deadline, "the invitation's show was not counted as a conversion"
            time.sleep(0.1)
        show = InvitationShow.objects.get(rule=shop["rule"])
        assert show.page_url == f"{shop['shop']}/catalog/home/"


def test_no_invitation_off_the_pattern_nor_on_a_phone_when_switched_off(page: Page, browser, shop):
    page.goto(f"{shop['shop']}/delivery/")
    time.sleep(2.5)  # the rule waits 1 s on a matching page
    expect(page.locator("spravka-widget .invite")).to_have_count(0)

    phone = browser.new_context(viewport=PHONE, user_agent=IPHONE, locale="ru-RU")
    try:
        tab = phone.new_page()
        tab.goto(f"{shop['shop']}/catalog/home/")
        expect(tab.locator("spravka-widget .launcher")).to_be_visible()
        time.sleep(2.5)
        expect(tab.locator("spravka-widget .invite")).to_have_count(0)
    finally:
        phone.close()


def test_a_product_nobody_sells_gets_an_honest_answer_with_the_category_link(page: Page, shop):
    page.goto(f"{shop['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("пылесос до 3000")
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_contain_text("В каталоге не нашлось подходящего товара (до 3\u00a0000\u00a0₽)",
                                                      timeout=30000)
    expect(answer.locator(".cards")).to_have_count(0)
    expect(answer.locator(".src a")).to_have_attribute("href", f"{shop['shop']}/catalog/home/")
    expect(answer.get_by_role("button", name="Позвать оператора")).to_be_visible()


def test_show_me_bosch_kettles_without_a_model_gives_the_bosch_cards(page: Page, shop, shots: Path):
    page.goto(f"{shop['shop']}/catalog/kitchen/")
    widget = Widget(page)
    widget.open()
    widget.ask("покажите чайники Bosch")
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_have_text("Вот что нашлось в каталоге:", timeout=30000)
    cards = answer.locator(".cards a.card")
    expect(cards).to_have_count(2)
    expect(cards.nth(0).locator(".name")).to_have_text("Чайник Bosch TWK3A011, 1,7 л")
    expect(cards.nth(0).locator(".prices")).to_contain_text("2\u00a0990\u00a0₽")
    expect(cards.nth(0).locator(".stock")).to_have_text("В наличии")
    expect(cards.nth(1).locator(".name")).to_have_text("Чайник Bosch TWK7203 с выбором температуры")
    expect(cards.nth(1).locator(".stock")).to_have_text("Нет в наличии")
    page.screenshot(path=str(shots / "chat-products-without-model.png"))
