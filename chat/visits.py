"""Where a visitor is, as the widget reports it (`page` frames), and the invitations that follow
(behavior/invitations.py decides which rule; this module knows the conversations).

What must stay true:
- The operators' inbox hears the visitor's current page (the open conversation's page_url and
  page_title, published after commit) whenever it changes, and only then.
- An invitation never shows over an open conversation: one that holds any message.
- Page reports are counted (kind "page"); past the limit they change nothing and say nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from behavior import invitations
from bots.models import Bot
from chat import events, frames, selectors
from chat.models import Conversation, Message
from chat.writes import check_visitor_id, clean_line, clean_page_url
from core import ratelimit

MAX_TITLE = 300


def page_report(
    *, bot: Bot, visitor_id: str, page: frames.Page, user_agent: str = "", ip: str | None = None,
    conversation: Conversation | None = None,
) -> dict[str, Any] | None:
    """Record that `visitor_id` is on `page` and return the `invite` frame to send, if a rule
    fits; None otherwise (and when the visitor reports pages faster than the limit)."""
    check_visitor_id(visitor_id)
    try:
        ratelimit.check("page", bot_id=bot.pk, visitor_id=visitor_id, ip=ip)
    except ratelimit.OverLimit:
        return None
    url, title = clean_page_url(page.url), clean_line(page.title)[:MAX_TITLE]
    if conversation is None or conversation.state == Conversation.State.CLOSED:
        conversation = selectors.open_conversation(bot=bot, visitor_id=visitor_id)
    talking = False
    if conversation is not None:
        _current_page(conversation, url, title)
        talking = Message.objects.filter(conversation=conversation).exists()
    visit = invitations.Visit(
        url=page.url, user_agent=user_agent, open_conversation=talking,
        returning=invitations.visitor_returning(bot_id=bot.pk, visitor_id=visitor_id),
    )
    rule = invitations.invitation_for(bot=bot, visitor_id=visitor_id, visit=visit)
    return invitations.invitation_frame(rule) if rule is not None else None


def _current_page(conversation: Conversation, url: str, title: str) -> None:
    if (conversation.page_url, conversation.page_title) == (url, title):
        return
    with transaction.atomic():
        conversation.page_url, conversation.page_title = url, title
        conversation.save(update_fields=["page_url", "page_title", "updated_at"])
        events.publish(conversation)


def invite_shown(*, bot: Bot, visitor_id: str, rule_id: int, page_url: str = "") -> bool:
    """The widget showed an invitation: recorded once per rule per window. False for a rule that is
    not this bot's (or is switched off)."""
    check_visitor_id(visitor_id)
    shown = invitations.invitation_show_record(bot=bot, visitor_id=visitor_id, rule_id=rule_id,
                                               page_url=clean_page_url(page_url))
    return shown is not None
