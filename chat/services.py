"""Writes of the chat: opening a conversation, taking a visitor message, answering it, rating and
handoff. The websocket consumer, the `ask` command and (later) the operator inbox all call these.

What must stay true:
- Sends are idempotent by client_msg_id: a resend returns the stored pair and never runs the chain
  again. The unique constraints decide races; a Redis claim (claims.py) keeps a second chain run
  from starting while the first is still thinking, and is taken over at once when the process that
  held it died (so a visitor who reconnects after a crash gets the answer from the new process).
- The chain runs outside any transaction (it may wait seconds for a model); only storing its reply
  takes the conversation row lock.
- While an operator is asked for or present, visitor messages are stored (flag `to_operator`) and
  the bot stays silent: no rules, no search, no model. Only a repeated request for a person while
  one is awaited gets a short note, so the visitor is not left wondering.
- Every stored message and state change is published after commit (`events.publish`): the
  operators' inbox hears about it without chat knowing the inbox exists.
- The operator-side writes (take, operator messages, release, close) live in `handoff.py`, leads
  and erasure in `leads.py`; all of them lock the conversation row the same way (`locked`). A
  state changes only in `states.py` (the handoff and the close here call it), a message is written
  only in `writes.py` (one named function per kind of write).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from answers import orders, pipeline, replies
from behavior import escalation, hours, invitations
from behavior.intents import classify
from bots import freshness
from bots.models import Bot
from chat import claims, events, friction, presence, selectors, signals, states, webhooks, writes
from chat.exceptions import (
    DATABASE_AWAY,
    ConversationClosed,
    HandoffUnavailable,
    NotFound,
    ValidationFailed,
)
from chat.models import Conversation, Message
from chat.selectors import messages_after as messages_after  # re-exported: part of the API
from chat.writes import (  # re-exported: handoff, leads and the tests call them from here
    MAX_CLIENT_MSG_ID as MAX_CLIENT_MSG_ID,
)
from chat.writes import MAX_TEXT as MAX_TEXT
from chat.writes import check_client_msg_id, check_visitor_id, clean_page_url
from chat.writes import clean_line as clean_line
from chat.writes import clean_text as clean_text
from chat.writes import locked as locked
from chat.writes import system_note as system_note
from voice import effective as voice

logger = logging.getLogger("spravka.chat")

_REASON_VISITOR_ASKED: Final = "visitor_asked"
State = Conversation.State
Role = Message.Role


def conversation_open(
    *, bot: Bot, visitor_id: str, ip: str | None = None, page_url: str | None = None,
    channel: str = Conversation.Channel.WIDGET, visitor_name: str = "", page_title: str = "",
) -> Conversation:
    """The visitor's open conversation, or a new one: the widget calls it when the visitor first
    writes, asks for a person or leaves a contact (an opened widget starts nothing: `conversation_resume`).
    Two tabs starting at once meet at the `conversation_one_open` constraint and share the winner's
    conversation. Its bot is marked with the bot's settings token (read before the rows), so later
    turns see settings changed since. A messenger (messengers/) names its `channel` and the
    visitor's name there."""
    token = freshness.bot_remember(bot_id=bot.pk)
    conversation = _resume(bot=bot, visitor_id=visitor_id, ip=ip, page_url=page_url, visitor_name=visitor_name)
    if conversation is not None:
        freshness.bot_mark(conversation.bot, token)
        return conversation
    # A new conversation is a write a script could repeat with new visitor ids: count it.
    writes.rate_check("conversation", bot_id=bot.pk, visitor_id=visitor_id, ip=ip)
    try:
        with transaction.atomic():
            conversation = Conversation.objects.create(
                bot=bot, visitor_id=visitor_id, last_ip=ip, page_url=clean_page_url(page_url), channel=channel,
                visitor_name=clean_line(visitor_name)[:200] if visitor_name else "",
                page_title=clean_line(page_title)[:300] if page_title else "",
                variant=voice.variant_of(bot, visitor_id),  # the A/B arm it is counted in (feedback)
            )
    except IntegrityError:
        conversation = selectors.open_conversation(bot=bot, visitor_id=visitor_id)
        if conversation is None:  # the winner was closed in between: start over
            return conversation_open(bot=bot, visitor_id=visitor_id, ip=ip, page_url=page_url, channel=channel,
                                     visitor_name=visitor_name, page_title=page_title)
        freshness.bot_mark(conversation.bot, token)
        return conversation
    # A new conversation's bot is the caller's copy (the socket's, read at connect, before the token).
    freshness.bot_adopt(conversation.bot, token)
    return conversation


