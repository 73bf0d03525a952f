"""Chat traffic around a fault, counted: what the fault tests assert on and `bench/faults.py`
measures. Plain asyncio (no pytest): visitors that behave like the widget (harness.Visitor) ask
questions in rounds, one round before the fault, one as it starts, one while the service is away
and one after it is back; then every question is looked up in the database and in the frames.

- answered: a question with exactly one bot reply row, and that reply reached the visitor (a
  `message` frame, or the welcome of a reconnect) once;
- lost: a question with no reply row, or whose reply never reached the visitor;
- doubled: more than one reply row for a question, or a reply that reached the visitor twice.
- errors shown: the error frames visitors got, by code (each a message on the visitor's screen).
- recovered: seconds from the service's return until every question was answered.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.faults.harness import PostgresServer, RedisServer, Visitor

ORIGIN = "https://shop.example"
PROBE = "Проверка связи оператора"
OUTAGE = 4.0  # seconds PostgreSQL stays stopped
# Questions the shop's knowledge answers (tests/chat/conftest.py KNOWLEDGE), one per round: a
# different one each time, so no round reads as a visitor repeating themselves.
ROUND_QUESTIONS = [
    "Сколько стоит доставка по Москве?",
    "Как вернуть товар?",
    "Как можно оплатить заказ?",
    "Сколько дней идёт доставка в другие города?",
    "Можно ли оплатить через СБП?",
    "Через сколько дней вернут деньги за возврат?",
]


@dataclass
class Outcome:
    name: str
    visitors: int = 0
    sent: int = 0
    answered: int = 0
    lost: int = 0
    doubled: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    reconnects: int = 0
    recovered: float | None = None  # seconds from the service's return to the last answer
    outage: float = 0.0  # seconds the service was away
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def errors_text(self) -> str:
        return ", ".join(f"{code} × {n}" for code, n in sorted(self.errors.items())) or "none"


Step = Callable[[], Awaitable[Any]]


async def _noop() -> None:
    return None


@dataclass
class Fault:
    """What happens to the fleet: `cut` takes a service away, `restore` brings it back (its
    return value, if a float, is how long the return itself took); `outage` seconds between."""

    name: str
    cut: Step = _noop
    restore: Step = _noop
    outage: float = 0.0


def question_id(visitor_no: int, round_no: int) -> str:
    return f"q{visitor_no}-{round_no}"


async def _connect_all(visitors: list[Visitor], parallel: int = 25) -> None:
    gate = asyncio.Semaphore(parallel)

    async def one(visitor: Visitor) -> None:
        async with gate:
            await visitor.connect(timeout=120)

    await asyncio.gather(*(one(v) for v in visitors))


def _send_round(visitors: list[Visitor], round_no: int) -> list[asyncio.Task[None]]:
    question = ROUND_QUESTIONS[round_no % len(ROUND_QUESTIONS)]
    return [asyncio.ensure_future(v.send(question_id(i, round_no), question)) for i, v in enumerate(visitors)]


def bot_reply_ids(visitor: Visitor) -> list[int]:
    """Every bot message id the visitor was shown, in order, duplicates kept: `message` frames and
    the messages of every welcome."""
    ids: list[int] = []
    for frame in visitor.frames:
        data = frame.data
        messages = data.get("messages") if data["type"] == "welcome" else [data.get("message")]
        for message in messages or []:
            if isinstance(message, dict) and message.get("role") == "bot":
                ids.append(int(message["id"]))
    return ids


async def _keep_connected(visitors: list[Visitor], outcome: Outcome) -> None:
    """The widget reconnects a dropped socket (its welcome resends what is pending)."""
    for visitor in visitors:
        if visitor.closed_at is not None:
            try:
                await visitor.connect(timeout=10)
                outcome.reconnects += 1
            except Exception:  # noqa: S110 - the server is still away: the next pass tries again
                pass


def _answered_on_screen(visitor: Visitor, questions: int) -> bool:
    return not visitor.pending and len(set(bot_reply_ids(visitor))) >= questions


async def _wait_answered(visitors: list[Visitor], rounds: int, outcome: Outcome, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await _keep_connected(visitors, outcome)
        if all(_answered_on_screen(v, rounds) for v in visitors):
            return True
        await asyncio.sleep(0.1)
    return False


def stored_replies(database_url: str, public_key: str) -> dict[tuple[str, str], list[int]]:
    """(visitor id, client_msg_id) -> the ids of the bot rows replying to it, for every visitor
    message of the bot, read with plain SQL (the database may be the fleet's own)."""
    import psycopg

    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT c.visitor_id, q.client_msg_id, r.id FROM chat_message q "
            "JOIN chat_conversation c ON c.id = q.conversation_id JOIN bots_bot b ON b.id = c.bot_id "
            "LEFT JOIN chat_message r ON r.reply_to_id = q.id AND r.role = 'bot' "
            "WHERE b.public_key = %s AND q.role = 'visitor'", [public_key]).fetchall()
    replies: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for visitor_id, client_msg_id, reply_id in rows:
        replies[(visitor_id, client_msg_id)]
        if reply_id is not None:
            replies[(visitor_id, client_msg_id)].append(int(reply_id))
    return replies


