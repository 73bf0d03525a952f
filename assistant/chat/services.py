"""Writes of the chat: opening a conversation, taking a visitor message, answering it, rating and
handoff. The websocket consumer, the `ask` command and (later) the operator inbox all call these.

What must stay true:
- Sends are idempotent by client_msg_id: a resend returns the stored pair and never runs the chain
  again. The unique constraints decide races; a Redis claim keeps a second chain run from starting
  while the first is still thinking.
- The chain runs outside any transaction (it may wait seconds for a model); only storing its reply
  takes the conversation row lock.
- While an operator is asked for or present, visitor messages are stored (flag `to_operator`) and
  the bot stays silent.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Final

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from assistant.bots.models import Bot
from assistant.chat import friction, pipeline, replies, selectors, signals
from assistant.chat.exceptions import (
    ConversationClosed,
    HandoffUnavailable,
    NotFound,
    ValidationFailed,
)
from assistant.chat.models import Conversation, Message, visitor_id_validator
from assistant.chat.selectors import messages_after as messages_after  # re-exported: part of the API

logger = logging.getLogger("spravka.chat")

MAX_TEXT: Final = 2000
MAX_CLIENT_MSG_ID: Final = 64
# C0/C1 controls except tab and newline, zero-width characters and bidi overrides (used to make
# text read differently from what it is).
_CONTROL: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_REASON_VISITOR_ASKED: Final = "visitor_asked"
State = Conversation.State
Role = Message.Role


def clean_text(text: str) -> str:
    """A visitor's text as stored: no control characters, Unix newlines, trimmed, 1..MAX_TEXT chars."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).replace("\t", " ").strip()
    if not text:
        raise ValidationFailed("Напишите, пожалуйста, вопрос: сообщение пустое.", code="empty")
    if len(text) > MAX_TEXT:
        raise ValidationFailed(
            f"Сообщение слишком длинное: не больше {MAX_TEXT} знаков. Сократите его, пожалуйста.", code="too_long"
        )
    return text


def _check_visitor_id(visitor_id: str) -> None:
    try:
        visitor_id_validator(visitor_id)
    except ValidationError as exc:
        raise ValidationFailed(
            "Не удалось узнать посетителя. Обновите страницу и попробуйте ещё раз.", code="bad_frame"
        ) from exc


def conversation_open(*, bot: Bot, visitor_id: str, ip: str | None = None) -> Conversation:
    """The visitor's open conversation, or a new one. Two tabs opening at once meet at the
    `conversation_one_open` constraint and share the winner's conversation."""
    _check_visitor_id(visitor_id)
    conversation = selectors.open_conversation(bot=bot, visitor_id=visitor_id)
    if conversation is None:
        try:
            with transaction.atomic():
                conversation = Conversation.objects.create(bot=bot, visitor_id=visitor_id, last_ip=ip)
        except IntegrityError:
            conversation = selectors.open_conversation(bot=bot, visitor_id=visitor_id)
            if conversation is None:  # the winner was closed in between: start over
                return conversation_open(bot=bot, visitor_id=visitor_id, ip=ip)
    elif ip and conversation.last_ip != ip:
        conversation.last_ip = ip
        conversation.save(update_fields=["last_ip", "updated_at"])
    return conversation


def _locked(conversation: Conversation) -> Conversation:
    """Re-read the conversation under a row lock (inside a transaction) and copy its state to the
    caller's instance, so a long-lived consumer never acts on a stale state."""
    fresh = Conversation.objects.select_related("bot").select_for_update(of=("self",)).get(pk=conversation.pk)
    conversation.state = fresh.state
    return fresh


def _mark_friction(conversation: Conversation, text: str) -> bool:
    """Friction from the text of a new visitor message: a complaint, or the previous question
    asked again. The bot answer before it gets the flag too: that is the answer to review."""
    recent = selectors.recent_messages(conversation)
    previous_question = next((m.text for m in recent if m.role == Role.VISITOR), None)
    if not (friction.is_complaint(text) or friction.is_rephrase(previous_question, text)):
        return False
    last_answer = next((m for m in recent if m.role == Role.BOT), None)
    if last_answer is not None and not last_answer.flag("friction"):
        last_answer.flags = {**(last_answer.flags or {}), "friction": True}
        last_answer.save(update_fields=["flags"])
        signals.flagged_on_commit(last_answer)
    return True


