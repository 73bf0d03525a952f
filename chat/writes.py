"""The smallest writes of the chat, shared by its services (services, handoff, leads): what a
person's text may contain, how a conversation row is locked, and every write of a `Message` (the
visitor's, the bot's answer, the operator's, the system notes, and later marks on them: flags, the
intent, the visitor's rating). This is the one module that writes a Message (tests/test_writers.py).
Nothing here decides what happens in a conversation; the services do: they lock the conversation,
call these inside their transaction and publish after commit.

The unique constraints of chat/models.py decide the races: a resent client_msg_id or a second
answer to one message fails here, at the INSERT."""

from __future__ import annotations

import re
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from answers import pipeline, replies
from chat import frames
from chat.exceptions import RateLimited, ValidationFailed
from chat.models import VISITOR_ID_PATTERN, Conversation, Message, visitor_id_validator
from chat.selectors import NOT_QUESTIONS
from core import ratelimit

MAX_TEXT: Final = 2000
VISITOR_ID: Final = re.compile(VISITOR_ID_PATTERN.removeprefix("^").removesuffix("$"))
MAX_CLIENT_MSG_ID: Final = 64
# C0/C1 controls except tab and newline, zero-width characters and bidi overrides (used to make
# text read differently from what it is), and lone surrogates (valid in JSON's \ud800 escapes,
# never in text PostgreSQL can store).
_CONTROL: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)


def clean_line(text: str) -> str:
    """A one-line field a person typed (a name, a phone): no control or invisible characters,
    runs of whitespace as one space."""
    return " ".join(_CONTROL.sub("", text).split())


def clean_text(text: str) -> str:
    """A visitor's text as stored: no control characters, Unix newlines, trimmed, 1..MAX_TEXT chars."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).replace("\t", " ").strip()
    if not text:
        raise ValidationFailed(code="empty")
    if len(text) > MAX_TEXT:
        raise ValidationFailed(code="too_long", limit=MAX_TEXT)
    return text


def check_visitor_id(visitor_id: str) -> None:
    try:
        if not isinstance(visitor_id, str) or not VISITOR_ID.fullmatch(visitor_id):  # "$" would let "\n" in
            raise ValidationError("bad visitor id")
        visitor_id_validator(visitor_id)
    except ValidationError as exc:
        raise ValidationFailed(
            "Не удалось узнать посетителя. Обновите страницу и попробуйте ещё раз.", code="bad_frame"
        ) from exc


MAX_PAGE_URL: Final = 500


def clean_page_url(url: str | None) -> str:
    """The page the visitor is on, as the widget reports it: an http(s) address or nothing."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return ""
    return _CONTROL.sub("", url)[:MAX_PAGE_URL]


def check_client_msg_id(client_msg_id: str, *, required: bool = True) -> None:
    """1–64 visible characters (frames.NOT_AN_ID), or empty where a caller needs no idempotency."""
    if (required and not client_msg_id) or len(client_msg_id) > MAX_CLIENT_MSG_ID or frames.NOT_AN_ID.search(
        client_msg_id
    ):
        raise ValidationFailed(code="bad_frame", key="frame_message_id")


def locked(conversation_id: int) -> Conversation:
    """The conversation under a row lock (call inside a transaction), with its bot: every state
    change of a conversation starts here, so two of them never interleave.

    Never join a row that changes (the operator) into this query: when the lock had to wait,
    PostgreSQL re-reads the locked row but keeps the joined rows it read before the wait, so a
    just-assigned operator would come back as "nobody" (twenty simultaneous takes had three
    winners that way). Read `assigned_to` after the lock."""
    return Conversation.objects.select_related("bot").select_for_update(of=("self",)).get(pk=conversation_id)


def system_note(
    conversation: Conversation, key: str, *, buttons: list[dict[str, str]] | None = None,
    reply_to: Message | None = None, meta: dict[str, object] | None = None,
    flags: dict[str, bool] | None = None, **values: str,
) -> Message:
    """A system message in the bot's language (a locked conversation, inside its transaction)."""
    return message_store_system(
        conversation, replies.say(conversation.bot, key, **values), buttons=buttons, reply_to=reply_to,
        meta=meta, flags=flags,
    )


# --- messages: every write of a Message -------------------------------------------------------------
# Each is called inside the caller's transaction, on rows it has locked: the conversation (`locked`,
# `touch`), or for a rating the rated message itself.


def message_store_system(
    conversation: Conversation, text: str, *, buttons: list[dict[str, str]] | None = None,
    reply_to: Message | None = None, meta: dict[str, object] | None = None,
    flags: dict[str, bool] | None = None,
) -> Message:
    """A system message with its text as given (`system_note` for one of the bot's stored texts)."""
    return Message.objects.create(
        conversation=conversation, bot_id=conversation.bot_id, role=Message.Role.SYSTEM, text=text,
        buttons=buttons or [], reply_to=reply_to, llm_meta=meta or {}, flags=flags or {},
    )


