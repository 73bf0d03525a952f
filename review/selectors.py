"""Reads of the review queue: who may review which bot, the filtered queue, one item as the card
the queue page shows. The chat and the knowledge base are read through their own selectors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import formats, timezone
from django.utils.translation import gettext

from bots.models import Bot
from bots.selectors import inbox_bots, owned_bots
from chat import selectors as chat_selectors
from knowledge.selectors import entry_cards
from review.models import ReviewItem


def reviewable_bots(user: Any) -> QuerySet[Bot]:
    """Owners review their bots; operators too where the owner turned `review_by_operators` on."""
    if not getattr(user, "is_authenticated", False):
        return Bot.objects.none()
    allowed = Q(pk__in=owned_bots(user).values("pk")) | Q(
        pk__in=inbox_bots(user).filter(review_by_operators=True).values("pk")
    )
    return Bot.objects.filter(allowed)


@dataclass(frozen=True)
class QueueFilter:
    bot_id: int | None = None
    reason: str = ""
    since: date | None = None
    until: date | None = None
    status: str = ReviewItem.Status.PENDING

    @classmethod
    def from_query(cls, query: Any) -> QueueFilter:
        """Filters from the page's query string; an unknown or malformed value is ignored, not an error."""
        reason = query.get("reason", "")
        status = query.get("status", ReviewItem.Status.PENDING)
        return cls(
            bot_id=parse_int(query.get("bot")),
            reason=reason if reason in ReviewItem.Reason.values else "",
            since=_date(query.get("since")), until=_date(query.get("until")),
            status=status if status in ReviewItem.Status.values else ReviewItem.Status.PENDING,
        )

    def as_query(self) -> dict[str, str]:
        values = {"bot": self.bot_id or "", "reason": self.reason, "since": self.since or "",
                  "until": self.until or "", "status": self.status}
        return {k: str(v) for k, v in values.items() if v}


def parse_int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _date(value: Any) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except (TypeError, ValueError):
        return None


def queue(bot_ids: list[int], flt: QueueFilter) -> QuerySet[ReviewItem]:
    """The items of `bot_ids` matching `flt`, oldest first (ties by id): the queue's one order."""
    items = ReviewItem.objects.filter(bot_id__in=bot_ids, status=flt.status)
    if flt.bot_id:
        items = items.filter(bot_id=flt.bot_id)
    if flt.reason:
        items = items.filter(reasons__contains=[flt.reason])
    tz = timezone.get_current_timezone()
    if flt.since:
        items = items.filter(answered_at__gte=datetime.combine(flt.since, time.min, tz))
    if flt.until:
        items = items.filter(answered_at__lt=datetime.combine(flt.until + timedelta(days=1), time.min, tz))
    return items.order_by("answered_at", "id")


# The queue's order as one row comparison, so PostgreSQL walks the (bot, status, answered_at, id)
# index from the item on instead of testing an OR on every row (10,000 items: 28 -> 1 ms).
_ORDER_KEY = '("review_reviewitem"."answered_at", "review_reviewitem"."id")'


def _compared(items: QuerySet[ReviewItem], item: ReviewItem, operator: str) -> QuerySet[ReviewItem]:
    # Only our own constant and operator are inlined; the values are parameters.
    condition = RawSQL(f"{_ORDER_KEY} {operator} (%s, %s)", [item.answered_at, item.pk],  # noqa: S611
                       output_field=BooleanField())
    return items.filter(condition)


def _after(items: QuerySet[ReviewItem], item: ReviewItem) -> QuerySet[ReviewItem]:
    return _compared(items, item, ">")


def _before(items: QuerySet[ReviewItem], item: ReviewItem) -> QuerySet[ReviewItem]:
    return _compared(items, item, "<")


def reason_counts(items: QuerySet[ReviewItem]) -> dict[str, int]:
    """Items per reason, in one pass over the queue."""
    from django.db.models import Count

    codes = ReviewItem.Reason.values
    totals = items.aggregate(**{code: Count("id", filter=Q(reasons__contains=[code])) for code in codes})
    return {code: int(totals[code]) for code in ReviewItem.Reason.values}


