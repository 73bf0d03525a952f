"""The visitor's rating of a finished conversation (CSAT): asked when an operator closes it (and,
when the bot's `csat_after_bot` is on, when a conversation the bot resolved alone is closed), given
as 1–5 stars and optional words. This module is the one writer of `ConversationRating`.

What must stay true:
- One rating per conversation: a second one is refused (`csat_already`) and the first stays; the
  unique conversation column decides two tabs racing.
- A rating is taken only for a closed conversation of the socket's own bot and visitor: another
  visitor's or another bot's conversation reads as not found, an open one is refused; nothing is
  stored on any refusal.
- The operator who closed the conversation (`closed_by`, else the one who held it) is stored with
  the rating, by row and by name, so the owner's numbers per operator survive a deleted account.
- The ask is published after commit, and only to a widget (a messenger has no stars to press).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from chat import events, frames, services, writes
from chat.exceptions import CsatRefused
from chat.models import Conversation, ConversationRating

MAX_COMMENT: Final = frames.MAX_CSAT_COMMENT
OUTCOME_RESOLVED_BY_BOT: Final = "resolved_by_bot"
STARS: Final = range(1, 6)
# How long a finished conversation still asks for its stars when the visitor comes back (a reload,
# another page of the site): the ask is a frame, gone with the page that got it.
STILL_ASKED: Final = timedelta(hours=24)


def csat_wanted(conversation: Conversation) -> bool:
    """Whether closing `conversation` asks its visitor for stars: a widget's conversation an operator
    took part in, or any the bot resolved when the owner asks for those too."""
    if conversation.channel != Conversation.Channel.WIDGET:
        return False
    return bool(conversation.closed_by_id or conversation.assigned_to_id or conversation.bot.csat_after_bot)


def csat_still_asked(*, bot_id: int, visitor_id: str) -> int | None:
    """The visitor's conversation that still waits for its stars, if any: their latest one, closed
    within STILL_ASKED, that asked for them (`csat_wanted`) and has none. One indexed query."""
    wanted = Q(closed_by__isnull=False) | Q(assigned_to__isnull=False) | Q(bot__csat_after_bot=True)
    latest = (
        Conversation.objects.filter(bot_id=bot_id, visitor_id=visitor_id, state=Conversation.State.CLOSED,
                                    channel=Conversation.Channel.WIDGET, closed_at__gte=timezone.now() - STILL_ASKED)
        .filter(wanted, rating__isnull=True).order_by("-closed_at").values_list("pk", flat=True).first()
    )
    return latest


def csat_ask_on_commit(conversation: Conversation) -> None:
    """After commit, the visitor's open widgets show the stars for this conversation."""
    if csat_wanted(conversation):
        events.publish_csat_ask(conversation.pk)


def conversation_resolved_by_bot(*, conversation_id: int) -> bool:
    """A conversation the bot answered on its own went quiet (feedback's outcome «answered»): with
    the bot's `csat_after_bot` on, it is closed (the visitor's next message starts a new one) and
    the visitor's open widget asks for stars. False, nothing changed, when the option is off or the
    conversation is no longer the bot's alone (a person asked for or present, or closed)."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if conversation.state != Conversation.State.BOT or not conversation.bot.csat_after_bot:
            return False
        services.close_locked(conversation, outcome=OUTCOME_RESOLVED_BY_BOT)
        csat_ask_on_commit(conversation)
    return True


def csat_submit(
    *, bot_id: int, visitor_id: str, conversation_id: int, stars: int, comment: str = ""
) -> ConversationRating:
    """Store the visitor's rating once. CsatRefused (with its reason's text) for stars outside 1–5, a
    comment over MAX_COMMENT characters, a conversation that is not this visitor's of this bot, one
    not closed yet, or one rated already; nothing is stored then."""
    if isinstance(stars, bool) or not isinstance(stars, int) or stars not in STARS:
        raise CsatRefused(key="csat_stars", field="stars")
    comment = writes.clean_text(comment) if comment and comment.strip() else ""
    if len(comment) > MAX_COMMENT:
        raise CsatRefused(key="csat_comment", field="comment", limit=MAX_COMMENT)
    conversation = (
        Conversation.objects.select_related("closed_by", "assigned_to")
        .filter(pk=conversation_id, bot_id=bot_id, visitor_id=visitor_id).first()
    )
    if conversation is None:
        raise CsatRefused(key="csat_not_found")
    if conversation.state != Conversation.State.CLOSED:
        raise CsatRefused(key="csat_not_closed")
    writes.rate_check("rating", bot_id=bot_id, visitor_id=visitor_id, ip=conversation.last_ip)
    operator: Any = conversation.closed_by or conversation.assigned_to
    try:
        with transaction.atomic():
            return ConversationRating.objects.create(
                bot_id=bot_id, conversation=conversation, operator=operator,
                operator_name=frames.display_name(operator) if operator is not None else "",
                stars=stars, comment=comment,
            )
    except IntegrityError:
        raise CsatRefused(key="csat_already") from None
