"""The widget's websocket (`/ws/chat/<public_key>/`). Transport only: parse a frame, check who and
where from, call a service in a thread, send the result. The protocol is docs/widget-protocol.md.

What must stay true:
- Frames of one socket are handled one at a time, in order: replies arrive in the order asked.
- Every database call goes through `_db` (a worker thread, not the shared sync thread), so one
  visitor waiting for a slow chain never stalls another visitor's socket in the same process.
  The worker threads are a fixed pool of this module's, and each keeps its database connection
  between calls (at least KEEP_CONNECTION_SECONDS, longer if CONN_MAX_AGE says so; a broken one
  is dropped as Django drops it): a new PostgreSQL connection per call cost about a quarter of a
  message's time. One process so holds at most DB_THREADS connections for its sockets. In the
  serving process they come from its pool (assistant/dbpool.py), which is larger than that, so the
  HTTP requests always find one; with a pool no larger than DB_THREADS a thread gives its
  connection back after each call instead (KEEP_POOLED: a pooled checkout costs ~1 ms a turn).
- Errors reach the visitor as error frames with a readable message; the socket stays open.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from asgiref.sync import async_to_sync, sync_to_async
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections
from redis.exceptions import RedisError

from answers import pipeline, replies
from bots.models import Bot
from chat import access, csat, frames, leads, selectors, services, states, visits
from chat.events import conversation_group
from chat.exceptions import (
    DATABASE_AWAY,
    ChatError,
    HandoffUnavailable,
    HelloRequired,
    ServerError,
    TooManySockets,
    Unavailable,
)
from chat.models import Conversation, Message
from core import ratelimit

logger = logging.getLogger("spravka.chat")

CLOSE_ORIGIN_REFUSED: Final = 4403
CLOSE_UNKNOWN_BOT: Final = 4404
CLOSE_TOO_MANY_SOCKETS: Final = 4429
CLOSE_TRY_AGAIN_LATER: Final = 1013  # RFC 6455: the server cannot take the socket right now
# An answer whose turn lost the database after the question was stored (acked) is tried again
# every DB_RETRY_SECONDS for up to DB_OUTAGE_WAIT s: the visitor saw the question taken.
DB_RETRY_SECONDS: Final = 2.0
DB_OUTAGE_WAIT: Final = 60.0
BUTTON_HANDOFF_REASON: Final = "button"


DB_THREADS: Final = settings.DB_THREADS  # asyncio's default executor size, as before
KEEP_CONNECTION_SECONDS: Final = 60.0
# With the serving process's pool (assistant/dbpool.py) the threads keep a pooled connection the
# same way when the pool has room for all of them and more (the default DB_THREADS + 4): the HTTP
# requests' threads then always find one. A smaller pool gets its connection back after each call.
KEEP_POOLED: Final = int((settings.DB_POOL_OPTIONS or {}).get("max_size", 0)) > DB_THREADS
_executor = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="chat-db")


def _keeping_connection(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` on this thread's kept connection: Django's own checks (unusable after an error,
    autocommit left off, too old) before and after, with the age counted from the connect."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        connection = connections[DEFAULT_DB_ALIAS]
        connection.close_if_unusable_or_obsolete()
        try:
            return func(*args, **kwargs)
        finally:
            raw = connection.connection
            keep = KEEP_POOLED or getattr(connection, "pool", None) is None
            if raw is not None and keep and getattr(connection, "_chat_kept", None) is not raw:
                connection._chat_kept = raw  # type: ignore[attr-defined]  # a new connection: set its age
                max_age = connection.settings_dict["CONN_MAX_AGE"]
                if max_age is not None:
                    connection.close_at = time.monotonic() + max(max_age, KEEP_CONNECTION_SECONDS)
            connection.close_if_unusable_or_obsolete()

    return run


def close_db_connections() -> None:
    """Close the connections the worker threads keep: before their database is dropped (the test
    session's end) or at shutdown. One call per thread: each waits until every thread has closed."""
    barrier = threading.Barrier(DB_THREADS)

    def close() -> None:
        connections.close_all()
        barrier.wait(timeout=30)

    for future in [_executor.submit(close) for _ in range(DB_THREADS)]:
        future.result()


def _db(func: Callable[..., Any]) -> Callable[..., Any]:
    return sync_to_async(_keeping_connection(func), thread_sensitive=False, executor=_executor)


def _welcome_extras(bot: Bot, visitor_id: str) -> tuple[bool, int | None]:
    """For a visitor with no open conversation: whether to offer the choice of bot or operator, and
    their finished conversation that still asks for stars (a reload must not lose the ask)."""
    return services.visitor_choice_offered(bot), csat.csat_still_asked(bot_id=bot.pk, visitor_id=visitor_id)


class DbThreadsConsumer(AsyncWebsocketConsumer):
    """A consumer whose database work all runs through `_db` (the widget's and the operators').

    channels' `AsyncConsumer.dispatch` first awaits `aclose_old_connections()`, for every frame
    and every channel-layer event: a hop to the process's one shared sync thread to close that
    thread's connections. These consumers never query there (`_db`'s threads keep and check their
    own connections, above), so each hop was pure waiting, and all sockets of a process queued
    for the one thread: an inbox socket hears every message of its bots, and with 50 busy
    conversations its events waited behind each other there. Dispatch is otherwise channels' own."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


class ChatConsumer(DbThreadsConsumer):
    bot: Bot | None = None
    conversation: Conversation | None = None
    ip: str | None = None
    group: str | None = None
    gone = False
    counted = False  # this socket counts against its address's cap (CHAT_MAX_SOCKETS_IP)
    socket_id = ""
    resumed: int | None = None  # the visitor message answered right after welcome (a resend gets its ack only)
    visitor_id: str | None = None  # from `hello`, or from a `page` frame sent before it
    page_url = ""
    page_title = ""
    hello: frames.Hello | None = None  # the visitor's hello: whom a conversation started later is for

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        """channels' AsyncConsumer.__call__, one task and one wait lighter per socket: frames are read
        in the socket's own task, channel-layer events in one more task, and a lock keeps dispatch
        one message at a time in arrival order, as channels' `await_many_dispatch` does. An idle
        socket then holds two tasks instead of three plus a pending `asyncio.wait`."""
        self.scope = scope
        self.base_send = send
        self._turn = asyncio.Lock()
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        events: asyncio.Task[None] | None = None
        if self.channel_layer is not None:
            self.channel_name = await self.channel_layer.new_channel()
            self.channel_receive = functools.partial(self.channel_layer.receive, self.channel_name)
            events = asyncio.create_task(self._events())
        try:
            while True:
                message = await receive()
                async with self._turn:
                    await self.dispatch(message)
        except StopConsumer:
            pass
        finally:
            if events is not None:
                events.cancel()
                try:
                    await events
                except asyncio.CancelledError:
                    # The events task's own end is expected; a cancel meant for this socket's task
                    # (a server shutting down) must not be swallowed here.
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise

    async def _events(self) -> None:
        """Channel-layer events (operator messages, state changes), one at a time. A failing event
        is logged and the socket stays open."""
        while True:
            message = await self.channel_receive()
            async with self._turn:
                try:
                    await self.dispatch(message)
                except Exception:
                    logger.exception("channel-layer event %r failed", message.get("type"))

    async def connect(self) -> None:
        public_key = self.scope["url_route"]["kwargs"]["public_key"]
        # Accept first, then refuse: a browser reports a rejected handshake as a bare 1006, while an
        # accepted socket lets the widget read the error frame and the close code.
        try:
            self.bot = await _db(selectors.bot_for_widget)(public_key)
        except DATABASE_AWAY as exc:
            logger.warning("widget socket refused for now: the database is away (%s)", _first_line(exc))
            await self.accept()
            away = Unavailable()
            await self._refuse(CLOSE_TRY_AGAIN_LATER, away.code, away.message_in("ru"))
            return
        await self.accept()
        if self.bot is None:
            logger.info("widget socket refused: unknown public key %r", public_key[:64])
            await self._refuse(CLOSE_UNKNOWN_BOT, "unknown_bot", replies.TEXTS["ru"]["error_unknown_bot"])
            return
        origin = access.header(self.scope, b"origin")
        if not access.origin_allowed(origin, self.bot.allowed_origins) and not await self._member_at_home(origin):
            logger.warning("widget socket refused for bot %s: origin %r is not allowed", self.bot.slug, origin)
            await self._refuse(CLOSE_ORIGIN_REFUSED, "origin_refused", replies.say(self.bot, "error_origin_refused"))
            return
        self.ip = access.client_ip(self.scope)
        self.socket_id = uuid.uuid4().hex
        if not await ratelimit.socket_open(ip=self.ip, socket_id=self.socket_id):
            logger.warning("widget socket refused for bot %s: too many sockets from %s", self.bot.slug, self.ip)
            error = TooManySockets()
            await self._refuse(CLOSE_TOO_MANY_SOCKETS, error.code, error.message_in(replies.bot_language(self.bot)))
            return
        self.counted = True

    async def _member_at_home(self, origin: str | None) -> bool:
        """The owner's own pages on this server (the «try» page) may open the widget of a bot
        they belong to, whatever its allowed origins: the page's origin is this server's and the
        browser sent the signed-in session of a member."""
        assert self.bot is not None
        if not access.is_own_origin(origin, self.scope):
            return False
        return bool(await _db(access.session_member)(self.scope, self.bot.pk))

    async def _refuse(self, code: int, error: str, message: str) -> None:
        self.bot = None
        await self._send({"type": "error", "code": error, "message": message})
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        await self._leave_group()
        if self.counted:
            self.counted = False
            await ratelimit.socket_closed(ip=self.ip, socket_id=self.socket_id)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.bot is None:  # refused in connect; frames racing the close are dropped
            return
        frame: frames.ClientFrame | None = None
        try:
            frame = frames.parse(text_data, bytes_data)
            await self._dispatch(frame)
        except ChatError as error:
            await self._send(frames.error_frame(
                error, client_msg_id=_client_msg_id(frame), cause=frame, language=self._language()
            ))
        except DATABASE_AWAY as exc:  # a restart or failover: nothing of this frame was stored
            logger.warning("widget frame refused for now: the database is away (%s)", _first_line(exc))
            await self._send(frames.error_frame(
                Unavailable(), client_msg_id=_client_msg_id(frame), cause=frame, language=self._language()
            ))
        except Exception:  # a bug or an outage: say so, keep the socket, keep the traceback
            logger.exception("widget frame failed for bot %s", self.bot.slug if self.bot else "?")
            await self._send(frames.error_frame(
                ServerError(), client_msg_id=_client_msg_id(frame), cause=frame, language=self._language()
            ))

    def _language(self) -> str:
        return replies.bot_language(self.bot) if self.bot is not None else "ru"

    async def _dispatch(self, frame: frames.ClientFrame) -> None:
        if isinstance(frame, frames.Ping):
            await self._send({"type": "pong"})
            await ratelimit.socket_seen(ip=self.ip, socket_id=self.socket_id)
        elif isinstance(frame, frames.Hello):
            await self._hello(frame)
        elif isinstance(frame, frames.SendMessage):
            await self._message(frame)
        elif isinstance(frame, frames.Rate):
            await self._rate(frame)
        elif isinstance(frame, frames.Button):
            await self._button(frame)
        elif isinstance(frame, frames.LeadFrame):
            await self._lead(frame)
        elif isinstance(frame, frames.Page):
            await self._page(frame)
        elif isinstance(frame, frames.InviteShown):
            await self._invite_shown(frame)
        elif isinstance(frame, frames.Csat):
            await self._csat(frame)

    def _conversation(self) -> Conversation:
        if self.conversation is None:
            raise HelloRequired()
        return self.conversation

    async def _started(self) -> Conversation:
        """The conversation, started now if the visitor had none: by their first message, the
        operator button or the contact form (an opened widget alone starts nothing)."""
        if self.conversation is not None:
            return self.conversation
        if self.hello is None:
            raise HelloRequired()
        assert self.bot is not None
        conversation = await _db(services.conversation_open)(
            bot=self.bot, visitor_id=self.hello.visitor_id, ip=self.ip,
            page_url=self.page_url or self.hello.page_url, page_title=self.page_title,
        )
        self.bot, self.conversation = conversation.bot, conversation
        await self._join_group(conversation.pk)
        return conversation

    async def _hello(self, frame: frames.Hello) -> None:
        """Resume the visitor's open conversation with what they have not seen, or say there is
        none yet (`conversation_id` null): the first message, the operator button or the contact
        form starts one, and its frames (`ack`, `lead_saved`) carry the new conversation's id."""
        assert self.bot is not None
        conversation = await _db(services.conversation_resume)(
            bot=self.bot, visitor_id=frame.visitor_id, ip=self.ip, page_url=frame.page_url
        )
        self.hello, self.visitor_id = frame, frame.visitor_id
        if conversation is None:
            self.conversation = None
            await self._leave_group()
            choice, rate = await _db(_welcome_extras)(self.bot, frame.visitor_id)
            await self._send({"type": "welcome", "conversation_id": None, "state": Conversation.State.BOT,
                              "messages": [], "lead_form": frames.lead_form_json(self.bot), "choice": choice,
                              "csat": {"conversation_id": rate} if rate else None,
                              **frames.languages_json(self.bot)})
            return
        messages = await _db(services.messages_after)(conversation=conversation, last_seen_id=frame.last_seen_id)
        # One Bot instance per socket, the one just read with the conversation: thousands of idle
        # sockets each holding two copies of the same row add up.
        self.bot, self.conversation = conversation.bot, conversation
        await self._join_group(conversation.pk)
        await self._send({
            "type": "welcome", "conversation_id": conversation.pk, "state": conversation.state,
            "messages": [frames.message_json(m) for m in messages], "lead_form": frames.lead_form_json(self.bot),
            "choice": False,  # a visitor coming back to a conversation has chosen already
            **frames.languages_json(self.bot),
        })
        # A question the bot still owes an answer to (its server died mid-answer, or the visitor
        # left the page while it was being made): answered here, as if it had just been asked.
        owed = await _db(services.message_unanswered)(conversation=conversation, shown=messages)
        if owed is not None:
            delivered = await self._answer(owed, None, created=False)
            if delivered:
                self.resumed = owed.pk

    async def _message(self, frame: frames.SendMessage) -> None:
        """One thread hop for a turn the rules answer (stored with the question in one
        transaction); a second one for the chain when retrieval or a model must answer."""
        if self.conversation is None:  # an empty or oversized first message starts no conversation
            services.clean_text(frame.text)
        conversation = await self._started()
        state_before = conversation.state
        taken = await _db(services.message_take)(
            conversation=conversation, text=frame.text, client_msg_id=frame.client_msg_id, count=True
        )
        visitor = taken.message
        await self._send({"type": "ack", "client_msg_id": frame.client_msg_id, "conversation_id": conversation.pk,
                          "message": frames.message_json(visitor)})
        if visitor.pk == self.resumed:  # its answer was given right after this socket's welcome
            return
        if visitor.flag("to_operator"):  # the bot is silent: at most a note that a person is coming
            notes = taken.produced
            if notes is None:
                notes = await _db(services.message_answer)(visitor_message=visitor)
            for message in notes:
                await self._send({"type": "message", "message": frames.message_json(message)})
            return
        await self._answer(visitor, taken.produced, created=taken.created, state_before=state_before,
                           reading=taken.reading)

    async def _answer(
        self, visitor: Message, produced: list[Message] | None, *, created: bool, state_before: str | None = None,
        reading: pipeline.Reading | None = None,
    ) -> bool:
        """typing, the answer (the rules' `produced`, or the chain's: streamed as deltas, waited for
        when another worker makes it), typing off, and the state if it changed. True when a reply
        was sent."""
        conversation = self._conversation()
        state_before = state_before or conversation.state
        await self._send({"type": "typing", "on": True})
        try:
            if produced is None:
                produced = await self._answer_despite_outage(visitor, created, reading)
            for message in produced:
                await self._send({"type": "message", "message": frames.message_json(message)})
        finally:
            await self._send({"type": "typing", "on": False})
        if conversation.state != state_before:
            await self._send({"type": "state", "state": conversation.state})
        return bool(produced)

    async def _answer_despite_outage(
        self, visitor: Message, created: bool, reading: pipeline.Reading | None = None
    ) -> list[Message]:
        """The chain's answer to a stored question. The database going away meanwhile is said once
        (`unavailable`) and the answer tried again until it is back (DB_OUTAGE_WAIT at most; after
        that it is owed and given on the next hello)."""
        waited_since: float | None = None
        while True:
            try:
                answer: list[Message] = await _db(services.message_answer)(
                    visitor_message=visitor, on_delta=self._delta_sink(visitor.client_msg_id), just_stored=created,
                    reading=reading,
                )
                return answer
            except DATABASE_AWAY as exc:
                if waited_since is None:
                    waited_since = time.monotonic()
                    logger.warning("answer to %s waits for the database (%s)", visitor.pk, _first_line(exc))
                    await self._send(frames.error_frame(
                        Unavailable(), client_msg_id=visitor.client_msg_id or None, language=self._language()
                    ))
                if self.gone or time.monotonic() - waited_since > DB_OUTAGE_WAIT:
                    raise
                created = False  # a reply may have been stored before the connection broke
                await asyncio.sleep(DB_RETRY_SECONDS)

    def _delta_sink(self, client_msg_id: str) -> Callable[[str], None]:
        """Runs in the chain's worker thread: each call waits until the frame is handed to the
        socket, so deltas never overtake each other or the final message."""
        send = async_to_sync(self._send)

        def sink(text_so_far: str) -> None:
            try:
                send({"type": "delta", "client_msg_id": client_msg_id, "text": text_so_far})
            except Exception:  # streaming is a courtesy: it must never fail the answer being stored
                logger.debug("delta not delivered", exc_info=True)

        return sink

    async def _rate(self, frame: frames.Rate) -> None:
        message: Message = await _db(services.message_rate)(
            conversation=self._conversation(), message_id=frame.message_id, rating=frame.rating
        )
        await self._send({"type": "rated", "message_id": message.pk, "rating": message.rating})

    async def _button(self, frame: frames.Button) -> None:
        if self.conversation is None and self.bot is not None and not self.bot.handoff_enabled:
            raise HandoffUnavailable(replies.handoff_disabled(self.bot))  # refused before anything is started
        conversation = await self._started()
        state_before = conversation.state
        notes = await _db(services.conversation_handoff)(conversation=conversation, reason=BUTTON_HANDOFF_REASON)
        for message in notes:
            await self._send({"type": "message", "message": frames.message_json(message)})
        if conversation.state != state_before:
            await self._send({"type": "state", "state": conversation.state})

    async def _lead(self, frame: frames.LeadFrame) -> None:
        if self.conversation is None:  # a form that would be refused starts no conversation
            assert self.bot is not None
            await _db(leads.lead_check)(bot=self.bot, form=frame.form)
        conversation = await self._started()
        lead, notes = await _db(leads.lead_submit)(conversation=conversation, form=frame.form)
        await self._send({"type": "lead_saved", "lead_id": lead.pk, "conversation_id": conversation.pk})
        for message in notes:
            await self._send({"type": "message", "message": frames.message_json(message)})

    async def _page(self, frame: frames.Page) -> None:
        """Where the visitor is: before `hello` the frame names the visitor (a widget that is not
        open yet reports pages too), after it the hello's visitor is the one; a conversation
        started later keeps the last page."""
        assert self.bot is not None
        if self.conversation is not None:
            visitor_id: str | None = self.conversation.visitor_id
        else:  # before hello the frame names the visitor; after a hello that resumed nothing, the hello does
            visitor_id = self.hello.visitor_id if self.hello is not None else frame.visitor_id
        if not visitor_id:
            raise HelloRequired()
        self.visitor_id, self.page_url, self.page_title = visitor_id, frame.url, frame.title
        invite = await _db(visits.page_report)(
            bot=self.bot, visitor_id=visitor_id, page=frame, ip=self.ip, conversation=self.conversation,
            user_agent=(access.header(self.scope, b"user-agent") or "")[:500],
        )
        await ratelimit.socket_seen(ip=self.ip, socket_id=self.socket_id)
        if invite is not None:
            await self._send(invite)

    async def _invite_shown(self, frame: frames.InviteShown) -> None:
        assert self.bot is not None
        if not self.visitor_id:
            raise HelloRequired()
        await _db(visits.invite_shown)(bot=self.bot, visitor_id=self.visitor_id, rule_id=frame.rule,
                                       page_url=self.page_url)

    async def _csat(self, frame: frames.Csat) -> None:
        """The visitor's stars for a finished conversation of theirs (chat/csat.py says which)."""
        assert self.bot is not None
        if not self.visitor_id:
            raise HelloRequired()
        rating = await _db(csat.csat_submit)(
            bot_id=self.bot.pk, visitor_id=self.visitor_id, conversation_id=frame.conversation_id,
            stars=frame.stars, comment=frame.comment,
        )
        await self._send({"type": "csat_saved", "conversation_id": rating.conversation_id, "stars": rating.stars})

    async def _join_group(self, conversation_id: int) -> None:
        group = conversation_group(conversation_id)
        if group == self.group or self.channel_layer is None:
            return
        await self._leave_group()
        self.group = group
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except RedisError as exc:  # the layer re-joins it once Redis is back (layers.py)
            logger.warning("widget socket: joining %s failed (%s); re-joined when Redis is back", group, exc)

    async def _leave_group(self) -> None:
        group, self.group = self.group, None
        if group and self.channel_layer is not None:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except RedisError as exc:  # the membership expires with the group (group_expiry)
                logger.warning("widget socket: leaving %s failed (%s)", group, exc)

    # Channel-layer events from the operator side (sent after commit by the inbox services).
    async def chat_message(self, event: dict[str, Any]) -> None:
        await self._send({"type": "message", "message": event["message"]})

    async def chat_state(self, event: dict[str, Any]) -> None:
        if self.conversation is not None:  # the socket's copy catches up with the row: no move of its own
            states.catch_up(self.conversation, event["state"])
        await self._send({"type": "state", "state": event["state"]})

    async def chat_csat(self, event: dict[str, Any]) -> None:
        await self._send({"type": "csat_ask", "conversation_id": event["conversation_id"]})

    async def chat_typing(self, event: dict[str, Any]) -> None:
        await self._send({"type": "typing", "on": bool(event["on"]), "by": event.get("by", "operator")})

    async def _send(self, frame: dict[str, Any]) -> None:
        """Send a frame unless the visitor has gone: an answer finished after the socket closed is
        stored all the same and reaches the widget on its next hello."""
        if self.gone:
            return
        try:
            await self.send(text_data=DjangoJSONEncoder(ensure_ascii=False).encode(frame))
        except OSError:  # uvicorn's ClientDisconnected
            self.gone = True
            logger.debug("frame %s not delivered: the socket is closed", frame.get("type"))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _client_msg_id(frame: frames.ClientFrame | None) -> str | None:
    return frame.client_msg_id if isinstance(frame, frames.SendMessage) else None
