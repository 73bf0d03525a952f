"""An operator's day in two browsers and a visitor's third, on the real app (uvicorn, the test
database, the Redis channel layer): «/» and a few letters open the canned replies, the keyboard
picks one, it is edited and sent, and the visitor's widget gets it filled in; a note the other
operator sees never reaches the visitor's page or socket; the conversation is handed to the second
operator, who then holds it.

Refresh docs/screenshots/inbox-canned-replies.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_operator_day_live.py"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.e2e.conftest import DESKTOP, ShopFactory, committed, snippet
from tests.e2e.widget import Frames, Widget

pytestmark = pytest.mark.django_db

NOTE = "VIP-клиент: не звонить после 18:00"
FILLED = "Здравствуйте, Посетитель! Меня зовут Анна. Доставка по Москве — 1–2 дня."


def _operator(bot: Bot, email: str, name: str) -> tuple[object, str]:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username=email, email=email, password="e2e-op-12345", first_name=name)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
    client = Client()
    client.force_login(user)
    return user, client.cookies["sessionid"].value


@pytest.fixture(scope="module")
def desk(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """A bot on the demo shop, two operators (Анна, Борис) signed in, two canned replies on «дос»."""
    from inbox.canned import canned_reply_save
    from inbox.models import CannedReply

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-operator-day")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        anna, anna_session = _operator(bot, "anna@day.example", "Анна")
        boris, boris_session = _operator(bot, "boris@day.example", "Борис")
        for shortcut, title, text in (
            ("досвидания", "Прощание", "Спасибо, {посетитель}, хорошего дня!"),
            ("доставка", "Сроки доставки", "Здравствуйте, {посетитель}! Меня зовут {оператор}. "
                                           "Доставка по Москве — 1–2 дня."),
        ):
            canned_reply_save(canned_reply=CannedReply(bot=bot, shortcut=shortcut, title=title, text=text))
    yield {"bot": bot, "shop": origin, "app": live_app, "anna": anna_session, "boris": boris_session,
           "boris_id": boris.pk}  # type: ignore[attr-defined]
    with django_db_blocker.unblock():
        bot.delete()
        anna.delete()  # type: ignore[attr-defined]
        boris.delete()  # type: ignore[attr-defined]
        connections.close_all()


@pytest.fixture
def operator_tab(browser: Browser, desk: dict) -> Iterator[Callable[[str], Page]]:
    """An operator's own signed-in browser; no JavaScript error allowed in it."""
    contexts, errors = [], []

    def open_as(who: str) -> Page:
        context = browser.new_context(viewport=DESKTOP, locale="ru-RU")
        context.add_cookies([{"name": "sessionid", "value": desk[who], "url": desk["app"]}])
        contexts.append(context)
        tab = context.new_page()
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        return tab

    yield open_as
    for context in contexts:
        context.close()
    assert errors == [], f"JavaScript errors in the inbox: {errors}"


def _waiting_conversation(page: Page, desk: dict) -> tuple[Widget, int]:
    from chat.models import Conversation

    page.goto(f"{desk['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.", timeout=30000)
    found = committed(lambda: Conversation.objects.filter(bot=desk["bot"]).order_by("-pk").first())
    assert found is not None
    return widget, int(found.pk)


def _uses(bot: Bot) -> dict[str, int]:
    from inbox.models import CannedReply

    return dict(CannedReply.objects.filter(bot=bot).values_list("shortcut", "uses"))


def test_canned_reply_note_and_transfer(page: Page, frames: Frames, operator_tab, desk: dict, shots: Path):
    widget, conversation_id = _waiting_conversation(page, desk)
    anna = operator_tab("anna")
    anna.goto(f"{desk['app']}/inbox/c/{conversation_id}/")
    anna.get_by_role("button", name="Взять").click()
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Анна на связи.", timeout=10000)

    # «/дос»: both replies; the arrow moves to the second, Enter puts it in (it does not send).
    reply = anna.locator("#reply-text")
    reply.press_sequentially("/дос", delay=30)
    menu = anna.get_by_role("listbox", name="Шаблоны ответов")
    expect(menu.get_by_role("option")).to_have_count(2)
    expect(menu.get_by_role("option").first).to_have_attribute("aria-selected", "true")
    reply.press("ArrowDown")
    expect(menu.get_by_role("option", name="/доставка — Сроки доставки", exact=False)).to_have_attribute(
        "aria-selected", "true")
    anna.screenshot(path=str(shots / "inbox-canned-replies.png"))
    reply.press("Enter")
    expect(menu).to_be_hidden()
    expect(reply).to_have_value(FILLED)
    reply.press_sequentially(" Ваш заказ уже собран.", delay=5)  # edited before sending
    reply.press("Enter")
    expect(widget.last("operator").locator(".bubble")).to_have_text(f"{FILLED} Ваш заказ уже собран.",
                                                                     timeout=10000)
    assert committed(_uses, desk["bot"]) == {"доставка": 1, "досвидания": 0}

    # A note: Анна's transcript shows it as a note; the visitor's page and socket never get it.
    anna.locator("#note-text").fill(NOTE)
    anna.get_by_role("button", name="Добавить заметку").click()
    expect(anna.locator(".msg.note")).to_contain_text(NOTE)
    expect(anna.locator(".msg.note .msg-who")).to_contain_text("Заметка")
    expect(anna.locator("#note-text")).to_have_value("")
    anna.locator("#reply-text").fill("Уточню у склада.")
    anna.locator("#reply-text").press("Enter")
    expect(widget.last("operator").locator(".bubble")).to_have_text("Уточню у склада.", timeout=10000)
    assert NOTE not in widget.log.inner_text()
    assert not any(NOTE in str(f) for socket in frames.sockets for f in socket.received)
    page.reload()  # the widget restores its transcript from the server
    Widget(page).open()
    expect(Widget(page).last("operator").locator(".bubble")).to_have_text("Уточню у склада.", timeout=10000)
    assert NOTE not in Widget(page).log.inner_text()
    assert not any(NOTE in str(f) for socket in frames.sockets for f in socket.received)

    # Handed to Борис: the visitor is told, Борис's inbox lists it as his, with the note.
    boris = operator_tab("boris")
    boris.goto(f"{desk['app']}/inbox/")
    anna.locator("#transfer-to").select_option(label="Борис")
    anna.get_by_role("button", name="Передать", exact=True).click()
    expect(Widget(page).last("system").locator(".bubble")).to_have_text("Оператор Борис на связи.", timeout=10000)
    expect(boris.locator(f'#mine .conv[data-id="{conversation_id}"]')).to_be_visible(timeout=10000)
    expect(anna.locator("#chat-holder")).to_have_text("Ведёт: Борис")
    expect(anna.locator("#transfer")).to_be_hidden()
    boris.goto(f"{desk['app']}/inbox/c/{conversation_id}/")
    expect(boris.locator(".msg.note")).to_contain_text(NOTE)
    expect(boris.locator("#transfer")).to_be_visible()
