"""Every owner page as an owner sees it, in a real browser against the real app, in Russian and in
English at 1024 and 1280 px: nothing overflows its box and no raw value, plural or case slip shows
(both measured in the page by tests/e2e/pagecheck.py, not judged by eye), and the overview's numbers
are the conversations this test made through the widget a moment before, before any outcome settled.

Four visitors on the shop's pages: one asks what the site answers, one asks what it never covers,
one asks that too and calls a person, one only opens the widget (which starts no conversation).

Refresh docs/screenshots/owner-pages-*.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_owner_pages_live.py"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.e2e import pagecheck
from tests.e2e.conftest import DESKTOP, ShopFactory, committed, snippet
from tests.e2e.test_widget_live import learn_pages
from tests.e2e.widget import NO_ANSWER, Widget

pytestmark = pytest.mark.django_db

ANSWERED = "Можно ли вернуть товар?"
OFF_TOPIC = "Какая завтра погода в Антарктиде?"
WIDTHS = (1024, 1280)
# (name, path): {slug} is the bot's, {bot} its id.
PAGES = [
    ("bots", "/"),
    ("overview", "/b/{slug}/"),
    ("setup", "/b/{slug}/setup/"),
    ("knowledge", "/b/{slug}/knowledge/"),
    ("channels", "/b/{slug}/channels/"),
    ("crm", "/b/{slug}/crm/"),
    ("voice", "/b/{slug}/voice/"),
    ("experiments", "/b/{slug}/experiments/"),
    ("testing", "/b/{slug}/testing/"),
    ("usage", "/b/{slug}/usage/"),
    ("members", "/b/{slug}/members/"),
    ("review", "/admin/review/reviewitem/?bot={bot}"),
    ("gaps", "/admin/feedback/gap/?bot={bot}"),
    ("outcomes", "/admin/feedback/outcome/?bot={bot}"),
    ("inbox", "/inbox/"),
]


@pytest.fixture(scope="module")
def walked(browser: Browser, live_app: str, shop_factory: ShopFactory,
           django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """The shop, its bot (knowing six of its pages) and owner, and the four visitors' conversations."""
    from django.contrib.auth import get_user_model

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-owner-pages")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.privacy_policy_url = f"{origin}/privacy/"
        bot.save(update_fields=["site_url", "allowed_origins", "privacy_policy_url"])
        learn_pages(bot, origin)
        owner = get_user_model().objects.create_user(
            username="pages@e2e.example", email="pages@e2e.example", password="e2e-pages-1", first_name="Ольга",
            is_staff=True,
        )
        Membership.objects.create(bot=bot, user=owner, role=Membership.Role.OWNER)
        client = Client()
        client.force_login(owner)
        session = client.cookies["sessionid"].value
    for visitor in ("answered", "unanswered", "person", "only-opened"):
        _visit(browser, origin, visitor)
    yield {"bot": bot, "app": live_app, "session": session}
    with django_db_blocker.unblock():
        bot.delete()
        owner.delete()
        connections.close_all()


def _visit(browser: Browser, origin: str, visitor: str) -> None:
    """One visitor in a browser profile of their own (their own visitor id)."""
    context = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    page = context.new_page()
    try:
        page.goto(f"{origin}/delivery/")
        widget = Widget(page)
        widget.open()
        if visitor == "only-opened":
            expect(widget.input).to_be_editable()
            return
        widget.ask(ANSWERED if visitor == "answered" else OFF_TOPIC)
        bubble = widget.last("bot").locator(".bubble")
        expect(bubble).to_contain_text("14 дней" if visitor == "answered" else NO_ANSWER, timeout=60000)
        if visitor == "person":
            widget.last("bot").get_by_role("button", name="Позвать оператора").click()
            expect(widget.last("system")).to_be_visible()
    finally:
        context.close()


def _owner_tab(browser: Browser, walked: dict[str, Any], language: str, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900},
                                  locale="ru-RU" if language == "ru" else "en-US")
    context.add_cookies([{"name": "sessionid", "value": walked["session"], "url": walked["app"]}])
    return context


@pytest.mark.parametrize("language", ["ru", "en"])
def test_the_overview_counts_the_conversations_as_they_happened(browser: Browser, walked: dict[str, Any],
                                                                language: str):
    from feedback.models import Outcome

    assert not committed(lambda: Outcome.objects.filter(bot=walked["bot"]).exists())  # none settled yet
    context = _owner_tab(browser, walked, language, 1280)
    page = context.new_page()
    try:
        page.goto(f"{walked['app']}/b/{walked['bot'].slug}/")
        numbers = {name: page.locator(f'[data-stat="{name}"]').inner_text()
                   for name in ("conversations", "answered", "handed_off", "unanswered")}
        # Three visitors wrote; the fourth only opened the widget. The person-caller's question was
        # not answered either, and a person was asked for: handed off, not the bot's.
        assert numbers == {"conversations": "3", "answered": "1", "handed_off": "1", "unanswered": "2"}
        empty = "There were no unanswered questions." if language == "en" else "Вопросов без ответа не было."
        expect(page.get_by_text(empty)).to_have_count(0)
    finally:
        context.close()


@pytest.mark.parametrize("language", ["ru", "en"])
def test_every_owner_page_reads_right_and_fits(browser: Browser, walked: dict[str, Any], language: str,
                                               shots: Path):
    bot = walked["bot"]
    problems: list[str] = []
    for width in WIDTHS:
        context = _owner_tab(browser, walked, language, width)
        page: Page = context.new_page()
        errors = _errors_of(page)
        try:
            for name, path in PAGES:
                response = page.goto(walked["app"] + path.format(slug=bot.slug, bot=bot.pk))
                assert response is not None and response.status == 200, (name, response and response.status)
                page.wait_for_load_state("load")
                expect(page.locator("html")).to_have_attribute("lang", language)
                found = pagecheck.overflow(page) + pagecheck.words(page, language, data=_shop_data())
                problems += [f"{name} ({language}, {width} px): {line}" for line in found]
                if width == 1280 or name in ("overview", "inbox"):
                    page.screenshot(path=str(shots / f"owner-pages-{name}-{language}-{width}.png"), full_page=True)
        finally:
            context.close()
        assert errors == [], f"JavaScript errors: {errors}"
    assert problems == [], "\n".join(problems)


def _errors_of(page: Page) -> list[str]:
    """The page's uncaught JavaScript errors, as they happen."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def _shop_data() -> list[str]:
    """What the visitors wrote: shown as they wrote it."""
    return [ANSWERED, OFF_TOPIC]
