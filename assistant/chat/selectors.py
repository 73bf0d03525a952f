"""Reads of the chat. Every query is scoped by conversation (and so by bot): a message id from
another conversation is simply not found."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from django.db.models import DurationField, ExpressionWrapper, F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Now

from assistant.bots.models import Bot
from assistant.chat.models import Conversation, Lead, Message

RESUME_LAST: Final = 50
# Messages the chain sees as history: enough for "а в Казань?" to make sense, short enough for a prompt.
HISTORY_MESSAGES: Final = 6
_HISTORY_ROLES: Final = (Message.Role.VISITOR, Message.Role.BOT, Message.Role.OPERATOR)


def bot_for_widget(public_key: str) -> Bot | None:
    if not public_key or len(public_key) > 64:
        return None
    return Bot.objects.filter(public_key=public_key).first()


def open_conversation(*, bot: Bot, visitor_id: str) -> Conversation | None:
    return (
        Conversation.objects.select_related("bot").filter(bot=bot, visitor_id=visitor_id)
        .exclude(state=Conversation.State.CLOSED)
        .first()
    )


def message_by_client_id(*, conversation: Conversation, client_msg_id: str) -> Message | None:
    if not client_msg_id:
        return None
    return Message.objects.filter(conversation=conversation, client_msg_id=client_msg_id).first()


def bot_reply_to(message: Message) -> Message | None:
    return Message.objects.filter(reply_to=message, role=Message.Role.BOT).first()


def messages_after(*, conversation: Conversation, last_seen_id: int | None) -> list[Message]:
    """What a reconnecting widget missed: every message after `last_seen_id`, oldest first; the
    last RESUME_LAST messages when the widget has seen nothing yet."""
    messages = Message.objects.filter(conversation=conversation)
    if last_seen_id is not None:
        return list(messages.filter(id__gt=last_seen_id).order_by("id"))
    latest = list(messages.order_by("-id")[:RESUME_LAST])
    return latest[::-1]


def history_before(message: Message, limit: int = HISTORY_MESSAGES) -> list[tuple[str, str]]:
    """The turns before `message`, oldest first, as (role, text); system notes are left out."""
    rows = (
        Message.objects.filter(conversation_id=message.conversation_id, id__lt=message.pk, role__in=_HISTORY_ROLES)
        .order_by("-id")
        .values_list("role", "text")[:limit]
    )
    return [(role, text) for role, text in rows][::-1]


def recent_messages(conversation: Conversation, limit: int = 4) -> list[Message]:
    """The latest messages, newest first: what friction detection compares a new message with."""
    # Through the plain manager: the related manager would re-read each row's deferred conversation_id.
    rows = Message.objects.filter(conversation_id=conversation.pk).order_by("-id")
    return list(rows.only("id", "role", "text", "flags")[:limit])


# --- for the operators' inbox (assistant/inbox) -----------------------------------------------------

INBOX_RECENT: Final = 50
INBOX_WAITING_MAX: Final = 1000
TRANSCRIPT_LAST: Final = 500


def _with_last_messages(conversations: list[Conversation]) -> list[Conversation]:
    """Attach each conversation's bot and `last_message`: one query each for all of them. A bot
    is one shared instance for all its rows, not a copy per row read through a join of its wide
    row (with 500 waiting conversations, that copy was a third of the queue's time)."""
    bots = Bot.objects.in_bulk({c.bot_id for c in conversations})
    ids = [c.last_message_id for c in conversations if getattr(c, "last_message_id", None)]  # type: ignore[attr-defined]
    by_id = Message.objects.in_bulk(ids)
    for conversation in conversations:
        conversation.bot = bots[conversation.bot_id]
        conversation.last_message = by_id.get(getattr(conversation, "last_message_id", None))  # type: ignore[attr-defined]
    return conversations


def _inbox_rows(queryset: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """With each row's last message said by a person or the bot (system notes make a poor preview);
    the bot comes from `_with_last_messages`."""
    last = (
        Message.objects.filter(conversation=OuterRef("pk")).exclude(role=Message.Role.SYSTEM)
        .order_by("-id").values("id")[:1]
    )
    return queryset.select_related("assigned_to").annotate(last_message_id=Subquery(last))


@dataclass(frozen=True)
class InboxQueue:
    waiting: list[Conversation]  # longest waiting first
    mine: list[Conversation]  # held by the operator, latest activity first
    recent: list[Conversation]  # everything else of the operator's bots, latest first

    def all(self) -> list[Conversation]:
        return [*self.waiting, *self.mine, *self.recent]


def inbox_queue(*, bot_ids: Collection[int], operator_id: int, recent: int = INBOX_RECENT) -> InboxQueue:
    """What an operator's inbox lists: every waiting conversation of their bots, the ones they
    hold, and the latest others. Five queries whatever the size of the queue."""
    base = Conversation.objects.filter(bot_id__in=list(bot_ids))
    waiting = list(_inbox_rows(base.filter(state=Conversation.State.WAITING_OPERATOR))
                   .order_by("waiting_since", "pk")[:INBOX_WAITING_MAX])
    held = {"state": Conversation.State.OPERATOR, "assigned_to_id": operator_id}
    mine = list(_inbox_rows(base.filter(**held)).order_by("-updated_at"))
    # Neither waiting nor mine, said as conditions: a list of the ids shown made PostgreSQL
    # compare each row with hundreds of ids.
    others = list(_inbox_rows(base.exclude(state=Conversation.State.WAITING_OPERATOR).exclude(**held))
                  .order_by("-updated_at")[:recent])
    _with_last_messages([*waiting, *mine, *others])
    return InboxQueue(waiting=waiting, mine=mine, recent=others)


def inbox_conversation(*, bot_ids: Collection[int], conversation_id: int) -> Conversation | None:
    """One conversation of these bots, as the inbox shows it; None for any other id."""
    rows = list(_inbox_rows(Conversation.objects.filter(bot_id__in=list(bot_ids), pk=conversation_id)))
    return _with_last_messages(rows)[0] if rows else None


def inbox_conversation_id(*, bot_ids: Collection[int], conversation_id: int) -> int | None:
    """The id when the conversation belongs to one of these bots, else None: one primary-key
    lookup, for an operator's action that needs nothing but the right to act."""
    rows = Conversation.objects.filter(bot_id__in=list(bot_ids), pk=conversation_id).values_list("pk", flat=True)
    return next(iter(rows), None)


def transcript(conversation: Conversation, limit: int = TRANSCRIPT_LAST) -> list[Message]:
    """The conversation's messages, oldest first (the last `limit`)."""
    latest = list(Message.objects.filter(conversation_id=conversation.pk).order_by("-id")[:limit])
    return latest[::-1]


def unanswered_question_ids(messages: list[Message]) -> set[int]:
    """The visitor messages the bot could not answer (their reply said «нет точного ответа»)."""
    return {m.reply_to_id for m in messages if m.role == Message.Role.BOT and m.flag("unanswered") and m.reply_to_id}


def waiting_longer_than_alert() -> list[Conversation]:
    """Waiting conversations past their bot's alert time that no e-mail has gone out for."""
    limit = ExpressionWrapper(F("bot__operator_alert_minutes") * timedelta(minutes=1), output_field=DurationField())
    return list(
        Conversation.objects.filter(state=Conversation.State.WAITING_OPERATOR, alerted_at__isnull=True)
        .annotate(limit=limit)
        .filter(waiting_since__lt=Now() - F("limit"))
        .select_related("bot")
        .order_by("waiting_since")[:500]
    )


def leads_for_bots(*, bot_ids: Collection[int]) -> QuerySet[Lead]:
    """The leads of these bots, newest first."""
    return Lead.objects.filter(bot_id__in=list(bot_ids)).select_related("bot", "conversation").order_by("-created_at")
