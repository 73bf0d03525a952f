"""E-mail to the operators when nobody has taken a waiting conversation in time (the bot's
«напомнить операторам через» setting); Celery beat calls `alert_waiting_send`."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from bots.models import Membership
from bots.selectors import member_emails
from chat import handoff, selectors
from chat.models import Conversation

logger = logging.getLogger("spravka.inbox")


def alert_recipients(conversation: Conversation) -> list[str]:
    """The bot's operators; its owners when it has none."""
    return member_emails(conversation.bot, role=Membership.Role.OPERATOR) or member_emails(
        conversation.bot, role=Membership.Role.OWNER
    )


def waiting_alert_send(*, conversation: Conversation) -> bool:
    """One e-mail (text + HTML, Russian) about one waiting conversation; False when nobody to tell."""
    recipients = alert_recipients(conversation)
    if not recipients:
        return False
    messages = selectors.transcript(conversation, limit=6)
    minutes = max(1, int((timezone.now() - (conversation.waiting_since or timezone.now())).total_seconds() // 60))
    context = {
        "conversation": conversation, "bot": conversation.bot, "messages": messages, "minutes": minutes,
        "url": settings.SPRAVKA_PUBLIC_URL + reverse("inbox:conversation", args=[conversation.pk]),
    }
    subject = _("Посетитель ждёт оператора %(minutes)s мин — %(bot)s") % {
        "minutes": minutes, "bot": conversation.bot.name,
    }
    email = EmailMultiAlternatives(
        subject=subject, body=render_to_string("inbox/email/waiting.txt", context), to=recipients,
    )
    email.attach_alternative(render_to_string("inbox/email/waiting.html", context), "text/html")
    email.send()
    return True


def alert_waiting() -> int:
    """E-mail about every conversation waiting past its bot's limit, once per wait."""
    sent = 0
    for conversation in selectors.waiting_longer_than_alert():
        if not handoff.conversation_claim_alert(conversation_id=conversation.pk):
            continue
        try:
            sent += waiting_alert_send(conversation=conversation)
        except OSError:  # SMTP down or refusing: try again on the next run
            logger.warning("waiting alert for conversation %s not sent", conversation.pk, exc_info=True)
            handoff.conversation_unclaim_alert(conversation_id=conversation.pk)
    return sent
