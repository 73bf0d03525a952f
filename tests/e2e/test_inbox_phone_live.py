"""The operators' inbox on a phone (390×844), on the real app (uvicorn, the test database, the Redis
channel layer) with a visitor in the widget: one pane at a time. The list fills the screen; a
conversation opens at its own address full-width with «← Назад к списку» back to the list; the
header (tabs, language, the owner's links, «Выйти») wraps instead of scrolling sideways. Nothing
overflows, measured in the page.

Refresh docs/screenshots/inbox-phone-*.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_inbox_phone_live.py"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, ViewportSize, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from bots.services import user_staff_sync
from tests.e2e import pagecheck
from tests.e2e.conftest import ShopFactory, committed, snippet
from tests.e2e.widget import Widget

pytestmark = pytest.mark.django_db

PHONE: ViewportSize = {"width": 390, "height": 844}
REPLY = "Здравствуйте! Посмотрю ваш заказ и отвечу здесь же."


@pytest.fixture(scope="module")
def desk(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """A bot on the demo shop; its owner answers visitors too, so the header carries every link it has."""
    from django.contrib.auth import get_user_model

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-inbox-phone")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        user = get_user_model().objects.create_user(
            username="olga@phone.example", email="olga@phone.example", password="e2e-olga-12345",
            first_name="Ольга")
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        assert user_staff_sync(user=user)
        client = Client()
        client.force_login(user)
        session = client.cookies["sessionid"].value
    yield {"bot": bot, "shop": origin, "app": live_app, "session": session}
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


@pytest.fixture
def phone(browser: Browser, desk: dict) -> Iterator[Page]:
    """The operator's phone: signed in, 390×844, touch; no JavaScript error allowed."""
    context = browser.new_context(viewport=PHONE, locale="ru-RU", is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    context.add_cookies([{"name": "sessionid", "value": desk["session"], "url": desk["app"]}])
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert errors == [], f"JavaScript errors in the inbox: {errors}"


def test_a_phone_shows_the_list_then_the_conversation_and_back(page: Page, phone: Page, desk: dict, shots: Path):
    from chat.models import Conversation

    page.goto(f"{desk['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.", timeout=30000)
    found = committed(lambda: Conversation.objects.filter(bot=desk["bot"]).order_by("-pk").first())
    assert found is not None
    conversation_id = int(found.pk)

    # The list alone, full width; the header wraps with all of its links on screen.
    phone.goto(f"{desk['app']}/inbox/")
    row = phone.locator(f'#waiting .conv[data-id="{conversation_id}"]')
    expect(row).to_be_visible()
    expect(phone.locator(".chat")).to_be_hidden()
    queue = phone.locator(".queue").bounding_box()
    assert queue is not None and queue["x"] == 0 and queue["width"] == PHONE["width"]
    for name in ("Входящие", "Контакты", "Telegram", "Кабинет владельца", "Администрирование", "Выйти"):
        control = phone.locator(".top").get_by_role("button", name=name).or_(
            phone.locator(".top").get_by_role("link", name=name))
        box = control.first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], name
    expect(phone.locator(".top .lang-switch select")).to_be_visible()
    assert pagecheck.overflow(phone) == []
    phone.screenshot(path=str(shots / "inbox-phone-queue.png"))

    # The conversation at its own address, alone on the screen; the reply reaches the visitor.
    row.click()
    expect(phone).to_have_url(f"{desk['app']}/inbox/c/{conversation_id}/")
    expect(phone.locator(".queue")).to_be_hidden()
    expect(phone.locator(".msg.visitor").first).to_contain_text("Позовите оператора")
    back = phone.get_by_role("link", name="← Назад к списку")
    expect(back).to_be_visible()
    chat = phone.locator(".chat").bounding_box()
    assert chat is not None and chat["x"] == 0 and chat["width"] == PHONE["width"]
    reply = phone.locator("#reply-text")
    expect(reply).to_be_visible()
    reply.fill(REPLY)
    phone.get_by_role("button", name="Отправить").click()
    expect(widget.last("operator").locator(".bubble")).to_have_text(REPLY, timeout=10000)
    expect(phone.locator(".msg.operator").last).to_contain_text(REPLY)
    expect(phone.locator("#chat-state")).to_have_text("у оператора")  # the reply took it on her
    assert pagecheck.overflow(phone) == []
    phone.screenshot(path=str(shots / "inbox-phone-conversation.png"))

    # Back by keyboard: the link is in the tab order before the conversation's own controls.
    back.focus()
    expect(back).to_be_focused()
    phone.keyboard.press("Enter")
    expect(phone).to_have_url(f"{desk['app']}/inbox/")
    mine = phone.locator(f'#mine .conv[data-id="{conversation_id}"]')
    expect(mine).to_be_visible()
    expect(phone.locator(".chat")).to_be_hidden()
    assert pagecheck.overflow(phone) == []
