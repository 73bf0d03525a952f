"""The overview's numbers per operator: the visitors' stars (average and count, per week for the
chart), and how fast each operator's conversations went (first reply to the visitor's request for a
person, and resolution to the close), as medians so one forgotten conversation does not hide a good
week. Read through chat's selectors (chat/operator_numbers.py), scoped to the owner's bot.

Why the overview and not the members page: the overview is where an owner looks to see how things
go, with the period they picked and the other charts; the members page is where they change who
may do what."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bots.models import Bot
from bots.selectors import inbox_members
from chat import frames, presence
from chat.models import ConversationRating
from chat.operator_numbers import conversations_closed_by_operators, ratings_by_operator_week, recent_comments
from feedback.gaps import week_starts


def duration_text(seconds: float | None) -> str:
    """«45 с», «4 мин», «1 ч 5 мин»: short units read the same for any number; «—» when unknown."""
    if seconds is None:
        return "—"
    seconds = max(0, round(seconds))
    if seconds < 60:
        return _("%(seconds)s с") % {"seconds": seconds}
    minutes = round(seconds / 60)
    if minutes < 60:
        return _("%(minutes)s мин") % {"minutes": minutes}
    return _("%(hours)s ч %(minutes)s мин") % {"hours": minutes // 60, "minutes": minutes % 60}


@dataclass
class OperatorRow:
    name: str
    weekly_counts: list[int]
    weekly_sums: list[float]
    first_replies: list[float] = field(default_factory=list)
    resolutions: list[float] = field(default_factory=list)
    closed: int = 0
    sla_missed: int = 0

    @property
    def ratings(self) -> int:
        return sum(self.weekly_counts)

    @property
    def average(self) -> float | None:
        return sum(self.weekly_sums) / self.ratings if self.ratings else None

    @property
    def average_text(self) -> str:
        return formats.number_format(self.average, 1) if self.average is not None else "—"

    @property
    def weekly_averages(self) -> list[float | None]:
        return [round(s / n, 2) if n else None for s, n in zip(self.weekly_sums, self.weekly_counts, strict=True)]

    @property
    def ratings_text(self) -> str:
        return ngettext("%(count)s оценка", "%(count)s оценок", self.ratings) % {"count": self.ratings}

    @property
    def closed_text(self) -> str:
        return ngettext("%(count)s разговор завершён", "%(count)s разговоров завершено", self.closed) % {
            "count": self.closed}

    @property
    def first_reply_text(self) -> str:
        return duration_text(statistics.median(self.first_replies) if self.first_replies else None)

    @property
    def resolution_text(self) -> str:
        return duration_text(statistics.median(self.resolutions) if self.resolutions else None)

    @property
    def sla_missed_text(self) -> str:
        return ngettext("%(count)s ответ позже срока", "%(count)s ответов позже срока", self.sla_missed) % {
            "count": self.sla_missed}


@dataclass(frozen=True)
class TeamNow:
    """Who of the bot's owners and operators is on hand now (chat/presence.py), and how the bot gives
    conversations out: the overview's line above the operators' numbers."""

    on_hand: list[str]
    away: list[str]
    assignment: str
    open_limit: int

    @property
    def in_turn(self) -> bool:
        return self.assignment == Bot.Assignment.IN_TURN


def team_now(bot: Bot) -> TeamNow:
    """Two queries: the members, and those on hand."""
    here = set(presence.on_hand(bot).values_list("pk", flat=True))
    members = list(inbox_members(bot.pk))
    return TeamNow(on_hand=[frames.display_name(u) for u in members if u.pk in here],
                   away=[frames.display_name(u) for u in members if u.pk not in here],
                   assignment=bot.assignment, open_limit=bot.operator_open_limit)


@dataclass(frozen=True)
class OperatorNumbers:
    weeks: list[str]
    rows: list[OperatorRow]
    sla_minutes: int
    comments: list[ConversationRating] = field(default_factory=list)
    now: TeamNow | None = None

    @property
    def chart(self) -> dict[str, Any]:
        """The stars chart's data: one line per operator, the week's average (null: no rating)."""
        return {
            "weeks": self.weeks, "label": _("Средняя оценка, звёзд из 5"),
            "operators": [{"name": row.name, "averages": row.weekly_averages, "counts": row.weekly_counts}
                          for row in self.rows if row.ratings],
        }


def operator_numbers(*, bot: Bot, days: int, weeks: int) -> OperatorNumbers:
    """Per operator of `bot`: the stars of the last `weeks` weeks, and the times of the conversations
    they closed in the last `days` days, and who is on hand now. Four queries."""
    starts = week_starts(weeks)
    rows: dict[Any, OperatorRow] = {}

    def row(operator_id: int | None, name: str) -> OperatorRow:
        key = operator_id if operator_id is not None else f"name:{name}"
        if key not in rows:
            # No operator and no name: a conversation the bot resolved alone (the bot's csat_after_bot);
            # a deleted operator's ratings keep their name.
            rows[key] = OperatorRow(name=name or _("Бот, без оператора"), weekly_counts=[0] * weeks,
                                    weekly_sums=[0.0] * weeks)
        return rows[key]

    for week in ratings_by_operator_week(bot=bot, starts=starts):
        target = row(week.operator_id, week.operator_name)
        target.weekly_counts[week.week] += week.count
        target.weekly_sums[week.week] += week.average * week.count
    since = timezone.now() - timedelta(days=days)
    sla = timedelta(minutes=bot.operator_sla_minutes) if bot.operator_sla_minutes else None
    for closed in conversations_closed_by_operators(bot=bot, since=since):
        target = row(closed.operator_id, closed.operator_name)
        target.closed += 1
        if closed.requested_at is None:
            continue
        target.resolutions.append((closed.closed_at - closed.requested_at).total_seconds())
        if closed.first_reply_at is not None:
            waited = closed.first_reply_at - closed.requested_at
            target.first_replies.append(waited.total_seconds())
            if sla is not None and waited > sla:
                target.sla_missed += 1
    labels = [formats.date_format(s.date(), "MONTH_DAY_FORMAT") for s in starts]
    return OperatorNumbers(weeks=labels, rows=sorted(rows.values(), key=lambda r: r.name.lower()),
                           sla_minutes=bot.operator_sla_minutes, comments=recent_comments(bot=bot, since=since),
                           now=team_now(bot))
