"""An operator's day in two browsers and a visitor's third, on the real app (uvicorn, the test
database, the Redis channel layer), the bot giving conversations out in turn: both operators have
the inbox open, so the visitor who asks for a person is given to Анна at once; she inserts a
passage the copilot found for the visitor's question, with its link; «/» and a few letters open the
canned replies, the keyboard picks one, it is edited and sent, and the visitor's widget gets it
filled in; a note the other operator sees never reaches the visitor's page or socket; the
conversation is handed to Борис, who closes it; the visitor rates it, and the owner's overview
shows the rating for Борис.

Refresh docs/screenshots/inbox-canned-replies.png and inbox-assigned.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_operator_day_live.py"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.e2e.conftest import DESKTOP, ShopFactory, committed, snippet
from tests.e2e.test_widget_live import learn_pages
from tests.e2e.widget import Frames, Widget, wait_for

pytestmark = pytest.mark.django_db

NOTE = "VIP-клиент: не звонить после 18:00"
FILLED = "Здравствуйте, Посетитель! Меня зовут Анна. Доставка по Москве — 1–2 дня."


def _operator(bot: Bot, email: str, name: str, role: str = Membership.Role.OPERATOR) -> tuple[object, str]:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username=email, email=email, password="e2e-op-12345", first_name=name,
                                                is_staff=role == Membership.Role.OWNER)
    Membership.objects.create(bot=bot, user=user, role=role)
    client = Client()
    client.force_login(user)
    return user, client.cookies["sessionid"].value


@pytest.fixture(scope="module")
def desk(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """A bot on the demo shop that knows its pages and gives conversations out in turn; two operators
    (Анна, Борис) and the owner signed in; two canned replies on «дос»."""
    from inbox.canned import canned_reply_save
    from inbox.models import CannedReply

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-operator-day", assignment=Bot.Assignment.IN_TURN)
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        learn_pages(bot, origin)
        anna, anna_session = _operator(bot, "anna@day.example", "Анна")
        boris, boris_session = _operator(bot, "boris@day.example", "Борис")
        owner, owner_session = _operator(bot, "owner@day.example", "Ирина", Membership.Role.OWNER)
        for shortcut, title, text in (
            ("досвидания", "Прощание", "Спасибо, {посетитель}, хорошего дня!"),
            ("доставка", "Сроки доставки", "Здравствуйте, {посетитель}! Меня зовут {оператор}. "
                                           "Доставка по Москве — 1–2 дня."),
        ):
            canned_reply_save(canned_reply=CannedReply(bot=bot, shortcut=shortcut, title=title, text=text))
    yield {"bot": bot, "shop": origin, "app": live_app, "anna": anna_session, "boris": boris_session,
           "owner": owner_session, "anna_id": anna.pk, "boris_id": boris.pk}  # type: ignore[attr-defined]
    with django_db_blocker.unblock():
        bot.delete()
        for user in (anna, boris, owner):
            user.delete()  # type: ignore[attr-defined]
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


def _uses(bot: Bot) -> dict[str, int]:
    from inbox.models import CannedReply

    return dict(CannedReply.objects.filter(bot=bot).values_list("shortcut", "uses"))


def _on_hand(bot: Bot) -> int:
    from chat import presence

    return int(presence.on_hand(bot).count())


def _annas_conversation(bot: Bot, anna_id: int) -> int | None:
    from chat.models import Conversation

    return Conversation.objects.filter(bot=bot, state="operator", assigned_to_id=anna_id).values_list(
        "pk", flat=True).first()


def _given_to_anna(page: Page, desk: dict, anna: Page, boris: Page, shots: Path) -> tuple[Widget, int]:
    """Both inboxes open: the visitor who asks for a person after a question is given to Анна."""
    for tab in (anna, boris):
        tab.goto(f"{desk['app']}/inbox/")
        expect(tab.get_by_role("button", name="На месте")).to_be_visible()
    wait_for(lambda: committed(_on_hand, desk["bot"]) == 2)
    page.goto(f"{desk['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=60000)
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Анна на связи.", timeout=30000)
    conversation_id = committed(_annas_conversation, desk["bot"], desk["anna_id"])
    assert conversation_id is not None
    expect(anna.locator(f'#mine .conv[data-id="{conversation_id}"]')).to_be_visible(timeout=10000)
    expect(boris.locator(f'#mine .conv[data-id="{conversation_id}"]')).to_have_count(0)
    anna.screenshot(path=str(shots / "inbox-assigned.png"))
    return widget, conversation_id


def _passage_sent(widget: Widget, anna: Page, desk: dict) -> None:
    """The copilot's first passage for «Можно ли вернуть товар?» goes in with its link, then out."""
    first = anna.locator("#copilot .copilot-passage").first
    expect(anna.locator("#copilot-question")).to_have_text("Вопрос: Можно ли вернуть товар?", timeout=30000)
    link = f"{desk['shop']}/returns/"
    expect(first.locator("a")).to_have_attribute("href", link)
    first.get_by_role("button", name="Вставить").click()
    expect(anna.locator("#reply-text")).to_have_value(re.compile(re.escape(link) + "$"))
    anna.locator("#reply-text").press("Enter")
    expect(widget.last("operator").locator(".bubble")).to_contain_text(link, timeout=10000)


def _canned_sent(widget: Widget, anna: Page, desk: dict, shots: Path) -> None:
    """«/дос»: both replies; the arrow moves to the second, Enter puts it in (it does not send)."""
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