def next_item(items: QuerySet[ReviewItem], item: ReviewItem | None) -> ReviewItem | None:
    rows = items if item is None else _after(items, item)
    return rows.select_related("bot").first()


def previous_item(items: QuerySet[ReviewItem], item: ReviewItem) -> ReviewItem | None:
    return _before(items, item).select_related("bot").order_by("-answered_at", "-id").first()


def position(items: QuerySet[ReviewItem], item: ReviewItem) -> int:
    """1-based place of `item` in the queue («3 из 12»); 0 when it is not (or no longer) in it."""
    return _before(items, item).count() + 1


def card(item: ReviewItem) -> dict[str, Any]:
    """Everything the queue page shows of one item, as JSON-ready values (texts are escaped by the
    page when it renders them: it sets textContent, never innerHTML)."""
    answer = chat_selectors.message_by_id(bot_id=item.bot_id, message_id=item.message_id)
    context = chat_selectors.answer_context(answer) if answer is not None else None
    cards = entry_cards(bot=item.bot, entry_ids=item.source_ids or item.culprit_ids)
    ordered = [cards[i] for i in dict.fromkeys([*item.culprit_ids, *item.source_ids]) if i in cards]
    return {
        "id": item.pk,
        "bot": {"id": item.bot_id, "name": item.bot.name},
        "reasons": [{"code": r, "label": str(ReviewItem.Reason(r).label)} for r in item.reasons],
        "answered_at": formats.date_format(timezone.localtime(item.answered_at), "SHORT_DATETIME_FORMAT"),
        "repeats": item.repeats,
        # The same question asked again in the conversation: counted on this item (review.services).
        "repeats_label": gettext("спросили ещё раз: %(n)d") % {"n": item.repeats - 1}
        if item.repeats > 1 else "",
        # Who asked, as the inbox names them (core/labels.py): their bubbles carry it.
        "visitor": answer.conversation.visitor_label if answer is not None else "",
        "before": [m.text for m in context.before] if context else [item.question],
        "after": context.after.text if context and context.after else "",
        "question": item.question,
        "answer": item.answer,
        "confidence": item.confidence,
        "confidence_shown": formats.number_format(item.confidence, 2) if item.confidence is not None else "",
        "sources": [
            {"title": c.title or c.url or f"#{c.entry_id}", "url": c.url, "kind": c.kind,
             "used": c.entry_id == item.cited_entry_id, "review_needed": c.review_needed, "active": c.active}
            for c in ordered
        ],
        "status": item.status,
        "decision": item.decision,
        "decision_label": str(ReviewItem.Decision(item.decision).label) if item.decision else "",
        "corrected_text": item.corrected_text,
        "decided_at": formats.date_format(timezone.localtime(item.decided_at), "SHORT_DATETIME_FORMAT")
        if item.decided_at else "",
    }


def labels_by_week(*, bot: Bot, since: datetime) -> dict[date, tuple[int, int]]:
    """Every decision is a label (docs/architecture.md): week of the answer -> (decided, «Всё верно»)."""
    from django.db.models import Count
    from django.db.models.functions import TruncWeek

    rows = (
        ReviewItem.objects.filter(bot=bot, status=ReviewItem.Status.DECIDED, answered_at__gte=since)
        .annotate(week=TruncWeek("answered_at")).values_list("week")
        .annotate(n=Count("id"), right=Count("id", filter=Q(decision=ReviewItem.Decision.CORRECT)))
        .values_list("week", "n", "right")
    )
    return {timezone.localtime(week).date(): (n, right) for week, n, right in rows}


def pending_count(*, bot: Bot) -> int:
    return ReviewItem.objects.filter(bot=bot, status=ReviewItem.Status.PENDING).count()


def review_items_of(*, bot: Bot) -> QuerySet[ReviewItem]:
    """The bot's review items, decided ones included, for the REST API (which pages and filters them)."""
    return ReviewItem.objects.filter(bot=bot).select_related("message")
