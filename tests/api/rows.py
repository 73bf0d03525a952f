"""One row of every API resource for a bot, made the way the product makes them where it is cheap
(a real question through the chain for conversations) and as plain rows for the rest."""

from __future__ import annotations

from django.utils import timezone

from chat.models import Lead, Message
from chat.services import conversation_ask_once
from feedback.models import Gap
from knowledge.models import Source
from knowledge.services import entry_create, source_create
from review.models import ReviewItem


def rows_for(bot) -> dict[str, int]:
    """{resource path: id of one row of `bot`}."""
    entry = entry_create(bot=bot, kind="qa", title=f"Вопрос бота {bot.slug}?", text="Ответ.")
    source = source_create(bot=bot, kind=Source.Kind.SITE, url=f"https://{bot.slug}.example/")
    reply = conversation_ask_once(bot=bot, text="Здравствуйте", visitor_id=f"v-{bot.slug}")
    assert reply is not None
    now = timezone.now()
    lead = Lead.objects.create(
        bot=bot, conversation=reply.conversation, visitor_id=f"v-{bot.slug}", name="Анна", phone="+79990001122",
        consent_text="Согласна", consent_policy_url="https://shop.example/privacy", consented_at=now,
    )
    gap = Gap.objects.create(bot=bot, title="парковка", count=2, first_seen=now, last_seen=now)
    item = ReviewItem.objects.create(
        bot=bot, message=reply, reasons=[ReviewItem.Reason.LOW_CONFIDENCE], question="Здравствуйте",
        answer=reply.text, answered_at=now,
    )
    assert Message.objects.filter(conversation=reply.conversation).count() == 2
    return {
        "entries": entry.pk, "sources": source.pk, "conversations": reply.conversation_id, "leads": lead.pk,
        "gaps": gap.pk, "review-items": item.pk,
    }
