"""Operators in Telegram: an operator links their Telegram chat with the bot from the inbox (a
one-time code sent as /start op_<code>); a conversation that starts waiting for an operator
reaches every linked operator of its bot as a message with «Взять»; replying to that message
answers the visitor in whatever channel they write from; «Вернуть боту» and «Завершить» release
and close. The one module that writes an `OperatorLink` or an `OperatorLinkCode`.

What must stay true:
- A code links once, within CODE_MINUTES, only in a chat of the bot it was made for, and only while
  its operator still works in that bot; a wrong, used or expired code links nothing.
- A linked chat is the operator's, never a visitor's: its updates are handled here and open no
  conversation.
- Every action (take, reply, release, close) goes through chat.handoff as the linked user, after
  checking that the conversation belongs to the chat's bot and that the user still works in it
  (`bots.selectors.inbox_bots`, as the inbox checks): an operator of another bot moves nothing.
- What the operator is sent is a delivery (messengers/delivery.py): logged, ordered, retried; the
  notice about a conversation keeps the conversation, so a reply to it finds the conversation.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone, translation

from answers import replies
from bots.models import Bot
from bots.selectors import inbox_bots, inbox_users
from chat import handoff, presence
from chat.exceptions import AlreadyTaken, ChatError, ConversationClosed
from chat.models import Conversation, Message
from messengers import delivery, services, telegram, transports
from messengers.incoming import Incoming
from messengers.models import Connection, Delivery, MessengerChat, OperatorLink, OperatorLinkCode

CODE_MINUTES: Final = 15
PREFIX: Final = "op_"  # /start op_<code>
QUESTION_CHARS: Final = 600  # the visitor's question as the notice quotes it
TAKE, RELEASE, CLOSE = "take", "release", "close"
ACTIONS: Final = (TAKE, RELEASE, CLOSE)


class NotOperator(Exception):
    """The user does not work in this bot (or it has no Telegram connected)."""


def works_in(user: Any, bot_id: int) -> bool:
    """Whether `user` may answer the bot's conversations: the inbox's own rule (owner or operator)."""
    return bool(user.is_active) and inbox_bots(user).filter(pk=bot_id).exists()


def telegram_of(bot: Bot) -> Connection | None:
    return Connection.objects.filter(bot=bot, kind=Connection.Kind.TELEGRAM).exclude(
        status=Connection.Status.DISCONNECTED).first()


# ----- linking ------------------------------------------------------------------------------------


def code_make(*, user: Any, bot: Bot) -> OperatorLinkCode:
    """A fresh one-time code that links `user`'s Telegram chat with the bot's; NotOperator when they
    do not work in the bot or it has no Telegram."""
    if not works_in(user, bot.pk) or telegram_of(bot) is None:
        raise NotOperator()
    return OperatorLinkCode.objects.create(user=user, bot=bot,
                                           expires_at=timezone.now() + timedelta(minutes=CODE_MINUTES))


def link_by_code(*, connection: Connection, chat: MessengerChat, code: str) -> OperatorLink | None:
    """Link the chat to the code's operator; None when the code is wrong, used, expired, of another
    bot, or its operator no longer works in the bot."""
    now = timezone.now()
    with transaction.atomic():
        found = (OperatorLinkCode.objects.select_for_update(of=("self",)).select_related("user")
                 .filter(code=code, bot_id=connection.bot_id, used_at__isnull=True, expires_at__gt=now).first())
        if found is None or not works_in(found.user, connection.bot_id):
            return None
        found.used_at = now
        found.save(update_fields=["used_at"])
        OperatorLink.objects.filter(chat=chat).exclude(user=found.user).delete()  # one person per chat
        link, _created = OperatorLink.objects.update_or_create(user=found.user, connection=connection,
                                                               defaults={"chat": chat})
    return link


def link_remove(*, user: Any, bot: Bot) -> int:
    """Unlink the user's Telegram chat with the bot: nothing reaches it any more."""
    removed, _kinds = OperatorLink.objects.filter(user=user, connection__bot=bot).delete()
    return int(removed)


def links_of(user: Any) -> dict[int, OperatorLink]:
    """The user's links by bot id."""
    return {link.connection.bot_id: link for link in
            OperatorLink.objects.filter(user=user).select_related("connection", "chat")}


# ----- a conversation waits -----------------------------------------------------------------------


def _waiting_text(conversation: Conversation) -> str:
    bot = conversation.bot
    language = replies.bot_language(bot)
    with translation.override(language):
        channel = str(conversation.get_channel_display())
        name = conversation.visitor_label
    text = replies.say(bot, "tg_operator_waiting", name=name, channel=channel)
    question = (Message.objects.filter(conversation=conversation, role=Message.Role.VISITOR)
                .order_by("-id").values_list("text", flat=True).first())
    if question:
        question = " ".join(question.split())
        if len(question) > QUESTION_CHARS:
            question = question[: QUESTION_CHARS - 1].rstrip() + "…"
        text = f"{text}\n«{question}»"
    return text


def _operator_chats(bot_id: int) -> QuerySet[MessengerChat]:
    """The Telegram chats where the bot's operators (still in its team) hear about waiting visitors."""
    return MessengerChat.objects.filter(
        operator_links__connection__bot_id=bot_id, connection__kind=Connection.Kind.TELEGRAM,
        blocked_at__isnull=True, operator_links__user__in=get_user_model().objects.filter(inbox_users(bot_id)),
    ).exclude(connection__status=Connection.Status.DISCONNECTED)


