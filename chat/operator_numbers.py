"""Reads for the owner's numbers per operator: the visitors' stars per operator and week, and how
long each conversation an operator closed took (first reply, resolution). Scoped to one bot; the
owner's pages (owner/dashboard/operators.py) read these, never the tables.

What must stay true:
- Every query filters by the bot first (an index that starts with it): another tenant's rows never
  count.
- A rating counts for the operator stored with it (`ConversationRating.operator`, the one who
  closed the conversation), by name too, so a deleted account's numbers keep their name.
- First reply is measured from the latest request for a person (the system note of the handoff)
  to the first operator message after it; resolution from that request to the close. A conversation
  an operator joined unasked has no request, so no times (its rating still counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.db.models import Avg, Count, DateTimeField, F, Func, IntegerField, OuterRef, Subquery, Value

from bots.models import Bot
from chat.models import Conversation, ConversationRating, Message


@dataclass(frozen=True)
class WeekRatings:
    operator_id: int | None
    operator_name: str
    week: int  # 0-based index into the week starts asked for
    count: int
    average: float


def ratings_by_operator_week(*, bot: Bot, starts: Sequence[datetime]) -> list[WeekRatings]:
    """Stars per operator and week since starts[0] (ascending week starts): one aggregate."""
    bucket = Func(F("created_at"), Value(list(starts), output_field=ArrayField(DateTimeField())),
                  function="width_bucket", output_field=IntegerField())
    rows = (ConversationRating.objects.filter(bot=bot, created_at__gte=starts[0])
            .annotate(week=bucket).values("operator_id", "operator_name", "week")
            .annotate(n=Count("id"), average=Avg("stars")).order_by())
    return [WeekRatings(r["operator_id"], r["operator_name"], r["week"] - 1, r["n"], float(r["average"]))
            for r in rows]


def recent_comments(*, bot: Bot, since: datetime, limit: int = 5) -> list[ConversationRating]:
    """The latest ratings of `bot` since `since` that came with words, newest first."""
    return list(ConversationRating.objects.filter(bot=bot, created_at__gte=since).exclude(comment="")
                .order_by("-created_at")[:limit])


@dataclass(frozen=True)
class ClosedByOperator:
    operator_id: int
    operator_name: str
    requested_at: datetime | None
    first_reply_at: datetime | None
    closed_at: datetime


def conversations_closed_by_operators(*, bot: Bot, since: datetime) -> list[ClosedByOperator]:
    """Conversations of `bot` an operator closed since `since`, with when a person was last asked
    for and when the closing operator first wrote after it (one query with two subqueries)."""
    request = (Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.SYSTEM,
                                      llm_meta__has_key="handoff_reason")
               .exclude(llm_meta__contains={"out_of_hours": True}).order_by("-id").values("created_at")[:1])
    first_reply = (Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.OPERATOR,
                                          created_at__gte=OuterRef("requested_at"))
                   .order_by("id").values("created_at")[:1])
    rows = (Conversation.objects.filter(bot=bot, closed_at__gte=since, closed_by__isnull=False)
            .annotate(requested_at=Subquery(request))
            .annotate(first_reply_at=Subquery(first_reply))
            .values_list("closed_by_id", "closed_by__first_name", "closed_by__last_name", "closed_by__username",
                         "requested_at", "first_reply_at", "closed_at"))
    return [
        ClosedByOperator(operator_id, f"{first} {last}".strip() or str(username).split("@", 1)[0],
                         requested, replied, closed)
        for operator_id, first, last, username, requested, replied, closed in rows
        if closed is not None  # closed_at is set with every close (chat/states.py)
    ]