def conversation_resume(
    *, bot: Bot, visitor_id: str, ip: str | None = None, page_url: str | None = None,
) -> Conversation | None:
    """The visitor's open conversation brought up to date (address, page), or None: the widget's
    `hello` resumes a conversation but never starts one, so a visitor who only opens the widget
    leaves no empty «Посетитель» in the inbox and no conversation in the owner's numbers."""
    token = freshness.bot_remember(bot_id=bot.pk)
    conversation = _resume(bot=bot, visitor_id=visitor_id, ip=ip, page_url=page_url)
    if conversation is not None:
        freshness.bot_mark(conversation.bot, token)
    return conversation


def visitor_choice_offered(bot: Bot) -> bool:
    """Whether the widget offers «Спросить бота» / «Написать оператору» to a visitor who has no
    conversation yet: the owner turned it on, handoff is on and operators work now (out of hours
    the operator button could only offer the contact form)."""
    bot = freshness.bot_fresh(bot)
    return bool(bot.visitor_choice and bot.handoff_enabled and hours.operators_available(bot))


def _resume(
    *, bot: Bot, visitor_id: str, ip: str | None, page_url: str | None, visitor_name: str = "",
) -> Conversation | None:
    check_visitor_id(visitor_id)
    conversation = selectors.open_conversation(bot=bot, visitor_id=visitor_id)
    if conversation is None:
        return None
    changed = {"last_ip": ip, "page_url": clean_page_url(page_url),
               "visitor_name": clean_line(visitor_name)[:200] if visitor_name else ""}
    changed = {name: value for name, value in changed.items() if value and getattr(conversation, name) != value}
    if changed:
        for name, value in changed.items():
            setattr(conversation, name, value)
        conversation.save(update_fields=[*changed, "updated_at"])
    return conversation


def _locked(conversation: Conversation) -> Conversation:
    """`locked`, copying the state to the caller's instance, so a long-lived consumer never acts
    on a stale state."""
    fresh = locked(conversation.pk)
    states.catch_up(conversation, fresh.state)
    return fresh


def _friction_flags(recent: list[Message], text: str) -> dict[str, bool]:
    """Friction from the text of a new visitor message, compared with the latest messages (newest
    first): a complaint, or the previous question asked again (its flags name which, for the
    escalation rules). The bot answer before it gets the friction flag too: that is the answer to
    review."""
    previous_question = next((m.text for m in recent if m.role == Role.VISITOR), None)
    flags: dict[str, bool] = {}
    if friction.is_complaint(text):
        flags[escalation.COMPLAINT] = True
    elif friction.is_rephrase(previous_question, text):
        flags[escalation.REPHRASE] = True
    if not flags:
        return flags
    last_answer = next((m for m in recent if m.role == Role.BOT), None)
    if last_answer is not None and not last_answer.flag("friction"):
        writes.message_flag_add(last_answer, "friction")
        signals.flagged_on_commit(last_answer)
    return {"friction": True, **flags}


@dataclass(frozen=True)
class Taken:
    """A visitor message as `message_take` left it."""

    message: Message
    created: bool
    # What was stored with it: the rules' reply (and any note), a note while an operator is awaited,
    # [] while an operator is present; None when the chain must answer (`message_answer`).
    produced: list[Message] | None
    # What the rules and the language check made of the text: handed to `message_answer`, so a turn
    # reads its text once. None for a resend (the chain then reads it again).
    reading: pipeline.Reading | None = None