def tally(outcome: Outcome, visitors: list[Visitor], rounds: int, replies: dict[tuple[str, str], list[int]]) -> None:
    for number, visitor in enumerate(visitors):
        shown = collections.Counter(bot_reply_ids(visitor))
        for round_no in range(rounds):
            outcome.sent += 1
            rows = replies.get((visitor.visitor_id, question_id(number, round_no)), [])
            if len(rows) > 1 or any(shown[row] > 1 for row in rows):
                outcome.doubled += 1
            elif len(rows) == 1 and shown[rows[0]] == 1:
                outcome.answered += 1
            else:
                outcome.lost += 1
        for error in visitor.errors():
            outcome.errors[str(error.get("code"))] += 1


async def chat_around(
    fault: Fault, *, url: str, public_key: str, database_url: str, visitors: int = 50, prefix: str = "v",
    settle: float = 120.0, during: Callable[[list[Visitor]], Awaitable[None]] | None = None,
) -> tuple[Outcome, list[Visitor]]:
    """`visitors` widget visitors on `url` (ws://host:port); four rounds of questions: before the
    fault (answered first), at its start, during the outage, after the return. `during`: more to
    do after the return (e.g. check the sockets still hear their channel-layer groups)."""
    outcome = Outcome(fault.name, visitors=visitors)
    people = [Visitor(f"{url}/ws/chat/{public_key}/", f"{prefix}{n}", ORIGIN) for n in range(visitors)]
    await _connect_all(people)
    try:
        _send_round(people, 0)
        if not await _wait_answered(people, 1, outcome, settle):
            raise RuntimeError(f"{fault.name}: the first round (before any fault) was not answered")
        _send_round(people, 1)
        await asyncio.sleep(0.05)  # round 1 is in the server's hands when the fault strikes
        cut_at = time.monotonic()
        await fault.cut()
        _send_round(people, 2)
        await asyncio.sleep(fault.outage)
        back = await fault.restore()
        returned_at = time.monotonic()
        outcome.outage = returned_at - cut_at
        if isinstance(back, float):
            outcome.extra["restart"] = back
        _send_round(people, 3)
        answered = await _wait_answered(people, 4, outcome, settle)
        outcome.recovered = time.monotonic() - returned_at if answered else None
        if during is not None:
            await during(people)
        await asyncio.sleep(1.0)  # anything doubled would have come by now
    finally:
        await asyncio.gather(*(v.close() for v in people))
    tally(outcome, people, 4, await asyncio.to_thread(stored_replies, database_url, public_key))
    return outcome, people


# --- the faults ------------------------------------------------------------------------------------


def redis_restart(redis: RedisServer, outage: float = 1.0) -> Fault:
    async def cut() -> None:
        await asyncio.to_thread(redis.kill)

    async def restore() -> float:
        return await asyncio.to_thread(redis.start)

    return Fault("Redis restarted (back empty)", cut, restore, outage)


def layer_on(redis: RedisServer) -> Any:
    from django.conf import settings

    from chat.layers import BoundedRedisChannelLayer

    config: Any = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    return BoundedRedisChannelLayer(hosts=[{"address": redis.redis_url}], prefix=config["prefix"])


def conversation_id(visitor: Visitor) -> int:
    """The visitor's conversation: named by a welcome once it exists, or by the ack of the first
    message, which started it."""
    return int(next(f.data["conversation_id"] for f in reversed(visitor.frames)
                    if f.data["type"] in ("welcome", "ack") and f.data.get("conversation_id")))


def heard_probe(visitor: Visitor) -> bool:
    return any(f.data["type"] == "message" and f.data["message"].get("text") == PROBE for f in visitor.frames)


async def groups_heard(redis: RedisServer, visitors: list[Visitor], timeout: float = 30.0) -> float:
    """Seconds until an operator message sent to each conversation's group reached every socket
    (sent again every half second to the ones that have not heard it yet)."""
    from chat.events import conversation_group

    layer = layer_on(redis)
    started = time.monotonic()
    try:
        while not all(heard_probe(v) for v in visitors):
            if time.monotonic() - started > timeout:
                deaf = [v.visitor_id for v in visitors if not heard_probe(v)]
                raise AssertionError(f"{len(deaf)} sockets never heard their group again: {deaf[:5]}")
            for visitor in visitors:
                if not heard_probe(visitor):
                    await layer.group_send(conversation_group(conversation_id(visitor)), {
                        "type": "chat.message",
                        "message": {"id": 0, "role": "operator", "text": PROBE, "links": [], "buttons": []},
                    })
            await asyncio.sleep(0.5)
        return time.monotonic() - started
    finally:
        await layer.close_pools()


def postgres_restart(server: PostgresServer, outage: float = OUTAGE) -> Fault:
    async def cut() -> None:
        await asyncio.to_thread(server.stop, "fast")

    async def restore() -> float:
        return await asyncio.to_thread(server.start)

    return Fault("PostgreSQL restarted (fast stop)", cut, restore, outage)
