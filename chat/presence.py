"""Whether an operator is on hand: the one module that writes `chat.OperatorPresence`.

An operator is on hand for a bot while they have not said «Отошёл(ла)» and an inbox tab of theirs
was open within the bot's `away_after_minutes`: every open tab says so when it connects, once a
minute while open (its `ping`), and when it closes (inbox/consumers.py). Nobody has to remember
to go away at the end of the day: closing the inbox is enough. The handoff reads it: with nobody on
hand the visitor hears so at once, with the contact form (`services._handoff`); the inbox gives
waiting conversations out in turn among those on hand (inbox/assignment.py).

What must stay true:
- Saying «Отошёл(ла)» holds until the operator says «На месте» again; an open tab never undoes it.
- One statement per write (an upsert): a tab's pings never race its own first visit.
- `on_hand` names only active owners and operators of that bot (`bots.selectors.inbox_members`):
  another bot's operator is never given one of its conversations.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from bots.models import Bot
from bots.selectors import inbox_members
from chat.models import OperatorPresence as Presence


def _upsert(user: Any, **fields: Any) -> None:
    Presence.objects.bulk_create(
        [Presence(user_id=user.pk, **fields)], update_conflicts=True, unique_fields=["user"],
        update_fields=list(fields),
    )


def presence_seen(user: Any) -> None:
    """An inbox tab of `user` is open now (or has just closed)."""
    _upsert(user, seen_at=timezone.now())


def presence_away_set(user: Any, *, away: bool) -> None:
    """«Отошёл(ла)» (away=True) or «На месте» (away=False), said by the operator; the tab that says
    it is open, so it counts as seen too."""
    _upsert(user, away=bool(away), seen_at=timezone.now())


def presence_assigned(user: Any) -> None:
    """`user` has just been given a conversation in turn: the next one goes to someone else."""
    Presence.objects.filter(user_id=user.pk).update(assigned_at=timezone.now())


def is_away(user: Any) -> bool:
    """Whether `user` said «Отошёл(ла)» (and has not come back)."""
    return Presence.objects.filter(user_id=user.pk, away=True).exists()


def on_hand(bot: Bot) -> QuerySet[Any]:
    """The bot's owners and operators on hand now, whoever was given a conversation in turn longest
    ago first (never given one: first of all)."""
    fresh = timezone.now() - timedelta(minutes=bot.away_after_minutes)
    return inbox_members(bot.pk).filter(operator_presence__away=False, operator_presence__seen_at__gte=fresh).order_by(
        F("operator_presence__assigned_at").asc(nulls_first=True), "pk"
    )


# Other ways an operator hears at once that a visitor waits, registered at start by the apps above
# chat (messengers/apps.py: operators who linked their Telegram). Each says, for one bot, whether
# someone not away would be told now; a visitor is told «nobody is there» only when none would.
_ELSEWHERE: list[Callable[[Bot], bool]] = []


def reached_elsewhere_register(check: Callable[[Bot], bool]) -> None:
    """Add a way operators are reached outside the inbox (once, however often an app starts)."""
    if check not in _ELSEWHERE:
        _ELSEWHERE.append(check)


def said_away() -> QuerySet[Any]:
    """The ids of the users who said «Отошёл(ла)», as a subquery for the registered checks."""
    return Presence.objects.filter(away=True).values("user_id")


def anyone_on_hand(bot: Bot) -> bool:
    """Whether any of the bot's owners and operators is on hand now: in the inbox, or reached at once
    elsewhere (`reached_elsewhere_register`) without having said they are away."""
    return on_hand(bot).exists() or any(check(bot) for check in _ELSEWHERE)


def away_ids(bot: Bot) -> set[int]:
    """Which of the bot's owners and operators are not on hand now (for the transfer list)."""
    members = set(inbox_members(bot.pk).values_list("pk", flat=True))
    return members - set(on_hand(bot).values_list("pk", flat=True))