def message_take(
    *, conversation: Conversation, text: str, client_msg_id: str, count: bool = False, answer_rules: bool = True
) -> Taken:
    """Store a visitor message once and, when the rules decide it alone (a greeting, thanks, «вы
    бот?»), their reply in the same transaction: such a turn costs four SQL statements (touch the
    conversation, read its latest messages, store the question, store the answer). A resent
    client_msg_id returns the stored message (and its answer, when there is one) even if the
    conversation was closed since; it never counts against the rate limit (`count`)."""
    text = clean_text(text)
    check_client_msg_id(client_msg_id, required=False)
    freshness.bot_fresh(conversation.bot)  # a socket's copy, read at hello: the owner may have changed it
    reading, ruled = pipeline.answer_by_rules(bot=conversation.bot, text=text)
    if not answer_rules:
        ruled = None
    with transaction.atomic():
        current = writes.touch(conversation)
        recent, same = selectors.latest_and_same(conversation, client_msg_id=client_msg_id)
        if same is not None:  # a resend: its answer, stored or still being made, is message_answer's to find
            same = Message.objects.get(pk=same.pk)
            same.conversation = conversation
            return Taken(same, False, None)
        if count:
            writes.rate_check("message", bot_id=current.bot_id, visitor_id=current.visitor_id, ip=current.last_ip)
        if current.state == State.CLOSED:
            raise ConversationClosed()
        if not current.bot_answers:  # a person is awaited or present: the whole row, fresh
            current = _locked(conversation)
        flags = _friction_flags(recent, text)
        if not current.bot_answers:
            flags["to_operator"] = True
        if not any(m.role == Role.VISITOR for m in recent):  # the visitor's first word: an invitation converts
            invitations.invitation_convert(bot_id=current.bot_id, visitor_id=current.visitor_id,
                                           conversation_id=current.pk)
        message = writes.message_store_visitor(
            current, text=text, client_msg_id=client_msg_id, flags=flags,
            intent=ruled.intent if ruled is not None else reading.intent.name,
        )
        message.conversation = conversation
        if not current.bot_answers:  # for the operators: unread in the inbox until one opens it
            current.unread += 1
            current.save(update_fields=["unread", "updated_at"])
            events.publish(current, messages=[message])
            return Taken(message, True, _while_waiting(current, message), reading)
        if ruled is None:
            events.publish(current, messages=[message])
            produced = None
        else:  # the question and its answer leave in one publication
            produced = _store_reply_locked(current, message, ruled, question=message)
    states.catch_up(conversation, current.state)
    return Taken(message, True, produced, reading)


def message_accept(*, conversation: Conversation, text: str, client_msg_id: str) -> tuple[Message, bool]:
    """Store a visitor message once, unanswered: (message, created). `message_take` without the
    rules' answer, for callers that answer later (`message_answer`)."""
    taken = message_take(conversation=conversation, text=text, client_msg_id=client_msg_id, answer_rules=False)
    return taken.message, taken.created


ATTACHMENTS: Final = frozenset({"photo", "video", "voice", "audio", "sticker", "file", "location"})


def message_not_text(*, conversation: Conversation, what: str, client_msg_id: str) -> list[Message]:
    """A visitor sent something that is not text (a photo, a voice message, a sticker: messengers
    allow it, the widget does not). It is stored as «[фото]» for the operators; while the bot
    answers, it says it understands only text. Returns what the visitor should be shown."""
    label = replies.say(conversation.bot, f"attachment_{what if what in ATTACHMENTS else 'file'}")
    taken = message_take(conversation=conversation, text=label, client_msg_id=client_msg_id, count=True,
                         answer_rules=False)
    if not taken.created:
        return []
    if taken.produced is not None:  # a person is awaited or present: they see it in the inbox
        return taken.produced
    reply = pipeline.Reply(
        text=replies.say(conversation.bot, "text_only"), links=[], buttons=[], intent="not_text",
        source_entry_id=None, sources=[], confidence=None, flags={}, timings={}, llm_meta={"route": "not_text"},
    )
    return _store_reply(taken.message, reply)


