"""The operator's side of a conversation: take it, write to the visitor, hand it back to the bot or
to another operator of its bot, close it. The operators' inbox (assistant/inbox) calls these after
checking the operator may see the conversation at all (`inbox.access`). The moves themselves, with
the rules of who may move whose conversation where, are `states.py`'s; around them this module
writes the notes the visitor sees, the webhooks and the events.

What must stay true:
- Every change locks the conversation row first (`services.locked`): twenty operators pressing
  «Взять» at once are served one at a time, and exactly one of them gets it; the others get
  `already_taken` with the winner's name.
- An operator writes only into a conversation they hold. Replying to one nobody holds (waiting,
  or still with the bot) takes it first, so the visitor always learns who answers.
- Operator messages are idempotent by client_msg_id, like the visitor's: a resend after a lost
  ack (or a server restart) returns the stored message and never writes it twice.
- Everything is published after commit (`events.publish`), to the visitor's sockets and the
  bot's feed, so every inbox and widget converge on the stored rows.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from bots.selectors import inbox_members
from chat import csat, events, frames, returns, selectors, services, signals, states, webhooks, writes
from chat.exceptions import TransferRefused
from chat.models import Conversation, Message

State = Conversation.State
Role = Message.Role
OUTCOME_CLOSED_BY_OPERATOR = "closed_by_operator"


def _assign(conversation: Conversation, operator: Any) -> Message | None:
    """Give a locked conversation to `operator` (`states.to_operator`), with the note the visitor
    sees; None when they hold it already. ConversationClosed or AlreadyTaken when they may not."""
    if not states.to_operator(conversation, operator):
        return None
    holder = frames.display_name(operator)
    note = services.system_note(conversation, "operator_joined", name=holder)
    webhooks.webhook_emit(bot=conversation.bot, event=webhooks.HANDOFF_TAKEN, conversation=conversation)
    signals.taken_on_commit(conversation, holder)
    return note


def conversation_take(*, conversation_id: int, operator: Any) -> Conversation:
    """The conversation becomes `operator`, assigned to `operator`; taking one's own again is a
    no-op. Works from `waiting_operator` and from `bot` (an operator may step in unasked)."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        note = _assign(conversation, operator)
        if note is None:  # their own already
            return conversation
        events.publish(conversation, messages=[note], to_visitor=True, state_changed=True)
    return conversation


def conversation_assign(*, conversation_id: int, operator: Any) -> bool:
    """Give a waiting conversation to `operator` (inbox/assignment.py, in turn): as if they took it.
    False, nothing changed, when it no longer waits (the bot got it back, someone took it, closed)."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if conversation.state != State.WAITING_OPERATOR:
            return False
        note = _assign(conversation, operator)  # a waiting conversation is nobody's: always moved
        events.publish(conversation, messages=[note] if note else [], to_visitor=True, state_changed=True)
    return True


def operator_message_send(*, conversation_id: int, operator: Any, text: str, client_msg_id: str) -> Message:
    """Store an operator's message once and deliver it to the visitor (after commit)."""
    text = services.clean_text(text)
    writes.check_client_msg_id(client_msg_id)
    existing = Message.objects.filter(conversation_id=conversation_id, client_msg_id=client_msg_id).first()
    if existing is not None:
        return existing
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if conversation.assigned_to_id == operator.pk:
            conversation.assigned_to = operator  # the frames name the holder: it is them, no row to read
        joined = _assign(conversation, operator)  # one nobody holds is taken first
        produced = [joined] if joined is not None else []
        state_changed = joined is not None
        message, created = writes.message_store_operator(
            conversation, operator=operator, text=text, client_msg_id=client_msg_id
        )
        if not created:  # a resend raced the first: the stored one
            return message
        conversation.unread = 0  # whoever replies has read what came before
        conversation.save(update_fields=["unread", "updated_at"])
        events.publish(conversation, messages=[*produced, message], to_visitor=True, state_changed=state_changed)
    return message


def conversation_release(*, conversation_id: int, operator: Any) -> Conversation:
    """Back to the bot: it answers the visitor's next message again, and at once the question the
    visitor asked while waiting that nobody answered (`returns`, after commit: the note first)."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if not states.back_to_bot(conversation, operator):  # the bot answers already
            return conversation
        note = services.system_note(conversation, "operator_released")
        events.publish(conversation, messages=[note], to_visitor=True, state_changed=True)
        owed = selectors.question_left_unanswered(conversation)
        if owed is not None:
            returns.answer_returned_on_commit(owed.pk)
    return conversation


def conversation_finish(*, conversation_id: int, operator: Any) -> Conversation:
    """The operator closes the conversation; the visitor's next message starts a new one with the bot.
    The visitor's widget then asks for stars (chat/csat.py), counted for this operator."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if conversation.state == State.CLOSED:
            return conversation
        states.refuse_if_held_by_another(conversation, operator)  # before the note: nothing is written
        note = services.system_note(conversation, "operator_closed")
        if services.close_locked(conversation, outcome=OUTCOME_CLOSED_BY_OPERATOR, messages=[note], by=operator):
            csat.csat_ask_on_commit(conversation)  # after the note and the state: the stars come last
    return conversation


def conversation_transfer(*, conversation_id: int, operator: Any, to_id: int) -> Conversation:
    """The holder hands the conversation to `to_id`, another operator (or owner) of its bot, who
    then holds it; the visitor learns who answers now. Anyone else (another bot's operator, a
    non-member, an unknown id) is TransferRefused and nothing changes."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        to = inbox_members(conversation.bot_id).filter(pk=to_id).first()
        if to is None:
            raise TransferRefused(gettext_noop("Передать разговор можно только оператору этого бота."))
        if not states.to_another_operator(conversation, operator, to):
            return conversation
        note = services.system_note(conversation, "operator_joined", name=frames.display_name(to))
        events.publish(conversation, messages=[note], to_visitor=True)
    return conversation


def conversation_mark_read(*, conversation_id: int) -> Conversation:
    """An operator opened the conversation: its unread count goes back to 0 for every inbox."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        if conversation.unread:
            conversation.unread = 0
            conversation.save(update_fields=["unread"])
            events.publish(conversation)
    return conversation


def operator_typing(*, conversation_id: int, on: bool) -> None:
    """Typing dots for the visitor; nothing is stored."""
    events.publish_typing(conversation_id, on=on, by=Role.OPERATOR)


def conversation_claim_alert(*, conversation_id: int) -> bool:
    """Claim sending the "waiting too long" e-mail for the current wait; True once per wait, so
    two beat runs (or workers) never both send it."""
    return bool(
        Conversation.objects.filter(
            pk=conversation_id, state=State.WAITING_OPERATOR, alerted_at__isnull=True
        ).update(alerted_at=timezone.now())
    )


def conversation_unclaim_alert(*, conversation_id: int) -> None:
    """The e-mail could not be sent: let the next beat run try again."""
    Conversation.objects.filter(pk=conversation_id).update(alerted_at=None)