def anyone_linked(bot: Bot) -> bool:
    """Whether an operator of the bot who has not said «Отошёл(ла)» would be told in Telegram now:
    then a visitor who asks for a person is not told that nobody is there (chat/presence.py)."""
    return _operator_chats(bot.pk).exclude(operator_links__user__in=presence.said_away()).exists()


def waiting_notify(*, conversation_id: int, bot_id: int, message_id: int) -> int:
    """Tell every linked operator of the bot that the conversation waits (once per wait: the
    handoff's note `message_id` is in the key); the number of chats told. A few queries however many
    operators are linked: the notices are made in one statement and sent together by one task."""
    chats = list(_operator_chats(bot_id).select_related("connection").distinct())
    if not chats:
        return 0
    conversation = Conversation.objects.select_related("bot").filter(pk=conversation_id).first()
    if conversation is None or conversation.state != Conversation.State.WAITING_OPERATOR:
        return 0
    bot = conversation.bot
    text = _waiting_text(conversation)
    actions = [(replies.say(bot, "tg_operator_take"), f"{TAKE}:{conversation_id}")]
    delivery.deliveries_for_operators(chats, key=f"w:{conversation_id}:{message_id}", text=text,
                                      conversation_id=conversation_id, actions=actions)
    delivery.deliver_together_soon(chats)
    return len(chats)


def notices_taken(*, conversation_id: int, bot_id: int, holder: str) -> int:
    """The conversation was taken (here or in the inbox): every notice of its wait that reached an
    operator loses «Взять» and says who took it, so nobody presses it for nothing. The number of
    notices changed; one still on its way keeps its button (pressing it says who took it)."""
    notices = list(Delivery.objects.select_related("chat__connection__bot").filter(
        conversation_id=conversation_id, connection__bot_id=bot_id, connection__kind=Connection.Kind.TELEGRAM,
        key__startswith=f"w:{conversation_id}:", status=Delivery.Status.DELIVERED, result_message_id__isnull=False,
    ))
    if not notices:
        return 0
    line = replies.say(notices[0].chat.connection.bot, "tg_operator_notice_taken", holder=holder)
    for notice in notices:
        method, params = telegram.notice_edit(notice.params, notice.result_message_id or 0, line)
        delivery.delivery_for_call(notice.chat, key=f"{delivery.NOTICE_EDIT}{notice.pk}", method=method, params=params)
    delivery.deliver_together_soon(list({notice.chat_id: notice.chat for notice in notices}.values()))
    return len(notices)


# ----- the operator's updates -----------------------------------------------------------------------


def update_handle(connection: Connection, chat: MessengerChat, read: Incoming) -> bool:
    """Handle an update of an operator's chat (or a chat linking itself); False when it is a
    visitor's and the visitor's way should take it. Replies are queued; the caller sends them."""
    if connection.kind != Connection.Kind.TELEGRAM or read.kind == "membership":
        return False
    bot = connection.bot
    key = f"u:{read.event_id}"
    if read.kind == "start" and read.payload.startswith(PREFIX):
        link = link_by_code(connection=connection, chat=chat, code=read.payload.removeprefix(PREFIX))
        text = (replies.say(bot, "tg_operator_linked", name=bot.name) if link
                else replies.say(bot, "tg_operator_code_bad"))
        delivery.delivery_for_text(chat, key=key, text=text)
        return True
    link = OperatorLink.objects.select_related("user").filter(chat=chat).first()
    if link is None:
        return False
    if read.kind == "button":
        transports.of(connection.kind).button_answered(services.token_of(connection), read)
        action, _, number = read.data.partition(":")
        if action in ACTIONS and number.isdigit():
            _act(connection, chat, link, read, action, int(number))
            return True
    elif read.kind == "text" and read.reply_to is not None:
        conversation_id = delivery.conversation_replied(chat, read.reply_to)
        if conversation_id is not None:
            _act(connection, chat, link, read, "reply", conversation_id)
            return True
    delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_hint"))
    return True


def _act(connection: Connection, chat: MessengerChat, link: OperatorLink, read: Incoming, action: str,
         conversation_id: int) -> None:
    bot = connection.bot
    key = f"u:{read.event_id}"
    operator = link.user
    if (not Conversation.objects.filter(pk=conversation_id, bot_id=bot.pk).exists()
            or not works_in(operator, bot.pk)):
        delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_not_found"))
        return
    try:
        if action == TAKE:
            handoff.conversation_take(conversation_id=conversation_id, operator=operator)
            actions = [(replies.say(bot, "tg_operator_release"), f"{RELEASE}:{conversation_id}"),
                       (replies.say(bot, "tg_operator_close"), f"{CLOSE}:{conversation_id}")]
            delivery.delivery_for_operator(chat, key=key, text=replies.say(bot, "tg_operator_taken"),
                                           conversation_id=conversation_id, actions=actions)
        elif action == RELEASE:
            handoff.conversation_release(conversation_id=conversation_id, operator=operator)
            delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_released"))
        elif action == CLOSE:
            handoff.conversation_finish(conversation_id=conversation_id, operator=operator)
            delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_closed"))
        else:  # a reply: the visitor gets it in their channel (taken first when nobody holds it)
            handoff.operator_message_send(conversation_id=conversation_id, operator=operator, text=read.text,
                                          client_msg_id=f"tg:{read.event_id}")
    except AlreadyTaken as exc:
        delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_already_taken", holder=exc.holder))
    except ConversationClosed:
        delivery.delivery_for_text(chat, key=key, text=replies.say(bot, "tg_operator_conversation_closed"))
    except ChatError as exc:
        delivery.delivery_for_text(chat, key=key, text=exc.message_in(replies.bot_language(bot)))
