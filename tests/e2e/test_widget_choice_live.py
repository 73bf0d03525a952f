"""The visitor's choice up front («Предлагать выбор до первого сообщения»), in Chromium against the
real app under uvicorn: a bot with the option on offers «Спросить бота» / «Написать оператору»
before the first message, and the visitor reaches an operator with the keyboard alone; a bot with
it off shows the widget as before.

Refresh docs/screenshots/widget-choice.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_widget_choice_live.py"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from bots import services as bot_services
from bots.models import Bot
from chat.models import Conversation
from tests.e2e.conftest import ShopFactory, snippet
from tests.e2e.widget import Frames, Widget, wait_for

pytestmark = pytest.mark.django_db


@dataclass
class Shops:
    choice: str  # the shop whose bot offers the choice
    plain: str  # the shop whose bot does not (the default)


@pytest.fixture(scope="module")
def shops(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[Shops]:
    """Two bots without knowledge (nothing here asks the bot a question), each on its own shop."""
    bots: list[Bot] = []
    origins: list[str] = []
    with django_db_blocker.unblock():
        for slug in ("e2e-choice", "e2e-no-choice"):
            bot = Bot.objects.create(name="ТехноДом", slug=slug)
            origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
            bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
            bot.save(update_fields=["site_url", "allowed_origins"])
            bots.append(bot)
            origins.append(origin)
        bot_services.bot_visitor_choice_set(bot=bots[0], on=True)
    yield Shops(choice=origins[0], plain=origins[1])
    with django_db_blocker.unblock():
        for bot in bots:
            bot.delete()
        connections.close_all()  # see wait_for_app_sessions_to_end in conftest.py


def choice(page: Page):
    return page.locator("spravka-widget .choice")


def visitor_conversations(frames: Frames) -> list[Conversation]:
    visitor = frames.sent("hello")[0]["visitor_id"]
    return list(Conversation.objects.filter(visitor_id=visitor).order_by("pk"))


def test_the_visitor_chooses_an_operator_with_the_keyboard(page: Page, frames: Frames, shops: Shops, shots: Path):
    page.goto(f"{shops.choice}/")
    widget = Widget(page)
    widget.open()
    offered = choice(page)
    expect(offered).to_be_visible()
    expect(offered).to_have_attribute("aria-label", "Кому задать вопрос")
    expect(offered.get_by_role("button", name="Спросить бота")).to_be_visible()
    expect(offered.get_by_role("button", name="Написать оператору")).to_be_visible()
    expect(widget.input).to_be_focused()  # writing straight away works as before
    assert frames.received("welcome")[0]["choice"] is True
    assert visitor_conversations(frames) == []  # the choice alone starts nothing
    page.screenshot(path=str(shots / "widget-choice.png"))

    page.keyboard.press("Shift+Tab")  # from the text field back to the choice just above it
    expect(offered.get_by_role("button", name="Написать оператору")).to_be_focused()
    page.keyboard.press("Enter")
    # Nobody has the inbox open: the visitor hears so at once (chat/presence.py); the wait goes on.
    expect(widget.last("system")).to_contain_text("Сейчас никого из операторов нет на месте", timeout=30000)
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.")
    expect(offered).to_be_hidden()
    expect(widget.input).to_be_focused()
    assert frames.sent("button") == [{"type": "button", "id": "operator"}]
    wait_for(lambda: [c.state for c in visitor_conversations(frames)] == [Conversation.State.WAITING_OPERATOR])

    page.reload()  # coming back to the open conversation: no choice any more
    widget.open()
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.")
    frames.wait(lambda: len(frames.received("welcome")) == 2)
    assert frames.received("welcome")[1]["choice"] is False
    expect(choice(page)).to_be_hidden()


def test_asking_the_bot_only_moves_to_the_text_field(page: Page, frames: Frames, shops: Shops):
    page.goto(f"{shops.choice}/")
    widget = Widget(page)
    widget.open()
    offered = choice(page)
    expect(offered).to_be_visible()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    expect(offered.get_by_role("button", name="Спросить бота")).to_be_focused()
    page.keyboard.press("Enter")
    expect(offered).to_be_hidden()
    expect(widget.input).to_be_focused()
    assert frames.sent("button") == []
    assert visitor_conversations(frames) == []


def test_with_the_option_off_nothing_is_offered(page: Page, frames: Frames, shops: Shops):
    page.goto(f"{shops.plain}/")
    widget = Widget(page)
    widget.open()
    frames.wait(lambda: frames.received("welcome"))
    assert frames.received("welcome")[0]["choice"] is False
    expect(choice(page)).to_be_hidden()
    expect(widget.input).to_be_focused()
    page.keyboard.press("Shift+Tab")  # the text field's neighbour is the log, as before
    assert widget.focused() == "log"
    assert visitor_conversations(frames) == []
