"""What the chat tells the layers above it. Chat imports nothing of review or feedback: it sends
these signals after commit, and they listen (docs/architecture.md, "Apps, lowest first").

`message_flagged(sender=Message, bot_id, message_id)`: a message gained a flag someone should look
at — a bot answer stored with low_confidence / unanswered / escalation, a bot answer marked friction
later (thumbs-down, «нет, не то», the question asked again), or the system note of a handoff. The
receiver re-reads the message through `chat.selectors`; the signal carries ids only.

`visitor_told(sender=Conversation, conversation_id, channel, message_ids, state)`: something the
visitor did not cause on their own connection (an operator's message, «оператор на связи», a
close, a note of a scheduled task) was published to a conversation that lives in a messenger;
messengers/ hears it and sends it there. `state` is the new state when it changed, else "".

`conversation_waiting(sender=Conversation, conversation_id, bot_id, message_id)`: a conversation
started waiting for an operator (`message_id`: the system note of that handoff, one per wait);
messengers/ tells the operators who linked their Telegram.

`conversation_taken(sender=Conversation, conversation_id, bot_id, holder)`: an operator took a
conversation (`holder`: their name as the visitor sees it); messengers/ marks the waiting notices
the other operators got as taken.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

from chat.models import Conversation, Lead, Message

logger = logging.getLogger("spravka.chat")

message_flagged = Signal()
visitor_told = Signal()
conversation_waiting = Signal()
conversation_taken = Signal()
lead_created = Signal()


def flagged_on_commit(message: Message) -> None:
    """Send `message_flagged` once the caller's transaction commits (never for a rolled-back row).
    A failing receiver is logged and never fails the chat: the visitor's answer is already stored."""
    bot_id, message_id = message.bot_id, message.pk

    def send() -> None:
        for receiver, result in message_flagged.send_robust(sender=Message, bot_id=bot_id, message_id=message_id):
            if isinstance(result, Exception):
                logger.error("message_flagged receiver %r failed for message %s", receiver, message_id,
                             exc_info=result)

    transaction.on_commit(send)


def visitor_told_on_commit(conversation: Conversation, message_ids: list[int], state: str) -> None:
    """Send `visitor_told` once the caller's transaction commits; a failing receiver is logged."""
    conversation_id, channel = conversation.pk, conversation.channel

    def send() -> None:
        for receiver, result in visitor_told.send_robust(
            sender=Conversation, conversation_id=conversation_id, channel=channel, message_ids=message_ids,
            state=state,
        ):
            if isinstance(result, Exception):
                logger.error("visitor_told receiver %r failed for conversation %s", receiver, conversation_id,
                             exc_info=result)

    transaction.on_commit(send)


def waiting_on_commit(conversation: Conversation, note: Message) -> None:
    """Send `conversation_waiting` once the caller's transaction commits; a failing receiver is logged."""
    conversation_id, bot_id, message_id = conversation.pk, conversation.bot_id, note.pk

    def send() -> None:
        for receiver, result in conversation_waiting.send_robust(
            sender=Conversation, conversation_id=conversation_id, bot_id=bot_id, message_id=message_id,
        ):
            if isinstance(result, Exception):
                logger.error("conversation_waiting receiver %r failed for conversation %s", receiver,
                             conversation_id, exc_info=result)

    transaction.on_commit(send)


def taken_on_commit(conversation: Conversation, holder: str) -> None:
    """Send `conversation_taken` once the caller's transaction commits; a failing receiver is logged."""
    conversation_id, bot_id = conversation.pk, conversation.bot_id

    def send() -> None:
        for receiver, result in conversation_taken.send_robust(
            sender=Conversation, conversation_id=conversation_id, bot_id=bot_id, holder=holder,
        ):
            if isinstance(result, Exception):
                logger.error("conversation_taken receiver %r failed for conversation %s", receiver,
                             conversation_id, exc_info=result)

    transaction.on_commit(send)


def lead_created_on_commit(lead: Lead) -> None:
    """Send `lead_created` once the caller's transaction commits; a failing receiver is logged and
    never fails the visitor's form: the lead is already stored."""
    lead_id, bot_id = lead.pk, lead.bot_id

    def send() -> None:
        for receiver, result in lead_created.send_robust(sender=Lead, lead_id=lead_id, bot_id=bot_id):
            if isinstance(result, Exception):
                logger.error("lead_created receiver %r failed for lead %s", receiver, lead_id, exc_info=result)

    transaction.on_commit(send)
