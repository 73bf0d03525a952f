"""The entry list's bulk actions in a real browser against the real app, from the keyboard: rows
picked with Space, the action run with Enter; the entries that changed are counted and the one that
fails the checks is named.

Refresh docs/screenshots/admin-entries-actions.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_admin_entries_live.py"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import SCREENSHOTS

# transaction=True: the rows below must be committed for the app's process to see them.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def shelf(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from knowledge.lexicon import lexicon_refresh
    from knowledge.models import Entry

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="Магазин", slug="e2e-entries", site_url="https://shop.example/")
        user = get_user_model().objects.create_user(username="e2e-entries-owner", password="e2e-pass-3",
                                                    is_staff=True)
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        rows = [
            Entry.objects.create(bot=bot, kind="chunk", title="Доставка", text="Курьер привозит заказ по Москве."),
            Entry.objects.create(bot=bot, kind="chunk", title="Оплата", text="Принимаем карты и наличные."),
            Entry.objects.create(bot=bot, kind="qa", title="", text="Ответ без вопроса из старого импорта."),
        ]
        lexicon_refresh(bot_id=bot.pk)
    yield {"bot": bot, "rows": rows, "user": "e2e-entries-owner", "password": "e2e-pass-3"}
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


def test_switching_entries_off_from_the_keyboard(
    page: Page, live_app: str, shelf: dict[str, Any], django_db_blocker: DjangoDbBlocker,
):
    from knowledge.lexicon import lexicon_fresh, lexicon_stored
    from knowledge.models import Entry

    page.set_viewport_size({"width": 1400, "height": 560})
    page.goto(f"{live_app}/admin/knowledge/entry/")
    page.fill("#id_username", shelf["user"])
    page.fill("#id_password", shelf["password"])
    page.press("#id_password", "Enter")
    for entry in shelf["rows"]:
        box = page.locator(f'input.action-select[value="{entry.pk}"]')
        box.focus()
        page.keyboard.press("Space")
        expect(box).to_be_checked()
    page.select_option("select[name=action]", "deactivate")
    page.locator("button[name=index]").focus()
    page.keyboard.press("Enter")

    messages = page.locator("ul.messagelist")
    expect(messages).to_contain_text("Изменено записей: 2")
    expect(messages).to_contain_text("«Ответ без вопроса из старого импорта.»")
    expect(messages).to_contain_text("нужен вопрос")
    with django_db_blocker.unblock():
        active = dict(Entry.objects.filter(bot=shelf["bot"]).values_list("text", "active"))
        assert active == {"Курьер привозит заказ по Москве.": False, "Принимаем карты и наличные.": False,
                          "Ответ без вопроса из старого импорта.": True}
        assert lexicon_stored(bot_id=shelf["bot"].pk) == lexicon_fresh(bot_id=shelf["bot"].pk)
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "admin-entries-actions.png"))
