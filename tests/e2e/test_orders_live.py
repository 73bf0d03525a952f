"""Order status in a real browser against the real app (uvicorn) and a real local order system: a
visitor asks with the number and without it; the owner checks the endpoint with «Проверить».

Refresh docs/screenshots/widget-order-*.png and admin-order-check.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_orders_live.py"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import SCREENSHOTS, ShopFactory, snippet
from tests.e2e.widget import Widget
from tests.knowledge.catalog.shop_api import ShopAPI

pytestmark = pytest.mark.django_db

STATUS = "Заказ 48213: Передан в службу доставки."
DATE = "Ожидаемая дата доставки: 5 декабря 2026."


@pytest.fixture(scope="module")
def orders(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """A shop bot with an order endpoint on a local order system, and its owner; committed for the app."""
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from knowledge.catalog.services import order_endpoint_configure

    api = ShopAPI().start()
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-orders")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        user = get_user_model().objects.create_user(username="e2e-orders-owner", password="e2e-pass-3", is_staff=True)
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        endpoint = order_endpoint_configure(
            bot=bot, url_template=api.template, headers={"Authorization": "Bearer e2e-secret-token"},
            status_pointer="/status", date_pointer="/delivery/date", tracking_pointer="/tracking_url",
            sample_number="48213",
        )
    yield {"shop": origin, "api": api, "endpoint": endpoint, "user": "e2e-orders-owner", "password": "e2e-pass-3"}
    api.stop()
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def test_a_visitor_asks_with_the_number_and_gets_the_status_from_the_shop(page: Page, orders, shots: Path):
    page.goto(f"{orders['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("где мой заказ 48213?")
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_contain_text(STATUS, timeout=30000)
    expect(answer.locator(".bubble")).to_contain_text(DATE)
    link = answer.locator(".src a")
    expect(link).to_have_attribute("href", "https://track.example/RU48213")
    expect(link).to_have_text("Отследить посылку")
    page.screenshot(path=str(shots / "widget-order-status.png"))
    assert orders["api"].hits[-1][1]["authorization"] == "Bearer e2e-secret-token"


def test_a_visitor_without_the_number_is_asked_once_and_then_gets_the_status(page: Page, orders, shots: Path):
    page.goto(f"{orders['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Где мой заказ?")
    expect(widget.last("bot").locator(".bubble")).to_contain_text("номер заказа", timeout=30000)
    widget.ask("48213")
    expect(widget.messages("bot")).to_have_count(2, timeout=30000)
    expect(widget.last("bot").locator(".bubble")).to_contain_text(STATUS)
    page.screenshot(path=str(shots / "widget-order-asked.png"))
    widget.ask("99999")  # the bot asked once: a bare number now is an ordinary question
    expect(widget.messages("bot")).to_have_count(3, timeout=30000)
    expect(widget.last("bot").locator(".bubble")).not_to_contain_text("не нашёл заказ")


def test_an_unknown_number_gets_an_honest_answer_and_the_operator_button(page: Page, orders):
    page.goto(f"{orders['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("статус заказа 77777")
    answer = widget.last("bot")
    expect(answer.locator(".bubble")).to_contain_text("Я не нашёл заказ с таким номером (77777)", timeout=30000)
    expect(answer.get_by_role("button", name="Позвать оператора")).to_be_visible()


def test_the_owner_checks_the_endpoint_with_the_button(page: Page, live_app: str, orders, shots: Path):
    page.set_viewport_size({"width": 1280, "height": 1100})
    page.goto(f"{live_app}/admin/commerce/orderendpoint/{orders['endpoint'].pk}/change/")
    page.fill("#id_username", orders["user"])
    page.fill("#id_password", orders["password"])
    page.press("#id_password", "Enter")
    expect(page.get_by_text("Сохранены: Authorization (значения скрыты)")).to_be_visible()
    assert "e2e-secret-token" not in page.content()
    page.get_by_role("button", name="Проверить").click()
    result = page.locator(".spravka-order-check-result")
    expect(result).to_have_attribute("data-outcome", "found")
    expect(result).to_contain_text("Передан в службу доставки")
    expect(result).to_contain_text("https://track.example/RU48213")
    result.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "admin-order-check.png"), full_page=True)
