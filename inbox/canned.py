"""Canned replies: the one module that writes a `CannedReply` (tests/test_writers.py), and the
reads the inbox needs. The owner writes them in the admin (inbox/admin.py calls `canned_reply_save`
and `canned_reply_delete`); operators only read them and count their use.

What must stay true:
- Every read is scoped by bot: an operator gets their conversation's bot's replies, and another
  bot's reply id is `NotFound`, exactly like one that does not exist.
- A use is counted once per operator message sent from the reply: a resent message (the same
  client_msg_id) is not counted again (`canned_message_send`).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext_noop

from chat import handoff, selectors
from chat.exceptions import NotFound
from chat.models import Message
from core.labels import visitor_label
from inbox.models import CannedReply

# Marked, not translated here: the operator socket says it in its user's language.
NOT_FOUND = gettext_noop("Шаблон ответа не найден: возможно, его удалили или он относится к другому боту.")
OPERATOR, VISITOR = "{оператор}", "{посетитель}"


def canned_reply_save(*, canned_reply: CannedReply) -> CannedReply:
    """Store a reply the owner wrote, after the model's own checks (length, shortcut, unique per
    bot): a 50 KB text is a ValidationError with a readable message and nothing is written."""
    canned_reply.full_clean()
    canned_reply.save()
    return canned_reply


def canned_reply_delete(*, canned_reply: CannedReply) -> None:
    canned_reply.delete()


def canned_reply_count_use(*, reply_id: int) -> None:
    """One more message sent from the reply (one UPDATE; concurrent uses never lose a count)."""
    CannedReply.objects.filter(pk=reply_id).update(uses=F("uses") + 1)


def canned_reply_of_bot(*, bot_id: int, reply_id: int) -> CannedReply:
    """The reply if it belongs to `bot_id`, else NotFound (never a hint that it exists)."""
    found = CannedReply.objects.filter(bot_id=bot_id, pk=reply_id).first()
    if found is None:
        raise NotFound(NOT_FOUND)
    return found


def fill(text: str, *, operator_name: str, visitor_name: str) -> str:
    """The reply as the operator's composer shows it: {оператор} and {посетитель} filled in."""
    return text.replace(OPERATOR, operator_name).replace(VISITOR, visitor_name)


def canned_replies_for(conversation: Any, *, operator_name: str) -> list[dict[str, Any]]:
    """The replies of the conversation's bot, filled in for it, as the inbox page offers them.
    The visitor is named by the name they left, else as every inbox names a visitor («Посетитель»)."""
    visitor = visitor_label(name=conversation.visitor_name)
    return [
        {"id": r.pk, "shortcut": r.shortcut, "title": r.title,
         "text": fill(r.text, operator_name=operator_name, visitor_name=visitor)}
        for r in CannedReply.objects.filter(bot_id=conversation.bot_id).order_by("shortcut")
    ]


def canned_message_send(*, conversation: Any, operator: Any, frame: Any) -> Message:
    """An operator message made from canned reply `frame.canned_id` (edited or not): the reply must
    be the conversation's bot's (else NotFound, and nothing is sent); its use is counted once, when
    the message is first stored, in the same transaction."""
    with transaction.atomic():
        canned_reply = canned_reply_of_bot(bot_id=conversation.bot_id, reply_id=frame.canned_id)
        known = selectors.message_by_client_id(conversation=conversation, client_msg_id=frame.client_msg_id)
        message = handoff.operator_message_send(
            conversation_id=conversation.pk, operator=operator, text=frame.text, client_msg_id=frame.client_msg_id,
        )
        if known is None:  # a resend is not a second use
            canned_reply_count_use(reply_id=canned_reply.pk)
    return message
