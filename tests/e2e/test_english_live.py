"""The product in English, in a real browser against the real app (uvicorn on the test database): a
browser that asks for English (Accept-Language: en-US) gets the login page, the operators' inbox
(the queue and a conversation), the review queue, the admin index and a changelist with no Russian
in their chrome; the language switch turns a page Russian and back. What stays Russian is the
shop's own data (the bot's name, its knowledge, the visitors' messages), and the switch's «Русский»,
which is marked lang="ru".

Refresh docs/screenshots/*-en.png with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_english_live.py"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Browser, BrowserContext, Page, expect
from pytest_django import DjangoDbBlocker

from tests.chat.conftest import KNOWLEDGE
from tests.e2e.chrome import russian_chrome
from tests.e2e.conftest import DESKTOP

pytestmark = pytest.mark.django_db

PASSWORD = "pw-english-e2e-1"
EMAIL = "owner-en@shop.example"
QUESTIONS = ["Сколько стоит доставка по Москве?", "Можно ли вернуть товар?"]
CALL_OPERATOR = "Соедините с оператором, пожалуйста"
def committed(func: Any, *args: Any, **kwargs: Any) -> Any:
    """An ORM call on a connection of its own, committed at once, so the app process sees it."""
    from concurrent.futures import ThreadPoolExecutor

    def run() -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result(timeout=60)


@pytest.fixture(scope="module")
def shop(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """A Russian shop's bot (its data stays Russian) with an owner who reads English: the chat
    fixtures' knowledge, two flagged answers in the review queue, one visitor waiting for an operator."""
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from chat import services
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    def setup() -> dict[str, Any]:
        user = get_user_model().objects.create_user(username=EMAIL, email=EMAIL, password=PASSWORD, is_staff=True)
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-english", confidence_threshold=0.99,
                                 site_url="https://technodom.example/")
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        for key, title, text, url in KNOWLEDGE:
            entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url,
                                                               kind=Entry.Kind.QA))
        embed_pending(bot_id=bot.pk)
        for question in QUESTIONS:
            conversation = services.conversation_open(bot=bot, visitor_id=f"e2e-{uuid.uuid4().hex[:10]}")
            services.message_receive(conversation=conversation, text=question, client_msg_id=uuid.uuid4().hex)
        waiting = services.conversation_open(bot=bot, visitor_id=f"e2e-{uuid.uuid4().hex[:10]}")
        services.message_receive(conversation=waiting, text=CALL_OPERATOR, client_msg_id=uuid.uuid4().hex)
        waiting.refresh_from_db()
        assert waiting.state == "waiting_operator", waiting.state
        data = [bot.name, *(t for row in KNOWLEDGE for t in row[1:3]), *QUESTIONS, CALL_OPERATOR]
        data += list(bot.messages.values_list("text", flat=True))
        data += [str(e) for e in bot.entries.all()]
        return {"bot": bot, "user": user, "waiting": waiting, "data": sorted(set(data), key=len, reverse=True)}

    with django_db_blocker.unblock():
        made = committed(setup)
    try:
        yield made
    finally:
        with django_db_blocker.unblock():
            committed(lambda: (Bot.objects.filter(pk=made["bot"].pk).delete(),
                               get_user_model().objects.filter(pk=made["user"].pk).delete()))


@pytest.fixture
def english(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=DESKTOP, locale="en-US", extra_http_headers={"Accept-Language": "en-US,en"})
    yield ctx
    ctx.close()


@pytest.fixture
def tab(english: BrowserContext) -> Iterator[Page]:
    page = english.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert errors == [], f"JavaScript errors on the page: {errors}"


def look(page: Page, shop: dict[str, Any], shots: Path, name: str) -> None:
    expect(page.locator("html")).to_have_attribute("lang", re.compile("^en"))
    assert russian_chrome(page, shop["data"]) == [], f"{name}: Russian in the English page"
    page.screenshot(path=str(shots / f"{name}-en.png"))


def sign_in(page: Page, app: str, next_path: str) -> None:
    page.goto(f"{app}/accounts/login/?next={next_path}")
    page.fill("#id_username", EMAIL)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def test_an_english_owner_sees_no_russian_chrome(tab: Page, live_app: str, shop: dict[str, Any], shots: Path):
    tab.goto(f"{live_app}/accounts/login/")
    expect(tab.locator("input[type=submit]")).to_have_value("Log in")
    look(tab, shop, shots, "login")

    sign_in(tab, live_app, "/inbox/")
    expect(tab.locator("#waiting .conv")).to_have_count(1)
    expect(tab.locator("#waiting .conv .conv-time")).to_have_text(re.compile(r"waiting"))
    look(tab, shop, shots, "inbox")

    tab.locator("#waiting .conv").first.click()
    expect(tab.locator(".bubble", has_text=CALL_OPERATOR)).to_be_visible()
    expect(tab.locator("time").first).to_have_text(re.compile(r"^\d\d:\d\d [AP]M$"))  # the page's language
    look(tab, shop, shots, "inbox-conversation")

    tab.goto(f"{live_app}/admin/review/reviewitem/?bot={shop['bot'].pk}")
    expect(tab.locator("#rq-position")).to_have_text(re.compile(r"^1 of \d+$"))
    look(tab, shop, shots, "review-queue")

    tab.goto(f"{live_app}/admin/")
    expect(tab.locator("#site-name")).to_be_visible()
    look(tab, shop, shots, "admin-index")

    tab.goto(f"{live_app}/admin/knowledge/entry/?bot__id__exact={shop['bot'].pk}")
    expect(tab.locator("#result_list tbody tr")).to_have_count(len(KNOWLEDGE))
    expect(tab.locator("#result_list tbody tr").first).to_contain_text("question and answer")
    look(tab, shop, shots, "admin-entries")


def test_the_switch_turns_a_page_russian_and_back(tab: Page, live_app: str, shop: dict[str, Any]):
    sign_in(tab, live_app, "/admin/")
    expect(tab.locator("#user-tools")).to_contain_text("Log out")
    tab.select_option("#language-admin", "ru")
    expect(tab.locator("html")).to_have_attribute("lang", "ru")
    expect(tab.locator("#user-tools")).to_contain_text("Выйти")
    tab.goto(f"{live_app}/inbox/")  # the choice holds on every page (a cookie), Accept-Language notwithstanding
    expect(tab.locator(".tabs")).to_contain_text("Входящие")
    tab.select_option("#language-inbox", "en")
    expect(tab.locator(".tabs")).to_contain_text("Inbox")
    expect(tab.locator("html")).to_have_attribute("lang", "en")