def message_store_visitor(
    conversation: Conversation, *, text: str, client_msg_id: str, flags: dict[str, bool], intent: str
) -> Message:
    """A visitor's message, its text cleaned already (`clean_text`). The caller has looked for the
    same client_msg_id under the conversation's lock: a resend never gets this far."""
    return Message.objects.create(
        conversation=conversation, bot_id=conversation.bot_id, role=Message.Role.VISITOR, text=text,
        client_msg_id=client_msg_id, flags=flags, intent=intent[:32],
    )


def message_store_answer(conversation: Conversation, visitor_message: Message, reply: pipeline.Reply) -> Message:
    """The bot's answer to `visitor_message`, as the chain made it. A second answer to one message
    fails at `message_one_bot_reply`; the caller has looked for one under the conversation's lock."""
    message = Message(
        conversation=conversation, bot_id=conversation.bot_id, role=Message.Role.BOT, text=reply.text,
        intent=reply.intent[:32], sources=reply.sources, source_entry_id=reply.source_entry_id,
        confidence=reply.confidence, links=reply.links, buttons=reply.buttons, cards=reply.cards,
        flags={k: True for k, v in reply.flags.items() if v}, reply_to=visitor_message,
        llm_meta={**reply.llm_meta, "timings": reply.timings},
    )
    message.save(force_insert=True)
    if conversation.answered_at is None and answers_a_question(reply):
        _first_answer_mark(conversation, message.created_at)
    return message


def answers_a_question(reply: pipeline.Reply) -> bool:
    """Whether the bot's reply answered: not the honest no-answer, not small talk."""
    return not reply.flags.get("unanswered") and reply.intent not in NOT_QUESTIONS


def _first_answer_mark(conversation: Conversation, when: Any) -> None:
    """The conversation's first real answer, for the overview's live «ответил бот» (one UPDATE, once
    per conversation: the socket's copy learns the value from `touch`)."""
    Conversation.objects.filter(pk=conversation.pk, answered_at__isnull=True).update(answered_at=when)
    conversation.answered_at = when


def message_store_operator(
    conversation: Conversation, *, operator: Any, text: str, client_msg_id: str
) -> tuple[Message, bool]:
    """An operator's message, signed with their name: (message, created). A resend racing the first
    meets `message_unique_client_msg_id` inside a savepoint and gets the stored message (created
    False), the caller's transaction going on."""
    try:
        with transaction.atomic():
            message = Message.objects.create(
                conversation=conversation, bot_id=conversation.bot_id, role=Message.Role.OPERATOR, text=text,
                client_msg_id=client_msg_id, author=operator, author_name=frames.display_name(operator),
            )
    except IntegrityError:
        return Message.objects.get(conversation_id=conversation.pk, client_msg_id=client_msg_id), False
    return message, True


def message_flag_add(message: Message, name: str) -> None:
    """Mark a stored message with flag `name` (a bot answer the visitor complained about or asked
    again: `friction`); the caller tells the review queue (`signals.flagged_on_commit`)."""
    message.flags = {**(message.flags or {}), name: True}
    message.save(update_fields=["flags"])


def message_intent_set(message: Message, intent: str) -> None:
    """A visitor message's intent as the model read it, when it differs from the rules' reading."""
    message.intent = intent[:32]
    message.save(update_fields=["intent"])


def message_rating_set(message: Message, rating: int) -> None:
    """A visitor's thumbs on a bot answer read under its row lock; thumbs-down marks it `friction`
    in the same UPDATE."""
    message.rating = rating
    if rating < 0:
        message.flags = {**(message.flags or {}), "friction": True}
    message.save(update_fields=["rating", "flags"])


# What `touch` reads back: everything of the row that others (operators, the contact form, tasks)
# change while a socket keeps its own copy of the conversation.
_FRESH: Final = (
    "state", "assigned_to_id", "waiting_since", "unread", "handoff_offered", "visitor_name", "visitor_contact",
    "page_url", "last_ip", "answered_at", "updated_at",
)


def _column(name: str) -> str:
    field = Conversation._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column
    return str(field.column)


def touch(conversation: Conversation) -> Conversation:
    """Lock the conversation's row and mark it active in one statement (UPDATE … RETURNING),
    refreshing the caller's copy with what others may have changed since it was read; call inside
    a transaction. The hot path of a visitor's turn: a separate SELECT … FOR UPDATE and UPDATE
    would be two statements."""
    quote, meta = connection.ops.quote_name, Conversation._meta
    columns = ", ".join(quote(_column(name)) for name in _FRESH)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} SET {quote(_column('updated_at'))} = %s "  # noqa: S608 - model names
            f"WHERE {quote(_column('id'))} = %s RETURNING {columns}",
            [timezone.now(), conversation.pk],
        )
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {conversation.pk} is gone")
    for name, value in zip(_FRESH, row, strict=True):
        setattr(conversation, name, value)
    return conversation


def rate_check(kind: str, *, bot_id: int, visitor_id: str, ip: str | None) -> None:
    """Count one write of `kind` (core/ratelimit.py); the visitor's RateLimited error when over a limit."""
    try:
        ratelimit.check(kind, bot_id=bot_id, visitor_id=visitor_id, ip=ip)
    except ratelimit.OverLimit as over:
        raise RateLimited(over.retry_after, what=over.what) from None