def _fallback_reply(bot: Bot, exc: Exception) -> pipeline.Reply:
    """What the visitor sees when the chain itself failed: an honest apology and a way to a person."""
    buttons = replies.handoff_buttons(bot, operators_available=hours.operators_available(bot))
    return pipeline.Reply(
        text=replies.say(bot, "failure"), links=[], buttons=buttons, intent="error", source_entry_id=None,
        sources=[], confidence=None, flags={"unanswered": True}, timings={},
        llm_meta={"route": "error", "error": type(exc).__name__},
    )


def _run_chain(
    visitor_message: Message, on_delta: pipeline.DeltaSink | None, reading: pipeline.Reading | None = None
) -> pipeline.Reply:
    conversation = visitor_message.conversation
    bot = conversation.bot
    history, last_meta = selectors.history_and_last_meta(visitor_message)
    caller = orders.Caller(visitor_id=conversation.visitor_id, ip=conversation.last_ip,
                           awaiting=orders.awaiting_from(last_meta))
    try:
        return pipeline.answer(
            bot=bot, text=visitor_message.text, history=history, on_delta=on_delta,
            conversation_id=visitor_message.conversation_id, caller=caller, reading=reading,
        )
    except DATABASE_AWAY:  # no apology stored for an outage: the answer is made once it is back
        raise
    except Exception as exc:  # the visitor still gets an answer; the traceback goes to the log
        logger.exception("answer chain failed for message %s", visitor_message.pk)
        return _fallback_reply(bot, exc)


def _handoff(conversation: Conversation, reason: str) -> list[Message]:
    """Move a locked conversation to waiting_operator (`states.to_waiting`) with a system note;
    idempotent. Outside the operators' hours nobody would come: the visitor is offered the contact
    form instead."""
    if not states.can_wait(conversation):  # a person asked for or present already; closed raises
        return []
    bot = conversation.bot
    if not hours.operators_available(bot):
        text = replies.out_of_hours(bot, hours.schedule_text(bot, replies.language(bot)))
        note = writes.message_store_system(
            conversation, text, buttons=replies.handoff_buttons(bot, operators_available=False),
            meta={"handoff_reason": reason, "out_of_hours": True},
        )
        conversation.handoff_offered = True
        conversation.save(update_fields=["handoff_offered", "updated_at"])
        events.publish(conversation, messages=[note])
        return [note]
    note = _waiting_note(conversation, reason)
    signals.flagged_on_commit(note)
    events.publish(conversation, messages=[note], state_changed=True)
    webhooks.webhook_emit(bot=bot, event=webhooks.HANDOFF_WAITING, conversation=conversation)
    signals.waiting_on_commit(conversation, note)
    return [note]


def _waiting_note(conversation: Conversation, reason: str) -> Message:
    """Start the wait (`states.to_waiting`) and say what comes next: an operator soon; or, with
    nobody on hand (chat/presence.py), that nobody is there now, with the contact form at once
    (the wait goes on: whoever comes may still take it)."""
    bot = conversation.bot
    if presence.anyone_on_hand(bot):
        states.to_waiting(conversation)
        return system_note(conversation, "handoff_system", meta={"handoff_reason": reason}, flags={"escalation": True})
    form = replies.lead_form_available(bot)
    states.to_waiting(conversation, form_offered=form)
    meta = {"handoff_reason": reason, "nobody_on_hand": True}
    if not form:
        return system_note(conversation, "operators_away_no_form", meta=meta, flags={"escalation": True})
    return system_note(conversation, "operators_away", buttons=[replies.lead_button(bot)], meta=meta,
                       flags={"escalation": True})


def _escalation_offer(
    conversation: Conversation, reason: escalation.Reason, *, answer_offers: bool = False
) -> list[Message]:
    """Offer a person once per conversation. An answer that already carries the way to a person
    («нет точного ответа» + button: `answer_offers`) is the offer; otherwise a system note brings it."""
    conversation.handoff_offered = True
    conversation.save(update_fields=["handoff_offered", "updated_at"])
    if answer_offers:
        return []
    bot = conversation.bot
    buttons = replies.handoff_buttons(bot, operators_available=hours.operators_available(bot))
    if not buttons:
        return []
    return [system_note(conversation, "escalation_offer", buttons=buttons, meta={"escalation": reason})]


