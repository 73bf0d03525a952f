"""Proactive invitations (the «триггеры»): which of the owner's rules the widget should show
a visitor on a page, the record of a show, and its conversion into a conversation. The only writer
of InvitationRule's shows (InvitationShow).

What must stay true:
- Never over an open conversation: the chat decides that (it knows its rows) and says so here.
- Once per visitor per rule per `once_per_days`: a show in that window keeps the rule quiet,
  however many tabs or reloads ask again.
- Rules and shows are the bot's own: another bot's rule id is "no such rule".
- «Returning» is read from Redis (the first time a visitor was seen by a bot, kept a year);
  Redis away means "not returning", never an error a visitor would see.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Final
from urllib.parse import urlsplit

from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils import timezone
from redis.exceptions import RedisError

from behavior.models import InvitationRule, InvitationShow
from bots.models import Bot

logger = logging.getLogger("spravka.behavior")

RETURNING_AFTER: Final = 30 * 60  # seconds since the first visit: a later page view is another visit
SEEN_FOR: Final = 365 * 24 * 3600
CONVERSION_WINDOW: Final = timedelta(hours=24)  # a conversation started this long after a show counts for it
_MOBILE: Final = re.compile(r"Mobi|Android|iPhone|iPod|Windows Phone|Opera Mini", re.I)


@dataclass(frozen=True)
class Visit:
    """One page view of a visitor, as the chat saw it."""

    url: str
    user_agent: str = ""
    open_conversation: bool = False  # the visitor talks with the bot or an operator right now
    returning: bool = False

    @property
    def mobile(self) -> bool:
        return bool(_MOBILE.search(self.user_agent))


def pattern_matches(pattern: str, url: str) -> bool:
    """A rule's page pattern against a page: «*» is any run of characters, the rest literal; a
    pattern that starts with http(s):// is matched against the whole address, any other against
    its path (with the query, when the pattern has a «?»). Case-sensitive, as paths are."""
    pattern = pattern.strip()
    if not pattern:
        return True
    if pattern.startswith(("http://", "https://")):
        target = url
    else:
        parts = urlsplit(url)
        target = parts.path or "/"
        if "?" in pattern and parts.query:
            target = f"{target}?{parts.query}"
    regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(regex, target) is not None


def visitor_returning(*, bot_id: int, visitor_id: str) -> bool:
    """Whether the visitor was first seen by this bot more than RETURNING_AFTER ago (and remember
    now as the first time when they were never seen)."""
    key = f"behavior:seen:{bot_id}:{visitor_id}"
    now = int(time.time())
    try:
        if cache.add(key, now, SEEN_FOR):
            return False
        first = cache.get(key)
    except RedisError as exc:
        logger.warning("returning visitor unknown, Redis is away: %s", exc)
        return False
    return isinstance(first, int) and now - first >= RETURNING_AFTER


def invitation_for(*, bot: Bot, visitor_id: str, visit: Visit) -> InvitationRule | None:
    """The first of the bot's enabled rules (in the owner's order) that fits this page view and
    was not shown to this visitor within its `once_per_days`; None when none does. Two queries."""
    if visit.open_conversation:
        return None
    fitting = [
        rule for rule in InvitationRule.objects.filter(bot=bot, enabled=True).order_by("id")
        if pattern_matches(rule.url_pattern, visit.url)
        and (rule.show_on_mobile or not visit.mobile)
        and (visit.returning or not rule.returning_only)
    ]
    if not fitting:
        return None
    last_shown = dict(
        InvitationShow.objects.filter(bot=bot, visitor_id=visitor_id, rule__in=fitting)
        .values("rule_id").annotate(last=Max("shown_at")).values_list("rule_id", "last")
    )
    now = timezone.now()
    for rule in fitting:
        shown = last_shown.get(rule.pk)
        if shown is None or shown < now - timedelta(days=rule.once_per_days):
            return rule
    return None


def invitation_frame(rule: InvitationRule) -> dict[str, object]:
    """What the widget needs to show a rule: its text and when (after the seconds, on leaving)."""
    return {"type": "invite", "rule": rule.pk, "text": rule.text, "after_seconds": rule.seconds_on_page,
            "on_leave": rule.on_leave}


def invitation_show_record(*, bot: Bot, visitor_id: str, rule_id: int, page_url: str = "") -> InvitationShow | None:
    """The widget showed rule `rule_id` to the visitor: one row per rule per window (a second tab
    showing it too gets the first row back). None when the bot has no such enabled rule."""
    rule = InvitationRule.objects.filter(bot=bot, pk=rule_id, enabled=True).first()
    if rule is None:
        return None
    since = timezone.now() - timedelta(days=rule.once_per_days)
    recent = InvitationShow.objects.filter(bot=bot, rule=rule, visitor_id=visitor_id, shown_at__gte=since).first()
    if recent is not None:
        return recent
    return InvitationShow.objects.create(bot=bot, rule=rule, visitor_id=visitor_id, page_url=page_url[:500])


def invitation_convert(*, bot_id: int, visitor_id: str, conversation_id: int) -> bool:
    """The visitor started a conversation: the latest show of the last CONVERSION_WINDOW that has
    not converted yet converts into it. True when one did. One UPDATE."""
    since = timezone.now() - CONVERSION_WINDOW
    latest = (
        InvitationShow.objects.filter(bot_id=bot_id, visitor_id=visitor_id, shown_at__gte=since,
                                      converted_at__isnull=True)
        .order_by("-shown_at").values("pk")[:1]
    )
    return bool(InvitationShow.objects.filter(pk__in=latest).update(
        converted_at=timezone.now(), conversation_id=conversation_id))


@dataclass(frozen=True)
class RuleCounts:
    shown: int
    converted: int

    @property
    def rate(self) -> float | None:
        return self.converted / self.shown if self.shown else None


def invitation_counts(rules: list[InvitationRule]) -> dict[int, RuleCounts]:
    """Shows and conversions per rule, in one query."""
    rows = (
        InvitationShow.objects.filter(rule__in=rules).values("rule_id")
        .annotate(shown=Count("id"), converted=Count("id", filter=Q(converted_at__isnull=False)))
    )
    return {row["rule_id"]: RuleCounts(row["shown"], row["converted"]) for row in rows}
