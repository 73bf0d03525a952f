"""The owner corrects an answer in the review queue in a real browser: the editor shows the
correction's reach (the visitors' paraphrase, not the question about another city), the owner
confirms; a paraphrase gets the correction, the near miss keeps its answer; a day later the owner
reopens the decision from the decided list and the old answer is back. Screenshots in
docs/screenshots/ (SPRAVKA_SCREENSHOTS=1)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.chat.conftest import KNOWLEDGE

# Transactional: what the test writes (yesterday's date) is committed, so the served app sees it and
# no row stays locked while the app reverts the decision.
pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-reach-e2e-1"
MOSCOW = "Сколько стоит доставка по Москве?"
PARAPHRASE = "Какая цена доставки по Москве?"
NEAR_MISS = "Сколько стоит доставка по Санкт-Петербургу?"
FIXED = "Доставка по Москве в пределах МКАД — 350 ₽, от 5000 ₽ бесплатно."
SPB = ("spb", "Доставка по Санкт-Петербургу",
       "Доставка по Санкт-Петербургу курьером — 490 ₽, на следующий день.", "https://shop.example/delivery/spb")


def _ask(bot: Any, text: str) -> Any:
    from chat import services

    conversation = services.conversation_open(bot=bot, visitor_id=f"e2e-{uuid.uuid4().hex[:10]}")
    _message, reply, _created = services.message_receive(
        conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex)
    return reply


@pytest.fixture(scope="module")
def reach_bot(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, Any]]:
    """The chat fixtures' entries and a Saint Petersburg one; the Moscow question, its paraphrase and
    the other city asked by visitors (a confidence threshold above every score flags each answer)."""
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    with django_db_blocker.unblock():
        user = get_user_model().objects.create_user(username="reach-owner", email="reach@shop.example",
                                                    password=PASSWORD, is_staff=True)
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-reach", confidence_threshold=0.99)
    try:
        with django_db_blocker.unblock():
            Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
            for key, title, text, url in [*KNOWLEDGE, SPB]:
                entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url,
                                                                   kind=Entry.Kind.QA))
            embed_pending(bot_id=bot.pk)
            replies = {question: _ask(bot, question) for question in (MOSCOW, PARAPHRASE, NEAR_MISS)}
            connections.close_all()
        yield {"bot": bot, "user": user, "replies": replies}
    finally:
        with django_db_blocker.unblock():
            from review.models import Correction, ReviewItem

            Correction.objects.filter(bot=bot).delete()
            ReviewItem.objects.filter(bot=bot).update(entry=None)
            bot.delete()
            user.delete()
            connections.close_all()


def login(page: Page, app: str, next_path: str) -> None:
    page.goto(f"{app}/admin/login/?next={next_path}")
    page.fill("#id_username", "reach-owner")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{app}{next_path}")


def says_a_close_question_is_the_same(page: Page, shots: Path | None) -> None:
    """The near miss is listed as a question the correction leaves; the owner's «same question» makes
    it a wording and the reach is checked again. Then Esc: nothing is saved."""
    page.keyboard.press("2")
    page.fill("#rq-text", FIXED)
    page.keyboard.press("Control+Enter")
    near = page.locator("#rq-near-list li", has_text=NEAR_MISS)
    expect(near).to_be_visible(timeout=30_000)
    expect(near).to_contain_text("«Санкт-Петербургу»")
    shots and page.screenshot(path=str(shots / "review-correction-close-questions.png"), full_page=True)
    near.locator("button").click()
    expect(page.locator("#rq-wordings")).to_have_value(NEAR_MISS)
    expect(page.locator("#rq-reach-list")).to_contain_text(NEAR_MISS, timeout=30_000)
    expect(page.locator("#rq-near-list")).not_to_contain_text(NEAR_MISS)
    page.keyboard.press("Escape")
    expect(page.locator("#rq-editor")).to_be_hidden()


def test_the_owner_sees_the_reach_confirms_and_reverts_a_day_later(
    page: Page, live_app: str, reach_bot: dict[str, Any], django_db_blocker: DjangoDbBlocker, shots: Path
):
    from django.utils import timezone

    from review.models import Correction, ReviewItem

    bot, replies = reach_bot["bot"], reach_bot["replies"]
    before_near = replies[NEAR_MISS].source_entry_id
    before_moscow = replies[MOSCOW].source_entry_id
    login(page, live_app, "/admin/review/reviewitem/")
    expect(page.locator("#rq-dialog .rq-msg.visitor").first).to_contain_text(MOSCOW)
    says_a_close_question_is_the_same(page, shots)

    page.keyboard.press("2")
    expect(page.locator("#rq-question")).to_have_value(MOSCOW)
    expect(page.locator("#rq-wordings")).to_have_value("")
    page.fill("#rq-text", FIXED)
    page.fill("#rq-wordings", "Доставка внутри МКАД платная?")
    page.keyboard.press("Control+Enter")
    reach = page.locator("#rq-reach-list li")
    expect(reach.first).to_be_visible(timeout=30_000)  # the reach search: slow on a loaded machine
    expect(page.locator("#rq-reach")).to_contain_text(PARAPHRASE)
    expect(page.locator("#rq-reach-list")).not_to_contain_text("Санкт-Петербург")
    expect(page.locator("#rq-near-list")).to_contain_text(NEAR_MISS)  # left, and said so
    expect(page.locator("#rq-save")).to_contain_text("Подтвердить")
    shots and page.screenshot(path=str(shots / "review-correction-reach.png"), full_page=True)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#rq-undo-text")).to_have_text("Сохранено: «Исправить»")

    with django_db_blocker.unblock():
        correction = Correction.objects.get(bot=bot)
        assert _ask(bot, "Доставка по Москве сколько стоит?").source_entry_id == correction.entry_id
        assert _ask(bot, NEAR_MISS).source_entry_id == before_near
        # A day later (the decision and the correction dated yesterday) the owner takes it back.
        yesterday = timezone.now() - timedelta(days=1)
        ReviewItem.objects.filter(corrections=correction).update(decided_at=yesterday)
        Correction.objects.filter(pk=correction.pk).update(created_at=yesterday)

    page.goto(f"{live_app}/admin/review/reviewitem/?status=decided")
    expect(page.locator("#rq-decided")).to_contain_text("Исправить")
    expect(page.locator("#rq-dialog .rq-msg.visitor").first).to_contain_text(MOSCOW)
    shots and page.screenshot(path=str(shots / "review-decided-reopen.png"), full_page=True)
    page.click("#rq-reopen")
    expect(page.locator("#rq-undo-text")).to_have_text("Решение отменено, ответ снова в очереди.")

    with django_db_blocker.unblock():
        correction.refresh_from_db()
        assert correction.status == Correction.Status.UNDONE
        assert _ask(bot, MOSCOW).source_entry_id == before_moscow