def _offer_after_answer(conversation: Conversation, visitor_message: Message, answer: Message) -> list[Message]:
    """The escalation rules after a bot answer; they read the latest turns only when one could fire."""
    if conversation.handoff_offered or not conversation.bot.handoff_enabled or conversation.state != State.BOT:
        return []
    signs = (escalation.COMPLAINT, escalation.REPHRASE)
    may_fire = answer.flag("unanswered") or any(visitor_message.flag(sign) for sign in signs)
    if not may_fire:
        return []
    turns = [escalation.Turn(m.role, m.flags or {}) for m in selectors.recent_messages(conversation, limit=8)]
    reason = escalation.after_answer(conversation.bot, turns)
    return _escalation_offer(conversation, reason, answer_offers=bool(answer.buttons)) if reason else []


def _store_reply(visitor_message: Message, reply: pipeline.Reply, *, to_visitor: bool = False) -> list[Message]:
    """Store the chain's reply and apply the state it asks for. Losing the race to another reply
    for the same message returns that one: the visitor sees a single answer. `to_visitor`: no socket
    of the visitor's asked (a task answers), so the reply is published to their widgets too."""
    with transaction.atomic():
        conversation = writes.touch(visitor_message.conversation)  # the lock, fresh state, updated_at
        stored = selectors.bot_reply_to(visitor_message)
        if stored is not None:  # under the lock: no second answer past this
            return [stored]
        if visitor_message.intent != reply.intent[:32]:  # the model raised another intent than the rules'
            writes.message_intent_set(visitor_message, reply.intent)
        produced = _store_reply_locked(conversation, visitor_message, reply, to_visitor=to_visitor)
    return produced


def _store_reply_locked(
    conversation: Conversation, visitor_message: Message, reply: pipeline.Reply, *, question: Message | None = None,
    to_visitor: bool = False,
) -> list[Message]:
    """Store `reply` to `visitor_message` in the caller's transaction, the conversation locked, and
    apply the state it asks for (a handoff) or the escalation rules; publish after commit, with
    `question` first when the question itself is not published yet."""
    message = writes.message_store_answer(conversation, visitor_message, reply)
    if message.flags:
        signals.flagged_on_commit(message)
    produced = [message]
    said = [question] if question is not None else []
    if reply.state == State.WAITING_OPERATOR:
        events.publish(conversation, messages=[*said, message], to_visitor=to_visitor)
        notes = _handoff(conversation, _REASON_VISITOR_ASKED)
        if to_visitor and notes:
            events.publish(conversation, messages=notes, to_visitor=True, state_changed=True)
        return produced + notes
    produced += _offer_after_answer(conversation, visitor_message, message)
    events.publish(conversation, messages=[*said, *produced], to_visitor=to_visitor)
    return produced


def _while_waiting(conversation: Conversation, visitor_message: Message) -> list[Message]:
    """The bot is silent while a person is awaited or present; a repeated request for a person
    while one is awaited gets one short note (in the caller's transaction, the conversation locked)."""
    if conversation.state != State.WAITING_OPERATOR or classify(visitor_message.text).name != "operator":
        return []
    note = system_note(conversation, "still_waiting", reply_to=visitor_message)
    events.publish(conversation, messages=[note])
    return [note]


CLAIM_RETRY_SECONDS: Final = 1.0


def _wait_for_reply(visitor_message: Message) -> Message | bool | None:
    """Another worker is answering this message (a resend raced the original, a second tab, a
    reconnect): wait for its reply instead of running the chain twice. True: that worker is gone
    and its claim is now ours; None: no reply within CHAT_REPLY_WAIT."""
    deadline = time.monotonic() + settings.CHAT_REPLY_WAIT
    next_claim = time.monotonic() + CLAIM_RETRY_SECONDS
    while time.monotonic() < deadline:
        reply = selectors.bot_reply_to(visitor_message)
        if reply is not None:
            return reply
        if time.monotonic() >= next_claim:
            if claims.claim(visitor_message.pk):
                return selectors.bot_reply_to(visitor_message) or True
            next_claim = time.monotonic() + CLAIM_RETRY_SECONDS
        time.sleep(0.1)
    return selectors.bot_reply_to(visitor_message)


