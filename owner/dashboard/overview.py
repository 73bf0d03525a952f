"""The numbers of one bot's overview page, read through the lower apps' selectors (chat, feedback,
review, knowledge), never their tables. Every figure is one aggregate query on an index that
starts with the bot, so the page costs the same dozen small queries whether the bot has ten
conversations or fifty thousand (bench/dashboard_pages.py measures it).

The cards are counted live from the chat as things happen: conversations, the ones the bot answered
on its own, the ones handed to a person, its no-answers, thumbs-down and leads. The outcome chart
reads the feedback layer's rows, which settle later (`feedback.tasks.outcomes_refresh_all` writes
them every half hour for conversations that went quiet): the page says how many are still
unsettled, and Gaps group the no-answers on the same schedule."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from django.utils import timezone

from bots.models import Bot
from chat.models import Conversation
from chat.selectors import activity_counts, conversations_by_channel, live_counts
from feedback.gaps import gap_list
from feedback.outcomes import outcome_counts, weekly_stats
from knowledge.selectors import entries_of, sources_of
from review.selectors import pending_count

PERIODS: Final = (7, 30, 90)
DEFAULT_PERIOD: Final = 30
TOP_GAPS: Final = 5


def period_days(value: Any) -> int:
    """The period from the query string: one of PERIODS, anything else is the default."""
    try:
        days = int(value)
    except (TypeError, ValueError):
        return DEFAULT_PERIOD
    return days if days in PERIODS else DEFAULT_PERIOD


def weeks_for(days: int) -> int:
    """Weeks the charts show for a period: the period's weeks plus the current one, at least two."""
    return max(2, -(-days // 7) + 1)


@dataclass(frozen=True)
class Overview:
    days: int
    conversations: int
    answered: int
    handed_off: int
    leads: int
    unanswered: int  # the bot's honest no-answers
    unsettled: int  # conversations whose outcome is not written yet
    thumbs_down: int
    review_pending: int
    entries: int
    sources: int
    charts: dict[str, Any]
    gaps: list[dict[str, Any]]
    # Conversations per channel ({"widget": 12, "telegram": 3}); shown when a messenger has some.
    by_channel: dict[str, int] = field(default_factory=dict)

    @property
    def channels_shown(self) -> list[tuple[str, int]]:
        """(the channel's name, its conversations), the widget first, when any came from a messenger."""
        if not any(count for channel, count in self.by_channel.items() if channel != Conversation.Channel.WIDGET):
            return []
        return [(str(label), self.by_channel.get(value, 0)) for value, label in Conversation.Channel.choices
                if self.by_channel.get(value)]

    @property
    def has_knowledge(self) -> bool:
        return bool(self.entries or self.sources)

    @property
    def answered_share(self) -> int | None:
        """Per cent of the period's finished conversations that the bot answered on its own."""
        finished = self.answered + self.handed_off
        return round(100 * self.answered / finished) if finished else None


def bot_overview(*, bot: Bot, days: int) -> Overview:
    since = timezone.now() - timedelta(days=days)
    activity = activity_counts(bot=bot, since=since)
    live = live_counts(bot=bot, since=since)
    settled = sum(outcome_counts(bot=bot, since=since).values())
    stats = weekly_stats(bot=bot, weeks=weeks_for(days))
    return Overview(
        days=days,
        conversations=activity["conversations"],
        answered=live["answered"],
        handed_off=live["handed_off"],
        leads=activity["leads"],
        unanswered=live["unanswered"],
        unsettled=max(0, activity["conversations"] - settled),
        thumbs_down=activity["thumbs_down"],
        review_pending=pending_count(bot=bot),
        entries=entries_of(bot=bot).filter(active=True).count(),
        sources=sources_of(bot=bot).count(),
        charts={**stats, "has_labels": any(stats["decided"]), "has_gaps": any(stats["gaps"]),
                "has_outcomes": any(sum(o["counts"]) for o in stats["outcomes"])},
        gaps=gap_list(bot_ids=[bot.pk], bot_id=bot.pk, limit=TOP_GAPS),
        by_channel=conversations_by_channel(bot=bot, since=since),
    )


@dataclass(frozen=True)
class BotSummary:
    bot: Bot
    conversations: int
    leads: int
    review_pending: int


def bot_summaries(*, bots: list[Bot], days: int = 7) -> list[BotSummary]:
    """The key numbers of each bot on the «your bots» list (a few counts per bot; owners have few)."""
    since = timezone.now() - timedelta(days=days)
    rows = []
    for bot in bots:
        activity = activity_counts(bot=bot, since=since)
        rows.append(BotSummary(bot=bot, conversations=activity["conversations"], leads=activity["leads"],
                               review_pending=pending_count(bot=bot)))
    return rows
