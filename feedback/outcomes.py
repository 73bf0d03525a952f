"""Conversation outcomes and accuracy over time (outcome attribution, the Feedback layer; every review decision
is a label). Outcomes are derived from the chat's facts; `outcomes_refresh` is idempotent."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db.models import Count, DateTimeField, F, Func, IntegerField, Value
from django.utils import formats, timezone

from bots.models import Bot
from chat import csat as chat_csat
from chat import selectors as chat_selectors
from feedback.gaps import week_starts
from feedback.models import GapQuestion, Outcome
from review.selectors import labels_by_week

LOOKBACK: Final = timedelta(days=35)
Kind = Outcome.Kind


def outcome_of(facts: chat_selectors.ConversationFacts) -> str | None:
    """One conversation's outcome, the most telling first; None when the bot never answered."""
    if facts.lead or facts.outcome == "lead":
        return Kind.LEAD
    if facts.operator_messages and facts.state == "closed":
        return Kind.OPERATOR_CLOSED
    if facts.handed_off or facts.operator_messages:
        return Kind.HANDED_OFF
    if facts.last_answer_unanswered:
        return Kind.ABANDONED
    if facts.bot_answers:
        return Kind.ANSWERED
    return None


def outcomes_refresh(*, bot: Bot, now: Any = None) -> int:
    """Outcomes of the conversations that went quiet (no message for FEEDBACK_IDLE_MINUTES) in the
    last five weeks; returns how many were written."""
    now = now or timezone.now()
    quiet = now - timedelta(minutes=settings.FEEDBACK_IDLE_MINUTES)
    facts = chat_selectors.conversation_facts(bot=bot, updated_before=quiet, updated_after=now - LOOKBACK)
    ids = [f.conversation_id for f in facts]
    existing = {o.conversation_id: o for o in Outcome.objects.filter(bot=bot, conversation_id__in=ids)}
    new, changed = [], []
    for fact in facts:
        kind = outcome_of(fact)
        if kind is None:
            continue
        row = existing.get(fact.conversation_id)
        if row is None:
            new.append(Outcome(bot=bot, conversation_id=fact.conversation_id, kind=kind, started_at=fact.started_at))
        elif row.kind != kind:
            row.kind = kind
            changed.append(row)
    Outcome.objects.bulk_create(new, ignore_conflicts=True)
    Outcome.objects.bulk_update(changed, ["kind", "updated_at"])
    if bot.csat_after_bot:  # the owner wants stars for these too: the chat closes each and asks
        for fact in facts:
            if fact.state == "bot" and outcome_of(fact) == Kind.ANSWERED:
                chat_csat.conversation_resolved_by_bot(conversation_id=fact.conversation_id)
    return len(new) + len(changed)


def week_bucket(field: str, starts: list[Any]) -> Func:
    """Which of `starts` (ascending week starts) a row's time falls in, 1-based, as PostgreSQL's
    width_bucket: comparisons with fixed instants instead of a time-zone conversion and a
    date_trunc per row, three times cheaper at 50k conversations (bench/dashboard_pages.py).
    Rows before starts[0] are 0: filter them out first."""
    return Func(F(field), Value(list(starts), output_field=ArrayField(DateTimeField())), function="width_bucket",
                output_field=IntegerField())


def weekly_stats(*, bot: Bot, weeks: int = 8) -> dict[str, Any]:
    """The charts' data: accuracy, gaps and outcomes per week (oldest first, this week last)."""
    starts = week_starts(weeks)
    keys = [s.date() for s in starts]
    labels = labels_by_week(bot=bot, since=starts[0])
    gap_rows = (GapQuestion.objects.filter(bot=bot, asked_at__gte=starts[0])
                .annotate(week=week_bucket("asked_at", starts)).values_list("week").annotate(n=Count("id"))
                .values_list("week", "n"))
    gaps = {keys[week - 1]: n for week, n in gap_rows}
    outcome_rows = (Outcome.objects.filter(bot=bot, started_at__gte=starts[0])
                    .annotate(week=week_bucket("started_at", starts)).values_list("week", "kind")
                    .annotate(n=Count("id")).values_list("week", "kind", "n"))
    outcomes: dict[str, list[int]] = {kind: [0] * weeks for kind in Kind.values}
    for week, kind, n in outcome_rows:
        outcomes[kind][week - 1] = n
    accuracy = [round(labels[k][1] / labels[k][0], 3) if labels.get(k, (0, 0))[0] else None for k in keys]
    return {
        # «23 ноября» / "November 23": the page's language, the month as a date takes it (assistant/formats).
        "weeks": [formats.date_format(k, "MONTH_DAY_FORMAT") for k in keys],
        "accuracy": accuracy,
        "decided": [labels.get(k, (0, 0))[0] for k in keys],
        "gaps": [gaps.get(k, 0) for k in keys],
        "outcomes": [
            {"kind": kind, "label": str(Kind(kind).label), "counts": counts} for kind, counts in outcomes.items()
        ],
    }


def outcome_counts(*, bot: Bot, since: Any) -> dict[str, int]:
    """{outcome kind: conversations} started since `since`, every kind present (zero when none);
    one aggregate on the (bot, started_at) index."""
    counts = dict.fromkeys(Kind.values, 0)
    rows = Outcome.objects.filter(bot=bot, started_at__gte=since).values_list("kind").annotate(n=Count("id"))
    counts.update({kind: n for kind, n in rows})
    return counts