def message_accept(*, conversation: Conversation, text: str, client_msg_id: str) -> tuple[Message, bool]:
    """Store a visitor message once: (message, created). A resent client_msg_id returns the stored
    message even if the conversation was closed since (the visitor did send it while it was open)."""
    text = clean_text(text)
    if len(client_msg_id) > MAX_CLIENT_MSG_ID:
        raise ValidationFailed("Слишком длинный идентификатор сообщения.", code="bad_frame")
    existing = selectors.message_by_client_id(conversation=conversation, client_msg_id=client_msg_id)
    if existing is not None:
        existing.conversation = conversation
        return existing, False
    with transaction.atomic():
        locked = _locked(conversation)
        if locked.state == State.CLOSED:
            raise ConversationClosed()
        flags = {"friction": True} if _mark_friction(locked, text) else {}
        if not locked.bot_answers:
            flags["to_operator"] = True
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    conversation=locked, bot_id=locked.bot_id, role=Role.VISITOR, text=text,
                    client_msg_id=client_msg_id, flags=flags,
                )
        except IntegrityError:
            if not client_msg_id:
                raise
            existing = Message.objects.get(conversation=locked, client_msg_id=client_msg_id)
            existing.conversation = conversation
            return existing, False
        locked.save(update_fields=["updated_at"])
    # The caller's instance, so that a state change made while answering shows on it (the consumer
    # keeps one conversation instance for the life of its socket).
    message.conversation = conversation
    return message, True


def _fallback_reply(bot: Bot, exc: Exception) -> pipeline.Reply:
    """What the visitor sees when the chain itself failed: an honest apology and a way to a person."""
    buttons = [replies.operator_button(bot)] if bot.handoff_enabled else []
    return pipeline.Reply(
        text=replies.say(bot, "failure"), links=[], buttons=buttons, intent="error", source_entry_id=None,
        sources=[], confidence=None, flags={"unanswered": True}, timings={},
        llm_meta={"route": "error", "error": type(exc).__name__},
    )


def _run_chain(visitor_message: Message, on_delta: pipeline.DeltaSink | None) -> pipeline.Reply:
    bot = visitor_message.conversation.bot
    history = selectors.history_before(visitor_message)
    try:
        return pipeline.answer(
            bot=bot, text=visitor_message.text, history=history, on_delta=on_delta,
            conversation_id=visitor_message.conversation_id,
        )
    except Exception as exc:  # the visitor still gets an answer; the traceback goes to the log
        logger.exception("answer chain failed for message %s", visitor_message.pk)
        return _fallback_reply(bot, exc)


def _handoff(conversation: Conversation, reason: str) -> list[Message]:
    """Move a locked conversation to waiting_operator with a system note; idempotent."""
    if conversation.state == State.CLOSED:
        raise ConversationClosed()
    if conversation.state != State.BOT:
        return []
    conversation.state = State.WAITING_OPERATOR
    conversation.save(update_fields=["state", "updated_at"])
    note = Message.objects.create(
        conversation=conversation, bot_id=conversation.bot_id, role=Role.SYSTEM,
        text=replies.say(conversation.bot, "handoff_system"), flags={"escalation": True},
        llm_meta={"handoff_reason": reason},
    )
    signals.flagged_on_commit(note)
    return [note]


def _store_reply(visitor_message: Message, reply: pipeline.Reply) -> list[Message]:
    """Store the chain's reply and apply the state it asks for. Losing the race to another reply
    for the same message returns that one: the visitor sees a single answer."""
    with transaction.atomic():
        conversation = _locked(visitor_message.conversation)
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    conversation=conversation, bot_id=conversation.bot_id, role=Role.BOT, text=reply.text,
                    intent=reply.intent[:32], sources=reply.sources, source_entry_id=reply.source_entry_id,
                    confidence=reply.confidence, links=reply.links, buttons=reply.buttons,
                    flags={k: True for k, v in reply.flags.items() if v}, reply_to=visitor_message,
                    llm_meta={**reply.llm_meta, "timings": reply.timings},
                )
        except IntegrityError:
            return [Message.objects.get(reply_to=visitor_message, role=Role.BOT)]
        if message.flags:
            signals.flagged_on_commit(message)
        visitor_message.intent = reply.intent[:32]  # what the rules made of the question, for analytics
        visitor_message.save(update_fields=["intent"])
        produced = [message]
        if reply.state == State.WAITING_OPERATOR:
            produced += _handoff(conversation, _REASON_VISITOR_ASKED)
        else:
            conversation.save(update_fields=["updated_at"])
    visitor_message.conversation.state = conversation.state
    return produced


