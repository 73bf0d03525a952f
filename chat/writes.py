"""The smallest writes of the chat, shared by its services (services, handoff, leads): what a
person's text may contain, how a conversation row is locked, and the system notes. Nothing here
decides what happens in a conversation; the services do."""

from __future__ import annotations

import re
from typing import Final

from django.core.exceptions import ValidationError
from django.db import connection, models
from django.utils import timezone

from answers import replies
from chat import frames
from chat.exceptions import RateLimited, ValidationFailed
from chat.models import VISITOR_ID_PATTERN, Conversation, Message, visitor_id_validator
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
    return Message.objects.create(
        conversation=conversation, bot_id=conversation.bot_id, role=Message.Role.SYSTEM,
        text=replies.say(conversation.bot, key, **values), buttons=buttons or [], reply_to=reply_to,
        llm_meta=meta or {}, flags=flags or {},
    )


# What `touch` reads back: everything of the row that others (operators, the contact form, tasks)
# change while a socket keeps its own copy of the conversation.
_FRESH: Final = (
    "state", "assigned_to_id", "waiting_since", "unread", "handoff_offered", "visitor_name", "visitor_contact",
    "page_url", "last_ip", "updated_at",
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