def _note_unseen(page: Page, frames: Frames, anna: Page) -> Widget:
    """A note: Анна's transcript shows it as a note; the visitor's page and socket never get it."""
    anna.locator("#note-text").fill(NOTE)
    anna.get_by_role("button", name="Добавить заметку").click()
    expect(anna.locator(".msg.note")).to_contain_text(NOTE)
    expect(anna.locator(".msg.note .msg-who")).to_contain_text("Заметка")
    expect(anna.locator("#note-text")).to_have_value("")
    anna.locator("#reply-text").fill("Уточню у склада.")
    anna.locator("#reply-text").press("Enter")
    widget = Widget(page)
    expect(widget.last("operator").locator(".bubble")).to_have_text("Уточню у склада.", timeout=10000)
    assert NOTE not in widget.log.inner_text()
    assert not any(NOTE in str(f) for socket in frames.sockets for f in socket.received)
    page.reload()  # the widget restores its transcript from the server
    Widget(page).open()
    expect(Widget(page).last("operator").locator(".bubble")).to_have_text("Уточню у склада.", timeout=10000)
    assert NOTE not in Widget(page).log.inner_text()
    assert not any(NOTE in str(f) for socket in frames.sockets for f in socket.received)
    return Widget(page)


def _rated(page: Page, widget: Widget) -> None:
    form = page.locator("spravka-widget form.csat")
    expect(form).to_be_visible(timeout=10000)
    form.locator(".stars label").nth(4).click()
    form.locator("textarea").fill("Борис быстро помог")
    form.locator("button[type=submit]").click()
    expect(form.locator(".csat-thanks")).to_have_text("Спасибо за оценку!", timeout=10000)


def test_an_operators_day_in_three_pages(
    page: Page, frames: Frames, operator_tab, browser: Browser, desk: dict, shots: Path
):
    from chat.models import ConversationRating

    anna, boris = operator_tab("anna"), operator_tab("boris")
    widget, conversation_id = _given_to_anna(page, desk, anna, boris, shots)
    anna.locator(f'#mine .conv[data-id="{conversation_id}"]').click()
    expect(anna).to_have_url(f"{desk['app']}/inbox/c/{conversation_id}/")
    _passage_sent(widget, anna, desk)
    _canned_sent(widget, anna, desk, shots)
    widget = _note_unseen(page, frames, anna)

    # Handed to Борис: the visitor is told, Борис's inbox lists it as his, with the note; he closes it.
    anna.locator("#transfer-to").select_option(label="Борис")
    anna.get_by_role("button", name="Передать", exact=True).click()
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Борис на связи.", timeout=10000)
    expect(boris.locator(f'#mine .conv[data-id="{conversation_id}"]')).to_be_visible(timeout=10000)
    expect(anna.locator("#chat-holder")).to_have_text("Ведёт: Борис")
    expect(anna.locator("#transfer")).to_be_hidden()
    boris.goto(f"{desk['app']}/inbox/c/{conversation_id}/")
    expect(boris.locator(".msg.note")).to_contain_text(NOTE)
    expect(boris.locator("#transfer")).to_be_visible()
    boris.get_by_role("button", name="Завершить").click()

    # The visitor rates it; the owner's overview shows the rating for Борис.
    _rated(page, widget)
    wait_for(lambda: committed(ConversationRating.objects.filter(bot=desk["bot"]).exists))
    rating = committed(lambda: ConversationRating.objects.get(bot=desk["bot"]))
    assert (rating.stars, rating.operator_id) == (5, desk["boris_id"])
    owner = operator_tab("owner")
    owner.goto(f"{desk['app']}/b/{desk['bot'].slug}/")
    row = owner.locator('#operators tr[data-operator="Борис"]')
    expect(row.locator('[data-csat="average"]')).to_have_text("5,0")
    expect(row.locator('[data-csat="count"]')).to_have_text("1 оценка")


def test_an_operator_who_steps_away_gets_no_conversation(page: Page, operator_tab, desk: dict):
    """«Отошла» in Анна's inbox: the next visitor goes to Борис, and the button says how to come back."""
    from chat.models import Conversation

    anna, boris = operator_tab("anna"), operator_tab("boris")
    for tab in (anna, boris):
        tab.goto(f"{desk['app']}/inbox/")
    wait_for(lambda: committed(_on_hand, desk["bot"]) == 2)
    anna.get_by_role("button", name="На месте").click()
    away = anna.get_by_role("button", name="Отошёл(ла)")
    expect(away).to_have_attribute("aria-pressed", "true")
    expect(away).to_have_attribute("title", "Новые разговоры вам не приходят. Нажмите, когда вернётесь.")
    wait_for(lambda: committed(_on_hand, desk["bot"]) == 1)
    page.goto(f"{desk['shop']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Борис на связи.", timeout=30000)
    newest = committed(lambda: Conversation.objects.filter(bot=desk["bot"]).order_by("-pk").first())
    assert newest is not None and newest.assigned_to_id == desk["boris_id"]
    anna.reload()
    expect(anna.get_by_role("button", name="Отошёл(ла)")).to_have_attribute("aria-pressed", "true")
    anna.get_by_role("button", name="Отошёл(ла)").click()
    expect(anna.get_by_role("button", name="На месте")).to_have_attribute("aria-pressed", "false")
