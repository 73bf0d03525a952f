"""The owner's crawl page in a real browser against the real app: the three counts of a crawl
(fetched, searchable by words, with vectors) move on their own while the page stays open.

Refresh docs/screenshots/admin-crawl-progress.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_admin_crawl_live.py"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import SCREENSHOTS

# transaction=True: the row updates below must be committed for the app's process to see them.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def crawl(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """An owner, their bot and a crawl of its site halfway through, committed for the app to see."""
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from knowledge.models import CrawlRun, Source

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="VK Cloud", slug="e2e-crawl", site_url="https://cloud.example/")
        user = get_user_model().objects.create_user(username="e2e-crawl-owner", password="e2e-pass-2", is_staff=True)
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        source = Source.objects.create(bot=bot, kind="site", url="https://cloud.example/", title="Документация")
        run = CrawlRun.objects.create(bot=bot, source=source, status="running", pages_total=134, pages_done=57,
                                      fetched=55, unchanged=1, entries_created=480, pages_embedded=31,
                                      embeddings_done=262, embeddings_total=480)
    yield {"run": run, "user": "e2e-crawl-owner", "password": "e2e-pass-2"}
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


def test_the_crawl_page_shows_fetched_indexed_and_embedded_pages_moving_live(
    page: Page, live_app: str, crawl: dict[str, Any], django_db_blocker: DjangoDbBlocker,
):
    from knowledge.models import CrawlRun

    page.set_viewport_size({"width": 1400, "height": 520})
    page.goto(f"{live_app}/admin/knowledge/crawlrun/")
    page.fill("#id_username", crawl["user"])
    page.fill("#id_password", crawl["password"])
    page.press("#id_password", "Enter")
    box = page.locator(".spravka-progress")
    fetched, indexed, embedded = (box.locator(f'[data-count="{name}"] span') for name in
                                  ("fetched", "indexed", "embedded"))
    expect(fetched).to_have_text("57")
    expect(indexed).to_have_text("56")
    expect(embedded).to_have_text("31")

    with django_db_blocker.unblock():  # the crawl and the embed queue move on; the page is not reloaded
        CrawlRun.objects.filter(pk=crawl["run"].pk).update(pages_done=96, fetched=93, pages_embedded=70,
                                                           embeddings_done=610, embeddings_total=820)
    expect(fetched).to_have_text("96", timeout=10000)
    expect(indexed).to_have_text("94")
    expect(embedded).to_have_text("70")
    expect(box.locator(".spravka-progress-label")).to_contain_text("96/134")
    assert box.locator('[data-count="embedded"] meter').evaluate("m => m.value") == 70
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "admin-crawl-progress.png"))