def message_answer(
    *, visitor_message: Message, on_delta: pipeline.DeltaSink | None = None, just_stored: bool = False,
    reading: pipeline.Reading | None = None,
) -> list[Message]:
    """The bot's reply to a stored visitor message, plus any system note it caused (handoff), in
    order. A message already answered returns [its reply]; a message for the operator returns [].
    `just_stored`: the caller has just created it (`Taken.created`), so no answer can exist yet;
    `reading`: `Taken.reading`, the rules' and language's reading of its text made when it was stored."""
    existing = None if just_stored else selectors.bot_reply_to(visitor_message)
    if existing is not None:
        return [existing]
    if visitor_message.flag("to_operator"):  # its note, if any, was stored with it (message_take)
        return list(Message.objects.filter(reply_to=visitor_message, role=Role.SYSTEM))
    # A worker that died mid-answer holds its claim only until its heartbeat expires (claims.py).
    if not claims.claim(visitor_message.pk):
        waited = _wait_for_reply(visitor_message)
        if isinstance(waited, Message):
            return [waited]
        if waited is None:
            return []
    try:
        return _store_reply(visitor_message, _run_chain(visitor_message, on_delta, reading))
    finally:
        claims.release(visitor_message.pk)


def message_unanswered(*, conversation: Conversation, shown: list[Message]) -> Message | None:
    """The visitor's last message when the bot still owes it an answer: the process making it died
    (or is still making it, for another tab or a page the visitor left). A reconnecting socket
    answers it through `message_answer`, which waits for a live worker's reply or takes over a dead
    one's claim. `shown`: what `messages_after` just gave the socket (oldest first), to spare a read.
    Only within CHAT_RESUME_SECONDS of the question, and only while the bot answers."""
    if not conversation.bot_answers:
        return None
    newest = shown[-1] if shown else selectors.newest_message(conversation)
    if newest is None or newest.role != Role.VISITOR or newest.flag("to_operator"):
        return None
    if newest.created_at < timezone.now() - timedelta(seconds=settings.CHAT_RESUME_SECONDS):
        return None
    newest.conversation = conversation
    return newest


def question_answer_returned(*, message_id: int) -> list[Message]:
    """The bot is back (an operator pressed «Вернуть боту»): it answers the visitor's question that
    nobody answered while a person was awaited, through the same chain as any turn (rules, search,
    sources and fact checks), and the visitor's widgets hear it with its typing dots. Nothing when
    the conversation is no longer the bot's, the visitor has written since, or someone answered it
    (an operator, or another run of this: the claim and the one-reply constraint decide)."""
    visitor_message = selectors.owed_after_return(message_id=message_id)
    if visitor_message is None or not claims.claim(visitor_message.pk):
        return []
    conversation_id = visitor_message.conversation_id
    events.publish_typing(conversation_id, on=True, by=Role.BOT)
    try:
        if selectors.bot_reply_to(visitor_message) is not None:
            return []
        return _store_reply(visitor_message, _run_chain(visitor_message, None), to_visitor=True)
    finally:
        claims.release(visitor_message.pk)
        events.publish_typing(conversation_id, on=False, by=Role.BOT)


def message_receive(
    *, conversation: Conversation, text: str, client_msg_id: str
) -> tuple[Message, Message | None, bool]:
    """Take a visitor message and answer it: (visitor message, bot reply or None, created).
    The reply is None while an operator is asked for or present (the bot stays silent)."""
    taken = message_take(conversation=conversation, text=text, client_msg_id=client_msg_id)
    produced = taken.produced
    if produced is None:
        produced = message_answer(visitor_message=taken.message, just_stored=taken.created)
    reply = next((m for m in produced if m.role == Role.BOT), None)
    return taken.message, reply, taken.created


