"""The approval queue of review replies in a real browser against the real app (uvicorn on the test
database): three replies that the judge could not check (it was down), so each waits for a person;
1 approves, 2 + Ctrl+Enter saves an edit, 3 rejects, J/K move between them. Then the run's timeline.
Screenshots for docs/screenshots/ with SPRAVKA_SCREENSHOTS=1."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import SCREENSHOTS
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import FakeLLMServer, tool_use

pytestmark = pytest.mark.django_db

PASSWORD = "pw-replies-e2e-1"
REVIEWS = [
    ("Анна", 5, "Платье пришло на следующий день, сидит отлично.", "Платье"),
    ("Олег", 4, "Кроссовки хорошие, но коробка была помята.", "Кроссовки"),
    ("Ира", 2, "Курьер опоздал на два часа.", "Сумка"),
]
EDITED = "Олег, спасибо! Передали складу, чтобы упаковывали бережнее."


@pytest.fixture(scope="module")
def queue_bot(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from routes.review_reply import review_reply_run
    from routes.reviews import ReviewDraft, reviews_import

    server = FakeLLMServer().start()
    server.tool_down("verdict")
    server.script_tool("review_reply", *[tool_use({"reply": f"Спасибо за отзыв, {name}!"}) for name, *_ in REVIEWS])
    llm = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": server.url,
           "LLM_RETRY_BACKOFF": 0.01, "LLM_MAX_RETRIES": 1, "LLM_TIMEOUT": 5.0}
    with django_db_blocker.unblock(), override_settings(**llm):
        user = get_user_model().objects.create_user(username="replies-owner", email="replies@shop.example",
                                                    password=PASSWORD, is_staff=True)
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-replies", site_url="https://shop.example/")
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
        drafts = [ReviewDraft(a, r, t, p, datetime.date(2026, 11, 20), "Яндекс Карты") for a, r, t, p in REVIEWS]
        runs = [review_reply_run(review=review) for review in reviews_import(bot=bot, drafts=drafts).created]
    server.stop()
    yield {"bot": bot, "user": user, "runs": runs}
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


# A decision is a form post and a redirect: on a loaded machine it takes longer than a text check.
DECIDED = 20_000


def keys_ready(page: Page) -> None:
    """After a decision the queue is a new page: a key pressed before its script has run is lost."""
    page.wait_for_load_state("load")


def test_an_owner_approves_edits_and_rejects_with_the_keyboard(
    page: Page, live_app: str, queue_bot: dict[str, Any], shots: Path, django_db_blocker: DjangoDbBlocker
):
    from routes.models import RouteRun

    page.goto(f"{live_app}/admin/login/?next=/admin/routes/routerun/queue/")
    page.fill("#id_username", "replies-owner")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    card = page.locator(".aq-card")
    expect(page.locator("#approval-queue")).to_contain_text("Ответ 1 из 3")
    expect(card).to_contain_text("Анна")
    expect(card).to_contain_text("проверка не выполнялась")  # the judge was down: manual
    shots and page.screenshot(path=str(shots / "review-replies-queue.png"), full_page=True)

    keys_ready(page)
    page.keyboard.press("j")  # J and K move without deciding
    expect(card).to_contain_text("Олег")
    keys_ready(page)
    page.keyboard.press("k")
    expect(card).to_contain_text("Анна")
    keys_ready(page)

    page.keyboard.press("1")  # approve Анна's draft as it is
    expect(page.locator(".messagelist")).to_contain_text("Ответ одобрен", timeout=DECIDED)
    expect(page.locator("#approval-queue")).to_contain_text("Ответ 1 из 2")
    expect(card).to_contain_text("Олег")
    keys_ready(page)

    page.keyboard.press("2")  # edit Олег's
    expect(page.locator("#aq-text")).to_be_focused()
    page.fill("#aq-text", EDITED)
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messagelist")).to_contain_text("Исправленный ответ одобрен", timeout=DECIDED)
    expect(card).to_contain_text("Ира")
    keys_ready(page)

    page.keyboard.press("3")  # reject Ира's
    expect(page.locator(".messagelist")).to_contain_text("Ответ отклонён", timeout=DECIDED)
    expect(page.locator(".aq-empty")).to_contain_text("Ответов, ждущих решения, нет")

    with django_db_blocker.unblock():
        rows = RouteRun.objects.filter(bot=queue_bot["bot"]).select_related("review")
        runs = {run.review.author: run for run in rows if run.review is not None}
        assert runs["Анна"].status == RouteRun.Status.APPROVED and runs["Анна"].final_text == ""
        assert runs["Олег"].status == RouteRun.Status.APPROVED and runs["Олег"].final_text == EDITED
        assert runs["Ира"].status == RouteRun.Status.REJECTED
        assert all(run.decided_by_id == queue_bot["user"].pk for run in runs.values())
        timeline_id = runs["Олег"].pk

    page.goto(f"{live_app}/admin/routes/routerun/{timeline_id}/timeline/")
    timeline = page.locator("ol.tl")
    expect(timeline).to_contain_text("проверка не выполнялась")
    expect(timeline).to_contain_text("решение контролёра")
    shots and page.screenshot(path=str(shots / "review-replies-timeline.png"), full_page=True)
