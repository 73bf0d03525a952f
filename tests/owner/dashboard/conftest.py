"""Rows for the dashboard's pages, written directly: these tests read the numbers, the chat and
feedback layers that normally write them are tested in their own folders."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

STAT = re.compile(r'data-stat="(\w+)">(\d+)<')


def stats(html: str) -> dict[str, int]:
    return {name: int(value) for name, value in STAT.findall(html)}


def seed_activity(bot: Any, *, days_ago: int = 1, conversations: int = 3, gap: str = "Есть ли доставка в Казань?",
                  gap_count: int = 4) -> None:
    """`conversations` conversations `days_ago` days old: each a question and a bot answer, the
    first two answers rated thumbs-down; one lead; the first handed to a person, the rest answered by
    the bot (as chat marks them, and as outcomes); a pending and a
    decided review item; an open gap (`gap`, asked `gap_count` times)."""
    from chat.models import Conversation, Lead, Message
    from feedback.models import Gap, GapQuestion, Outcome
    from review.models import ReviewItem

    when = timezone.now() - timedelta(days=days_ago)
    for n in range(conversations):
        conversation = Conversation.objects.create(bot=bot, visitor_id=f"v-{days_ago}-{n}", state="closed")
        question = Message.objects.create(conversation=conversation, bot=bot, role="visitor", text=f"Вопрос {n}")
        answer = Message.objects.create(conversation=conversation, bot=bot, role="bot", text="Ответ",
                                        reply_to=question, rating=-1 if n < 2 else 1)
        Conversation.objects.filter(pk=conversation.pk).update(
            created_at=when, answered_at=when, handed_off_at=when if n == 0 else None)
        Message.objects.filter(pk__in=[question.pk, answer.pk]).update(created_at=when)
        Outcome.objects.create(bot=bot, conversation=conversation, kind="handed_off" if n == 0 else "answered",
                               started_at=when)
        if n < 2:
            ReviewItem.objects.create(bot=bot, message=answer, reasons=["friction"], answer="Ответ", answered_at=when,
                                      status="decided" if n else "pending", decision="correct" if n else "",
                                      decided_at=timezone.now() if n else None)
        if n == 0:
            lead = Lead.objects.create(bot=bot, conversation=conversation, visitor_id=conversation.visitor_id,
                                       name="Анна", phone="+79990000000", consented_at=when)
            Lead.objects.filter(pk=lead.pk).update(created_at=when)
            topic = Gap.objects.create(bot=bot, title=gap, count=gap_count, first_seen=when, last_seen=when)
            GapQuestion.objects.create(bot=bot, gap=topic, message=question, text=f"{gap} (иначе)",
                                       reason="no_answer", asked_at=when)


@pytest.fixture
def owner_client(client, owner, bot):
    client.force_login(owner)
    return client


@pytest.fixture(autouse=True)
def _language_reset(settings: Any) -> Any:
    """A request in English leaves English active in this thread (LocaleMiddleware activates the
    request's language and nothing deactivates it): reset it, so later tests start in Russian."""
    from django.utils import translation

    yield
    translation.activate(settings.LANGUAGE_CODE)
