"""The operator socket (`/ws/inbox/`). Transport only: check the session and the origin, parse a
frame, call one service in a worker thread, send the result. The protocol is
docs/operator-protocol.md.

What must stay true:
- Only a signed-in member (owner or operator) of a bot hears about its conversations: the socket
  joins the feed group of each of the user's bots at `hello`, every action re-checks access, and
  the bot list is re-read now and then, so a removed member stops hearing within a minute.
- `Origin` must be this server's own: another site cannot drive an operator's signed-in browser.
- A conversation of another bot is `not_found`, exactly like one that does not exist.
- Frames of one socket are handled one at a time, in order, as on the widget socket.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation.trans_real import parse_accept_lang_header

from chat import access as chat_access
from chat import frames as chat_frames
from chat import handoff, presence, selectors
from chat.consumers import DbThreadsConsumer, _db
from chat.events import bot_feed_group
from chat.exceptions import ChatError, HelloRequired, ServerError
from inbox import assignment, canned, copilot, frames, notes
from inbox.access import access_conversation, access_conversation_id, inbox_bot_ids

logger = logging.getLogger("spravka.inbox")

CLOSE_LOGIN_REQUIRED: Final = 4401
CLOSE_ORIGIN_REFUSED: Final = 4403
# How often the socket re-reads which bots its user belongs to (seconds).
MEMBERSHIP_RECHECK: Final = 30.0
# An open tab's pings keep its operator on hand (inbox/presence.py); one write per this many seconds.
SEEN_EVERY: Final = 30.0


def _queue(user: Any, bot_ids: set[int]) -> list[dict[str, Any]]:
    queue = selectors.inbox_queue(bot_ids=bot_ids, operator_id=user.pk)
    return [chat_frames.conversation_json(c, last_message=c.last_message) for c in queue.all()]  # type: ignore[attr-defined]


def _open(user: Any, conversation_id: int, bot_ids: set[int]) -> dict[str, Any]:
    conversation_id = access_conversation_id(user, conversation_id, bot_ids=bot_ids)
    conversation = handoff.conversation_mark_read(conversation_id=conversation_id)
    messages = selectors.transcript(conversation)
    return {
        "type": "transcript", "conversation_id": conversation.pk,
        "conversation": chat_frames.conversation_json(conversation, last_message=messages[-1] if messages else None),
        "messages": [chat_frames.message_json(m) for m in messages],
        "unanswered": sorted(selectors.unanswered_question_ids(messages)),
        "notes": [notes.note_json(note) for note in notes.notes_of(conversation)],
    }


def _act(user: Any, action: frames.Action, bot_ids: set[int]) -> None:
    conversation_id = access_conversation_id(user, action.conversation_id, bot_ids=bot_ids)
    service = {
        "take": handoff.conversation_take, "release": handoff.conversation_release,
        "close": handoff.conversation_finish,
    }[action.kind]
    service(conversation_id=conversation_id, operator=user)
    if action.kind != "take":  # a place freed: the next waiting conversation may go out in turn
        assignment.bots_assign(bot_ids)


def _arrived(user: Any, bot_ids: set[int]) -> dict[str, Any]:
    """A tab opened: the operator is on hand (unless they said they are away), and their bots'
    waiting conversations may go out in turn."""
    presence.presence_seen(user)
    away = presence.is_away(user)
    if not away:
        assignment.bots_assign(bot_ids)
    return {"type": "presence", "away": away}


def _presence_set(user: Any, frame: frames.SetPresence, bot_ids: set[int]) -> dict[str, Any]:
    presence.presence_away_set(user, away=frame.away)
    if not frame.away:
        assignment.bots_assign(bot_ids)
    return {"type": "presence", "away": frame.away}


def _send_message(user: Any, frame: frames.SendMessage, bot_ids: set[int]) -> dict[str, Any]:
    if frame.canned_id is not None:
        conversation = access_conversation(user, frame.conversation_id, bot_ids=bot_ids)
        message = canned.canned_message_send(conversation=conversation, operator=user, frame=frame)
        return chat_frames.message_json(message)
    conversation_id = access_conversation_id(user, frame.conversation_id, bot_ids=bot_ids)
    message = handoff.operator_message_send(
        conversation_id=conversation_id, operator=user, text=frame.text, client_msg_id=frame.client_msg_id
    )
    return chat_frames.message_json(message)


def _note(user: Any, frame: frames.AddNote, bot_ids: set[int]) -> dict[str, Any]:
    conversation = access_conversation(user, frame.conversation_id, bot_ids=bot_ids)
    return notes.note_json(notes.note_add(conversation=conversation, author=user, text=frame.text))


def _transfer(user: Any, frame: frames.Transfer, bot_ids: set[int]) -> None:
    conversation_id = access_conversation_id(user, frame.conversation_id, bot_ids=bot_ids)
    handoff.conversation_transfer(conversation_id=conversation_id, operator=user, to_id=frame.to)
    assignment.bots_assign(bot_ids)


def _typing(user: Any, frame: frames.Typing, bot_ids: set[int]) -> None:
    conversation_id = access_conversation_id(user, frame.conversation_id, bot_ids=bot_ids)
    handoff.operator_typing(conversation_id=conversation_id, on=frame.on)


def _suggest(user: Any, frame: frames.Suggest, bot_ids: set[int]) -> dict[str, Any]:
    conversation = access_conversation(user, frame.conversation_id, bot_ids=bot_ids)
    return copilot.suggestions_for(conversation=conversation)


def _draft(user: Any, frame: frames.Draft, bot_ids: set[int], language: str) -> dict[str, Any]:
    conversation = access_conversation(user, frame.conversation_id, bot_ids=bot_ids)
    return copilot.draft_for(conversation=conversation, language=language)


def scope_language(scope: dict[str, Any]) -> str:
    """The operator's language, picked as LocaleMiddleware picks a page's: the language switch's
    cookie, else the browser's Accept-Language, else the installation's."""
    cookie = (scope.get("cookies") or {}).get(settings.LANGUAGE_COOKIE_NAME)
    asked = [lang for lang, _q in parse_accept_lang_header(chat_access.header(scope, b"accept-language") or "")]
    for code in ([cookie] if cookie else []) + asked:
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return str(settings.LANGUAGE_CODE)


class InboxConsumer(DbThreadsConsumer):
    user: Any = None
    language: str = "ru"
    bot_ids: set[int] | None = None  # None until hello
    checked_at = 0.0
    seen_at = 0.0  # when this socket last said its operator is on hand (monotonic)
    gone = False

    async def connect(self) -> None:
        self.opened: set[int] = set()
        self.feeds: set[str] = set()
        await self.accept()  # then refuse with a readable frame, as the widget socket does
        self.language = scope_language(self.scope)
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            with translation.override(self.language):
                text = _("Войдите в систему, чтобы отвечать посетителям.")
            await self._refuse(CLOSE_LOGIN_REQUIRED, "login_required", text)
            return
        origin = chat_access.header(self.scope, b"origin")
        if not chat_access.is_own_origin(origin, self.scope):
            logger.warning("inbox socket refused: origin %r is not this server's", origin)
            with translation.override(self.language):
                text = _("Входящие открываются только с этого сервера.")
            await self._refuse(CLOSE_ORIGIN_REFUSED, "origin_refused", text)
            return
        self.user = user

    async def _refuse(self, code: int, error: str, message: str) -> None:
        await self._send({"type": "error", "code": error, "message": message})
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        for group in list(self.feeds):
            await self.channel_layer.group_discard(group, self.channel_name)
        self.feeds.clear()
        if self.bot_ids is not None:  # the operator's away-after-minutes count from this tab's close
            await _db(presence.presence_seen)(self.user)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.user is None:
            return
        frame: frames.OperatorFrame | None = None
        try:
            frame = frames.parse(text_data, bytes_data)
            await self._dispatch(frame)
        except ChatError as error:
            await self._send(self._error(error, frame))
        except Exception:
            logger.exception("operator frame failed for user %s", self.user.pk)
            await self._send(self._error(ServerError(), frame))

    def _error(self, error: ChatError, frame: frames.OperatorFrame | None) -> dict[str, Any]:
        result = chat_frames.error_frame(error, client_msg_id=getattr(frame, "client_msg_id", None),
                                         language=self.language)
        if error.custom:  # a Russian text marked for translation where it was raised (gettext_noop)
            with translation.override(self.language):
                result["message"] = _(error.custom)
        if hasattr(frame, "conversation_id"):
            result["conversation_id"] = frame.conversation_id  # type: ignore[union-attr]
        if hasattr(error, "holder"):
            result["holder"] = error.holder
        return result

    async def _dispatch(self, frame: frames.OperatorFrame) -> None:
        if isinstance(frame, frames.Ping):
            if self.bot_ids is not None and time.monotonic() - self.seen_at > SEEN_EVERY:
                self.seen_at = time.monotonic()
                await _db(presence.presence_seen)(self.user)
            await self._send({"type": "pong"})
            return
        if isinstance(frame, frames.Hello):
            await self._hello()
            return
        if self.bot_ids is None:
            raise HelloRequired()
        if isinstance(frame, frames.SendMessage):
            message = await _db(_send_message)(self.user, frame, self.bot_ids)
            self.opened.add(frame.conversation_id)
            await self._send({"type": "ack", "client_msg_id": frame.client_msg_id,
                              "conversation_id": frame.conversation_id, "message": message})
        elif isinstance(frame, frames.Typing):
            await _db(_typing)(self.user, frame, self.bot_ids)
        elif isinstance(frame, frames.Suggest):
            await self._send(await _db(_suggest)(self.user, frame, self.bot_ids))
        elif isinstance(frame, frames.AddNote):
            note = await _db(_note)(self.user, frame, self.bot_ids)
            self.opened.add(frame.conversation_id)
            await self._send({"type": "note", "conversation_id": frame.conversation_id, "note": note})
        elif isinstance(frame, frames.Transfer):
            await _db(_transfer)(self.user, frame, self.bot_ids)
        elif isinstance(frame, frames.SetPresence):
            await self._send(await _db(_presence_set)(self.user, frame, self.bot_ids))
        elif isinstance(frame, frames.Draft):
            await self._send(await _db(_draft)(self.user, frame, self.bot_ids, self.language))
        elif frame.kind == "open":
            transcript = await _db(_open)(self.user, frame.conversation_id, self.bot_ids)
            self.opened.add(frame.conversation_id)
            transcript["conversation"] = self._labelled(transcript["conversation"])
            await self._send(transcript)
        else:
            await _db(_act)(self.user, frame, self.bot_ids)

    async def _hello(self) -> None:
        await self._refresh_membership()
        assert self.bot_ids is not None
        conversations = await _db(_queue)(self.user, self.bot_ids)
        await self._send({"type": "queue", "conversations": [self._labelled(c) for c in conversations]})
        self.seen_at = time.monotonic()
        await self._send(await _db(_arrived)(self.user, self.bot_ids))

    def _labelled(self, conversation: dict[str, Any]) -> dict[str, Any]:
        """The visitor named in this operator's language (frames are built in another's)."""
        return chat_frames.conversation_labelled(conversation, language=self.language)

    async def _refresh_membership(self) -> None:
        """Join the feeds of the user's bots now, leave those they no longer belong to."""
        self.bot_ids = await _db(inbox_bot_ids)(self.user)
        self.checked_at = time.monotonic()
        wanted = {bot_feed_group(bot_id) for bot_id in self.bot_ids}
        for group in wanted - self.feeds:
            await self.channel_layer.group_add(group, self.channel_name)
        for group in self.feeds - wanted:
            await self.channel_layer.group_discard(group, self.channel_name)
        self.feeds = wanted

    # Channel-layer events from chat (chat/events.py), after commit.
    async def chat_conversation(self, event: dict[str, Any]) -> None:
        if self.bot_ids is None:
            return
        if time.monotonic() - self.checked_at > MEMBERSHIP_RECHECK:
            await self._refresh_membership()
        if event.get("bot_id") not in self.bot_ids:  # left the bot since the event was queued
            return
        conversation = self._labelled(event["conversation"])
        await self._send({"type": "conversation", "conversation": conversation})
        holder = conversation.get("assigned_to") or {}
        if conversation["id"] in self.opened or holder.get("id") == self.user.pk:
            for message in event.get("messages") or []:
                await self._send({"type": "message", "conversation_id": conversation["id"], "message": message})

    async def inbox_note(self, event: dict[str, Any]) -> None:
        """A note (inbox/notes.py) for the sockets that have its conversation open."""
        if self.bot_ids is None or event.get("bot_id") not in self.bot_ids:
            return
        if event["conversation_id"] in self.opened:
            await self._send({"type": "note", "conversation_id": event["conversation_id"], "note": event["note"]})

    async def _send(self, frame: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            await self.send(text_data=DjangoJSONEncoder(ensure_ascii=False).encode(frame))
        except OSError:
            self.gone = True