def _claim_key(message: Message) -> str:
    return f"chat:answering:{message.pk}"


def _wait_for_reply(visitor_message: Message) -> Message | None:
    """Another worker is answering this message (a resend raced the original): wait for its reply
    instead of running the chain twice."""
    deadline = time.monotonic() + settings.CHAT_REPLY_WAIT
    while time.monotonic() < deadline:
        reply = selectors.bot_reply_to(visitor_message)
        if reply is not None:
            return reply
        time.sleep(0.1)
    return selectors.bot_reply_to(visitor_message)


def message_answer(*, visitor_message: Message, on_delta: pipeline.DeltaSink | None = None) -> list[Message]:
    """The bot's reply to a stored visitor message, plus any system note it caused (handoff), in
    order. A message already answered returns [its reply]; a message for the operator returns []."""
    existing = selectors.bot_reply_to(visitor_message)
    if existing is not None:
        return [existing]
    if visitor_message.flag("to_operator"):
        return []
    # The claim expires by itself, so a worker that died mid-answer blocks a resend only briefly.
    if not cache.add(_claim_key(visitor_message), "1", timeout=settings.CHAT_ANSWER_CLAIM_SECONDS):
        reply = _wait_for_reply(visitor_message)
        return [reply] if reply is not None else []
    try:
        return _store_reply(visitor_message, _run_chain(visitor_message, on_delta))
    finally:
        cache.delete(_claim_key(visitor_message))


def message_receive(
    *, conversation: Conversation, text: str, client_msg_id: str
) -> tuple[Message, Message | None, bool]:
    """Take a visitor message and answer it: (visitor message, bot reply or None, created).
    The reply is None while an operator is asked for or present (the bot stays silent)."""
    visitor_message, created = message_accept(conversation=conversation, text=text, client_msg_id=client_msg_id)
    produced = message_answer(visitor_message=visitor_message)
    reply = next((m for m in produced if m.role == Role.BOT), None)
    return visitor_message, reply, created


def message_rate(*, conversation: Conversation, message_id: int, rating: int) -> Message:
    """A visitor's thumbs on a bot answer of their own conversation; thumbs-down is friction."""
    if rating not in (-1, 0, 1):
        raise ValidationFailed("Оценка может быть только 1 или -1.", code="bad_frame")
    with transaction.atomic():
        message = (
            Message.objects.select_for_update()
            .filter(pk=message_id, conversation=conversation, role=Role.BOT)
            .first()
        )
        if message is None:
            raise NotFound("Это сообщение не найдено в вашем разговоре.")
        message.rating = rating
        if rating < 0:
            message.flags = {**(message.flags or {}), "friction": True}
            signals.flagged_on_commit(message)
        message.save(update_fields=["rating", "flags"])
    return message


def conversation_handoff(*, conversation: Conversation, reason: str) -> list[Message]:
    """Ask for an operator: waiting_operator plus a system note (returned; [] if already asked)."""
    if not conversation.bot.handoff_enabled:
        raise HandoffUnavailable(replies.handoff_disabled(conversation.bot))
    with transaction.atomic():
        locked = _locked(conversation)
        produced = _handoff(locked, reason[:200])
    conversation.state = locked.state
    return produced


def conversation_close(*, conversation: Conversation, outcome: str = "") -> Conversation:
    """End a conversation; the visitor's next hello opens a new one."""
    with transaction.atomic():
        locked = _locked(conversation)
        locked.state, locked.outcome = State.CLOSED, outcome[:64] or locked.outcome
        locked.save(update_fields=["state", "outcome", "updated_at"])
    conversation.state, conversation.outcome = locked.state, locked.outcome
    return locked


def conversation_ask_once(*, bot: Bot, text: str, visitor_id: str = "cli") -> Message | None:
    """One question outside the widget (`manage.py ask`, evaluation): the same services and chain
    as a visitor gets, in a conversation that is closed right after, so every call starts clean
    (a previous run that asked for an operator would otherwise silence the bot)."""
    conversation = conversation_open(bot=bot, visitor_id=visitor_id)
    if not conversation.bot_answers:
        conversation_close(conversation=conversation, outcome="abandoned")
        conversation = conversation_open(bot=bot, visitor_id=visitor_id)
    try:
        _visitor, reply, _created = message_receive(
            conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex
        )
    finally:
        conversation_close(conversation=conversation, outcome=visitor_id)
    return reply
