"""A conversation's rating in real Chromium, on the real app (uvicorn on the test database, Redis
channel layer): the operator closes the conversation in the inbox, the visitor rates it 4 stars
with a comment using the keyboard only, and the owner's overview shows it for that operator.

Refresh docs/screenshots/widget-csat.png and dashboard-operators.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_csat_live.py"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.e2e.conftest import DESKTOP, ShopFactory, committed, snippet
from tests.e2e.widget import Widget, wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def helpdesk(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """The demo shop's bot, its operator «Анна» and its owner, both signed in."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-csat")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        anna = users.create_user(username="anna@csat.example", email="anna@csat.example", password="e2e-anna-1",
                                 first_name="Анна")
        owner = users.create_user(username="owner@csat.example", email="owner@csat.example", password="e2e-own-1",
                                  is_staff=True)
        Membership.objects.create(bot=bot, user=anna, role=Membership.Role.OPERATOR)
        Membership.objects.create(bot=bot, user=owner, role=Membership.Role.OWNER)
        sessions = {}
        for name, user in (("operator", anna), ("owner", owner)):
            client = Client()
            client.force_login(user)
            sessions[name] = client.cookies["sessionid"].value
    yield {"bot": bot, "shop": origin, "sessions": sessions, "app": live_app, "anna": anna}
    with django_db_blocker.unblock():
        bot.delete()
        anna.delete()
        owner.delete()
        connections.close_all()


def _signed_in(browser: Browser, app: str, session: str) -> Page:
    context = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    context.add_cookies([{"name": "sessionid", "value": session, "url": app}])
    tab = context.new_page()
    tab.on("pageerror", lambda exc: pytest.fail(f"JavaScript error: {exc}"))
    return tab


def test_the_visitor_rates_the_operator_with_the_keyboard_and_the_owner_sees_it(
    page: Page, browser: Browser, helpdesk: dict, shots: Path
):
    from chat.models import ConversationRating

    app, shop, bot = helpdesk["app"], helpdesk["shop"], helpdesk["bot"]
    page.goto(f"{shop}/delivery/")
    widget = Widget(page)
    widget.open()
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.", timeout=30000)

    inbox = _signed_in(browser, app, helpdesk["sessions"]["operator"])
    inbox.goto(f"{app}/inbox/")
    inbox.locator("#waiting .conv").first.click()
    inbox.get_by_role("button", name="Взять").click()
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Анна на связи.", timeout=10000)
    inbox.locator("#reply-text").fill("Здравствуйте! Заказ передан в доставку, курьер приедет завтра.")
    inbox.locator("#reply-text").press("Enter")
    expect(widget.last("operator").locator(".bubble")).to_contain_text("курьер приедет завтра", timeout=10000)
    inbox.get_by_role("button", name="Завершить").click()

    # The widget asks for stars: a radio group a keyboard reaches and moves through with the arrows.
    form = page.locator("spravka-widget form.csat")
    expect(form).to_be_visible(timeout=10000)
    page.reload()  # the ask survives a reload: the welcome brings it back
    widget = Widget(page)
    widget.open()
    expect(form).to_be_visible(timeout=10000)
    expect(form.locator("legend")).to_have_text("Оцените, пожалуйста, разговор")
    expect(form.get_by_role("radiogroup")).to_be_visible()
    stars = form.get_by_role("radio")
    expect(stars).to_have_count(5)
    expect(stars.nth(3)).to_have_attribute("aria-label", "4 из 5")
    widget.input.focus()
    page.keyboard.press("Shift+Tab")  # back from the message box: the rating's send button
    page.keyboard.press("Shift+Tab")  # the comment
    page.keyboard.press("Shift+Tab")  # the stars: entered from below, a browser focuses the last one
    focused_star = page.evaluate(
        "() => document.querySelector('spravka-widget').shadowRoot.activeElement.getAttribute('aria-label')")
    assert focused_star == "5 из 5"
    page.keyboard.press("ArrowLeft")  # moves to 4 and chooses it, as in any radio group
    expect(stars.nth(3)).to_be_checked()
    expect(form.locator(".stars label.on")).to_have_count(4)
    page.keyboard.press("Tab")
    page.keyboard.type("Быстро и по делу, спасибо Анне")
    page.screenshot(path=str(shots / "widget-csat.png"))
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(form.locator(".csat-thanks")).to_have_text("Спасибо за оценку!", timeout=10000)

    wait_for(lambda: committed(ConversationRating.objects.filter(bot=bot).exists))
    rating = committed(lambda: ConversationRating.objects.get(bot=bot))
    assert (rating.stars, rating.comment, rating.operator_id) == (4, "Быстро и по делу, спасибо Анне",
                                                                  helpdesk["anna"].pk)

    dashboard = _signed_in(browser, app, helpdesk["sessions"]["owner"])
    dashboard.goto(f"{app}/b/{bot.slug}/")
    row = dashboard.locator('#operators tr[data-operator="Анна"]')
    expect(row.locator('[data-csat="average"]')).to_have_text("4,0")
    expect(row.locator('[data-csat="count"]')).to_have_text("1 оценка")
    expect(row).to_contain_text("1 разговор завершён")
    expect(dashboard.locator("#chart-csat")).to_be_visible()
    dashboard.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 1")
    dashboard.locator("#operators").screenshot(path=str(shots / "dashboard-operators.png"))
    inbox.context.close()
    dashboard.context.close()