def message_rate(*, conversation: Conversation, message_id: int, rating: int) -> Message:
    """A visitor's thumbs on a bot answer of their own conversation; thumbs-down is friction, and
    (escalation rule) brings an offer of a person, once per conversation, to the visitor's sockets."""
    if rating not in (-1, 0, 1):
        raise ValidationFailed(code="bad_frame", key="frame_rating")
    writes.rate_check("rating", bot_id=conversation.bot_id, visitor_id=conversation.visitor_id, ip=conversation.last_ip)
    with transaction.atomic():
        message = (
            Message.objects.select_for_update()
            .filter(pk=message_id, conversation=conversation, role=Role.BOT)
            .first()
        )
        if message is None:
            raise NotFound("Это сообщение не найдено в вашем разговоре.")
        writes.message_rating_set(message, rating)
        if rating < 0:
            signals.flagged_on_commit(message)
            _offer_after_rating(conversation, message, rating)
    return message


def _offer_after_rating(conversation: Conversation, message: Message, rating: int) -> None:
    bot = conversation.bot
    if conversation.handoff_offered or not bot.handoff_enabled or escalation.after_rating(bot, rating) is None:
        return
    current = _locked(conversation)
    if current.handoff_offered or current.state != State.BOT:
        return
    notes = _escalation_offer(current, "thumbs_down")
    events.publish(current, messages=notes, to_visitor=True)


def conversation_handoff(*, conversation: Conversation, reason: str) -> list[Message]:
    """Ask for an operator: waiting_operator plus a system note (returned; [] if already asked)."""
    freshness.bot_fresh(conversation.bot)  # the owner may have turned handoff off since hello
    if not conversation.bot.handoff_enabled:
        raise HandoffUnavailable(replies.handoff_disabled(conversation.bot))
    writes.rate_check("handoff", bot_id=conversation.bot_id, visitor_id=conversation.visitor_id,
                      ip=conversation.last_ip)
    with transaction.atomic():
        current = _locked(conversation)
        produced = _handoff(current, reason[:200])
    states.catch_up(conversation, current.state)
    return produced


def conversation_close(*, conversation: Conversation, outcome: str = "", notify: bool = True) -> Conversation:
    """End a conversation; the visitor's next hello opens a new one. `notify=False` for the
    throwaway conversations of `ask` and evaluations: no webhook for those."""
    with transaction.atomic():
        current = _locked(conversation)
        close_locked(current, outcome=outcome, notify=notify)
    states.catch_up(conversation, current.state)
    conversation.outcome = current.outcome
    return current


def close_locked(
    conversation: Conversation, *, outcome: str, messages: list[Message] | None = None, notify: bool = True,
    by: Any = None,
) -> bool:
    """Close a locked conversation (inside its transaction, `states.to_closed`; `by`: the operator
    who closed it) and tell everyone after commit; closing a closed one does nothing (False)."""
    if not states.to_closed(conversation, outcome=outcome, by=by):
        return False
    events.publish(conversation, messages=messages or [], to_visitor=True, state_changed=True)
    if notify:
        webhooks.webhook_emit(bot=conversation.bot, event=webhooks.CONVERSATION_CLOSED, conversation=conversation)
    return True


def conversation_ask_once(*, bot: Bot, text: str, visitor_id: str = "cli") -> Message | None:
    """One question outside the widget (`manage.py ask`, evaluation): the same services and chain
    as a visitor gets, in a conversation that is closed right after, so every call starts clean
    (a previous run that asked for an operator would otherwise silence the bot)."""
    conversation = conversation_open(bot=bot, visitor_id=visitor_id)
    if not conversation.bot_answers:
        conversation_close(conversation=conversation, outcome="abandoned", notify=False)
        conversation = conversation_open(bot=bot, visitor_id=visitor_id)
    try:
        _visitor, reply, _created = message_receive(
            conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex
        )
    finally:
        conversation_close(conversation=conversation, outcome=visitor_id, notify=False)
    return reply
