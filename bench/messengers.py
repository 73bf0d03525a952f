"""The Telegram channel (issue 23): what a Telegram turn adds over the widget's turn for the same
question, and updates per second through one app process.

    python bench/messengers.py [--rounds 40] [--rate 100] [--seconds 60] [--threads 4] [--quick]
                               [--only overhead,operators,throughput] [--operators 50]
                               [--operator-rounds 20] [--receive-first] [--worker-env NAME=VALUE] [--code DIR]

Processes, all on this machine: one `uvicorn assistant.asgi:application` (the production options,
DEBUG=0, LLM_PROVIDER=none, rate limits far above what is sent, as in bench/ws_capacity.py), one
Celery worker (`celery -A assistant worker -P threads -c --threads`, as tests/faults/harness.py
starts one) consuming the bench's own queue, and the tests' fake Bot API
(tests/fakes/telegram_api.py) in a process of its own, so its HTTP work does not count as ours: it
prints every call it answers (method, chat, text, time.monotonic() on arrival) and this process
reads them. Everything runs on its own database, `spravka_bench_messengers`. The bot `bench-tg`
has bench/ws_capacity.py's three passages (delivery, returns, payment; e5-small vectors) and is
connected to the fake through `messengers.services.telegram_connect` (getMe, setWebhook), so
every answer comes from search, without a model.

Part 1, overhead (target: a Telegram turn ≤ 30 ms p50 over the widget's turn for the same
question). Nine questions (three phrasings per passage) are each asked once through the widget
and once through Telegram beforehand, so both processes have loaded the model and have every
question's vector in their own cache: in the timed rounds both chains are search and reply only.
Every round asks one of those questions twice, each time in a conversation of its own opened
beforehand (a widget socket after `hello` → `welcome`; a Telegram chat after its /start was
greeted), the order alternating round by round so drift on the shared machine falls on both:
(a) the widget: the `message` frame sent → the bot's `message` frame at the socket;
(b) Telegram: the update POSTed to the webhook with its secret header → the reply's sendMessage
at the fake (also: → the POST's 200, → the sendChatAction «typing»).
One turn at a time, with a pause after each so the worker's trailing writes do not fall on the next
turn. The overhead is b − a per round. Then the steps of each turn from the rows' own timestamps
(the update, the visitor's message, the reply, the delivery), converted to the same clock.

Part 2, throughput (target: 100 updates/s on one process for 60 s, none lost, none answered
twice). `--rate` new updates per second for `--seconds` (`--quick`: 20 s), due evenly spaced,
from many distinct chats: 60 % of chats write once, 25 % twice, 15 % three times (2–8 s apart, a
different passage each time); 30 % start with /start. They are posted as Telegram delivers to a
webhook: at most 40 POSTs in flight (setWebhook's default max_connections; an update waits at
"Telegram" while all 40 are busy), an update whose POST was not answered 200 is posted again
after 1, 2, 4… s (8 tries), and 3 % of updates are posted a second time 1–5 s later with the same
update_id, as Telegram does when our 200 came late (on top of the rate). Afterwards, from the
database and the fake's records: every update stored once and handled, every question answered
by one reply, one sendMessage per accepted update, no (chat, text) sent twice, each reply from
its passage; the POST → 200 latency, the wait from "due" to 200 (Telegram's queue included), the
answers per second while updates are due and the time to drain the backlog after the last one;
every 10 s the backlog; CPU per POST (app) and per answer (worker). One app process and one
worker process with `--threads` threads; `--worker-env NAME=VALUE` sets a setting for the worker
alone (e.g. DB_CONN_MAX_AGE=60). `--receive-first` pauses the worker (SIGSTOP) until every update
is accepted: what the app accepts with the cores to itself, then what the worker answers alone.

Part 3, operators in Telegram (target: 50 operators linked, a waiting conversation reaches all
their Telegram chats in ≤ 1 s p95). The bench bot gets `--operators` operators (accounts made by
`bots.services.membership_add`), each linked to a Telegram chat of its own through the real path
(`messengers.operators.code_make` → `link_by_code`); a second bot, `bench-tg-one`, connected to
the same fake with a token of its own, gets one linked operator: the baseline. Every round a widget
visitor of each bot (the order alternating) opens a socket, says `hello` and presses «Позвать
оператора» (`{"type":"button","id":"operator"}`); timed from that frame sent to each operator
chat's sendMessage at the fake, and to the last of them (the conversation has reached everyone).
A pause and an idle wait after each round.

`--code DIR` runs the app and the worker from another checkout (e.g. `git archive <commit> | tar
-x -C /tmp/before`, then `make messages` there) against the same data, to compare a change under
the same conditions. The bench bot, its chats and conversations are deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATABASE = "spravka_bench_messengers"
SLUG = "bench-tg"
ORIGIN = "https://bench.example"
QUEUE = "spravka-bench-messengers"
TOKEN = "7000000023:AABenchTelegramTokenForSpravkaBench_23"  # noqa: S105 - the fake's, nowhere else
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name (messengers/views.py)
TIMEOUT = 60.0
PAUSE = 0.3  # seconds after each timed turn
TARGET_OVERHEAD_MS = 30.0
MAX_CONNECTIONS = 40  # Telegram's default for a webhook (setWebhook's max_connections): POSTs in flight at once
RETRIES = 8  # attempts per update before the bench counts it as not accepted
# Three phrasings per passage of bench/ws_capacity.py, each answered from it without a model,
# with a fact the reply must show.
TOPICS = {
    "delivery": ("300 рублей", ["Сколько стоит доставка по Москве?", "Сколько дней идёт доставка по России?",
                               "Сколько стоит доставка по России?"]),
    "returns": ("14 дней", ["Можно ли вернуть товар?", "Сколько дней на возврат товара?",
                            "Как оформить возврат покупки?"]),
    "pay": ("картой", ["Как можно оплатить заказ?", "Можно оплатить картой?", "Принимаете наличные курьеру?"]),
}
QUESTIONS = [(topic, text) for topic, (_fact, texts) in TOPICS.items() for text in texts]
OPERATOR_CHAT_BASE = 7_900_000_000  # part 3: the operators' own Telegram chats
SLUG_ONE = "bench-tg-one"  # part 3's baseline: a bot with one linked operator
TOKEN_ONE = "7000000024:AABenchTelegramTokenForSpravkaBench_24"  # noqa: S105 - the fake's, nowhere else
OPERATOR_EMAILS = "@bench-tg.example"
TARGET_REACH_MS = 1000.0
CHAT_BASE = 7_700_000_000  # Telegram user ids of the bench's chats: part 1 from here, part 2 from + 1e6


def now() -> float:
    return time.monotonic()


# --- the fake Bot API in a process of its own ---------------------------------------------------------


def serve_fake() -> None:
    """`--serve-fake`: the tests' fake Bot API; one JSON line per call answered on stdout, the first
    line its address; ends when stdin closes."""
    from tests.fakes.telegram_api import Answer, FakeTelegram

    out = threading.Lock()

    class Recording(FakeTelegram):
        def _handle(self, token: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> Answer:
            arrived = time.monotonic()
            answer = super()._handle(token, method, params, headers)
            line = json.dumps({"method": method, "chat": str(params.get("chat_id", "")),
                               "text": params.get("text", ""), "at": arrived, "status": answer.status},
                              ensure_ascii=False)
            with out:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            return answer

    fake = Recording().start()
    fake.add_bot(TOKEN, username="spravka_bench_bot")
    fake.add_bot(TOKEN_ONE, username="spravka_bench_one_bot")
    print(json.dumps({"url": fake.url}), flush=True)
    sys.stdin.read()
    fake.stop()


Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[dict[str, Any]]"]


class FakeProcess:
    """The fake's process and what it recorded, read by a thread; `expect` gives a future resolved
    by the next call of a method to a chat."""

    def __init__(self) -> None:
        self.log = Path(tempfile.gettempdir()) / f"bench-tg-fake-{os.getpid()}.log"
        with self.log.open("wb") as errors:
            self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve-fake"],
                                            cwd=common.REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=errors, text=True, encoding="utf-8")
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        if not first:
            raise SystemExit(f"the fake Bot API did not start:\n{self.log.read_text()[-3000:]}")
        self.url: str = json.loads(first)["url"]
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._waiters: dict[tuple[str, str], list[Waiter]] = defaultdict(list)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            call = json.loads(line)
            with self._lock:
                self.calls.append(call)
                waiting = self._waiters.pop((call["method"].lower(), call["chat"]), [])
            for loop, future in waiting:
                loop.call_soon_threadsafe(_resolve, future, call)

    def expect(self, method: str, chat: int) -> asyncio.Future[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        with self._lock:
            self._waiters[(method.lower(), str(chat))].append((loop, future))
        return future

    def of(self, method: str, chats: range | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.calls if c["method"].lower() == method.lower()
                    and (chats is None or (c["chat"].isdigit() and int(c["chat"]) in chats))]

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def _resolve(future: asyncio.Future[dict[str, Any]], call: dict[str, Any]) -> None:
    if not future.done():
        future.set_result(call)


# --- the app and the worker ---------------------------------------------------------------------------


def process_env() -> dict[str, str]:
    from bench.ws_capacity import BENCH_LIMITS

    return os.environ | {"DEBUG": "0", "LLM_PROVIDER": "none", "SPRAVKA_LOG_LEVEL": "WARNING"} | BENCH_LIMITS


@dataclass
class Worker:
    threads: int
    queues: list[str]
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=Path)

    def start(self, code: Path) -> None:
        self.log = Path(tempfile.gettempdir()) / f"bench-tg-worker-{os.getpid()}.log"
        args = [sys.executable, "-m", "celery", "-A", "assistant", "worker", "-P", "threads", "-c", str(self.threads),
                "-Q", ",".join(self.queues), "-n", f"bench-tg-{os.getpid()}@%h", "--without-gossip",
                "--without-mingle", "--without-heartbeat", "-l", "INFO"]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(args, cwd=code, env=process_env() | self.env, stdout=out,
                                            stderr=subprocess.STDOUT)
        deadline = now() + 120
        while "ready." not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or now() > deadline:
                raise SystemExit(f"the worker did not start:\n{self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def tracebacks(self) -> int:
        return self.log.read_text(errors="replace").count("Traceback") if self.log.exists() else 0


@dataclass
class Context:
    fake: FakeProcess
    http: Any  # httpx.AsyncClient
    webhook: str
    secret: str
    widget: str  # ws://…/ws/chat/<key>/
    connection_id: int
    server_pid: int
    worker_pid: int
    update_ids: Any = field(default_factory=lambda: iter(range(1, 10**6)))
    chats: Any = field(default_factory=lambda: iter(range(CHAT_BASE, CHAT_BASE + 10**6)))  # part 1's
    run: str = field(default_factory=lambda: f"{os.getpid()}_{time.time_ns() % 10**9}")


def cpu_seconds(pid: int) -> float:
    from bench.operator_latency import cpu_seconds as cpu

    return cpu(pid)


# --- one turn each way ----------------------------------------------------------------------------------


class Socket:
    """A widget socket; `bot_reply` resolves with (arrival, frame) on the next bot `message` frame."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.waiting: asyncio.Future[tuple[float, dict[str, Any]]] | None = None
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            arrived = now()
            frame = json.loads(raw)
            if frame["type"] == "error":
                raise RuntimeError(f"error frame: {frame}")
            if (frame["type"] == "message" and frame["message"]["role"] == "bot" and self.waiting is not None
                    and not self.waiting.done()):
                self.waiting.set_result((arrived, frame))

    async def ask(self, client_msg_id: str, text: str) -> tuple[float, float, dict[str, Any]]:
        self.waiting = asyncio.get_running_loop().create_future()
        started = now()
        await self.ws.send(json.dumps({"type": "message", "client_msg_id": client_msg_id, "text": text},
                                      ensure_ascii=False))
        arrived, frame = await asyncio.wait_for(self.waiting, TIMEOUT)
        return started, arrived, frame["message"]

    async def close(self) -> None:
        await self.ws.close()
        self.task.cancel()


async def open_socket(ctx: Context, visitor_id: str) -> Socket:
    from websockets.asyncio.client import connect

    ws = await connect(ctx.widget, origin=ORIGIN, ping_interval=None, open_timeout=TIMEOUT)  # type: ignore[arg-type]
    await ws.send(json.dumps({"type": "hello", "visitor_id": visitor_id, "last_seen_id": None}))
    welcome = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    if welcome["type"] != "welcome":
        raise RuntimeError(f"expected welcome, got {welcome}")
    return Socket(ws)


async def post_update(ctx: Context, update: dict[str, Any]) -> tuple[float, float, int]:
    """POST one update as Telegram does: (sent, answered, HTTP status)."""
    body = json.dumps(update, ensure_ascii=False).encode()
    started = now()
    response = await ctx.http.post(ctx.webhook, content=body,
                                   headers={SECRET_HEADER: ctx.secret, "content-type": "application/json"})
    return started, now(), response.status_code


async def start_chat(ctx: Context, chat: int) -> None:
    """/start, and its greeting at the fake."""
    from tests.fakes.telegram_api import start_update

    greeted = ctx.fake.expect("sendMessage", chat)
    _, _, status = await post_update(ctx, start_update(next(ctx.update_ids), chat))
    if status != 200:
        raise RuntimeError(f"/start answered {status}")
    await asyncio.wait_for(greeted, TIMEOUT)


@dataclass
class Round:
    topic: str
    text: str
    widget_visitor: str
    client_msg_id: str
    widget_sent: float = 0.0
    widget_reply: float = 0.0
    chat: int = 0
    update_id: int = 0
    posted: float = 0.0
    post_ok: float = 0.0
    typing: float = 0.0
    tg_reply: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)  # ms, from the rows' timestamps

    @property
    def widget_ms(self) -> float:
        return (self.widget_reply - self.widget_sent) * 1000

    @property
    def telegram_ms(self) -> float:
        return (self.tg_reply - self.posted) * 1000


async def widget_turn(socket: Socket, turn: Round) -> None:
    turn.widget_sent, turn.widget_reply, message = await socket.ask(turn.client_msg_id, turn.text)
    if not any(link["url"].endswith(f"/{turn.topic}") for link in message.get("links", [])):
        raise RuntimeError(f"the widget's reply is not from the {turn.topic} entry: {message}")


async def telegram_turn(ctx: Context, turn: Round) -> None:
    from tests.fakes.telegram_api import text_update

    turn.update_id = next(ctx.update_ids)
    reply, typing = ctx.fake.expect("sendMessage", turn.chat), ctx.fake.expect("sendChatAction", turn.chat)
    turn.posted, turn.post_ok, status = await post_update(ctx, text_update(turn.update_id, turn.chat, turn.text))
    if status != 200:
        raise RuntimeError(f"the webhook answered {status}")
    call = await asyncio.wait_for(reply, TIMEOUT)
    turn.tg_reply = call["at"]
    turn.typing = (await asyncio.wait_for(typing, TIMEOUT))["at"]
    if TOPICS[turn.topic][0] not in call["text"]:
        raise RuntimeError(f"the Telegram reply is not from the {turn.topic} entry: {call['text']}")


# --- part 1: overhead -----------------------------------------------------------------------------------


async def warm_up(ctx: Context) -> None:
    """Every question once each way (the model loaded and the vectors cached in both processes),
    then wait until both processes are idle (the app loads the model in a thread as it starts)."""
    print(f"  warming up ({len(QUESTIONS)} questions each way)", file=sys.stderr, flush=True)
    for n, (topic, text) in enumerate(QUESTIONS):
        warm = Round(topic, text, f"v_tgw_{ctx.run}_{n}", f"w{n}", chat=next(ctx.chats))
        socket = await open_socket(ctx, warm.widget_visitor)
        await widget_turn(socket, warm)
        await socket.close()
        await start_chat(ctx, warm.chat)
        await telegram_turn(ctx, warm)
    await settle(ctx)


async def settle(ctx: Context, idle: float = 0.1, longest: float = 60.0) -> None:
    """Wait until the app and the worker together use less than `idle` of a core over a second."""
    deadline = now() + longest
    while now() < deadline:
        before = cpu_seconds(ctx.server_pid) + cpu_seconds(ctx.worker_pid)
        await asyncio.sleep(1.0)
        if cpu_seconds(ctx.server_pid) + cpu_seconds(ctx.worker_pid) - before < idle:
            return


async def overhead(ctx: Context, rounds: int) -> tuple[list[Round], dict[str, float]]:
    turns = [Round(*QUESTIONS[r % len(QUESTIONS)], f"v_tg_{ctx.run}_{r}", f"q{r}", chat=next(ctx.chats))
             for r in range(rounds)]
    sockets = [await open_socket(ctx, turn.widget_visitor) for turn in turns]
    for turn in turns:
        await start_chat(ctx, turn.chat)
    await settle(ctx)
    print(f"  part 1: {rounds} rounds", file=sys.stderr, flush=True)
    cpu = {"server": cpu_seconds(ctx.server_pid), "worker": cpu_seconds(ctx.worker_pid)}
    for r, (turn, socket) in enumerate(zip(turns, sockets, strict=True)):
        order = [widget_turn(socket, turn), telegram_turn(ctx, turn)]
        for step in order if r % 2 == 0 else reversed(order):
            await step
            await asyncio.sleep(PAUSE)
    cpu = {name: cpu_seconds(pid) - cpu[name] for name, pid in
           (("server", ctx.server_pid), ("worker", ctx.worker_pid))}
    await asyncio.gather(*(socket.close() for socket in sockets), return_exceptions=True)
    return turns, cpu


def steps_from_rows(turns: list[Round], connection_id: int) -> None:
    """Each turn's steps from the rows' timestamps (wall clock, turned into this clock)."""
    from chat.models import Message
    from messengers.models import Delivery, InboundUpdate

    offset = time.time() - time.monotonic()

    def mono(moment: datetime) -> float:
        return moment.timestamp() - offset

    for turn in turns:
        asked = Message.objects.get(conversation__visitor_id=turn.widget_visitor, client_msg_id=turn.client_msg_id)
        answer = Message.objects.get(reply_to=asked, role=Message.Role.BOT)
        update = InboundUpdate.objects.get(connection_id=connection_id, update_id=turn.update_id)
        visitor = Message.objects.get(conversation__visitor_id=f"tg:{turn.chat}", client_msg_id=str(turn.update_id))
        reply = Message.objects.get(reply_to=visitor, role=Message.Role.BOT)
        delivery = Delivery.objects.get(message_id=reply.pk, method="sendMessage")
        marks = {
            "w_stored": mono(asked.created_at) - turn.widget_sent,
            "w_chain": mono(answer.created_at) - mono(asked.created_at),
            "w_shown": turn.widget_reply - mono(answer.created_at),
            "t_stored": mono(update.received_at) - turn.posted,
            "t_ok": turn.post_ok - turn.posted,
            "t_hop": mono(visitor.created_at) - mono(update.received_at),
            "t_typing": turn.typing - mono(visitor.created_at),
            "t_chain": mono(reply.created_at) - turn.typing,
            "t_delivery": mono(delivery.created_at) - mono(reply.created_at),
            "t_sent": turn.tg_reply - mono(delivery.created_at),
        }
        turn.steps = {name: value * 1000 for name, value in marks.items()}


# --- part 2: throughput ---------------------------------------------------------------------------------


@dataclass
class Planned:
    at: float  # seconds after the start
    chat: int
    kind: str  # "start" / "question"
    topic: str = ""
    text: str = ""
    update_id: int = 0
    resend: bool = False


@dataclass
class Posted:
    planned: Planned
    sent: float
    done: float
    status: int  # 0: no answer (a connection error or the client's timeout)


def plan(rate: float, seconds: float, seed: int) -> list[Planned]:
    """`rate` × `seconds` updates from distinct chats, evenly spaced, and the resends on top."""
    rng = random.Random(seed)
    total = int(rate * seconds)
    events: list[tuple[float, int, Planned]] = []
    chat = CHAT_BASE + 10**6
    while len(events) < total * 1.3:
        chat += 1
        at = rng.uniform(0, seconds)
        order = 0
        if rng.random() < 0.3:
            events.append((at, order, Planned(0.0, chat, "start")))
            order, at = order + 1, at + rng.uniform(1, 4)
        count = rng.choices([1, 2, 3], weights=[60, 25, 15])[0]
        for topic in rng.sample(list(TOPICS), count):
            events.append((at, order, Planned(0.0, chat, "question", topic, rng.choice(TOPICS[topic][1]))))
            order, at = order + 1, at + rng.uniform(2, 8)
    events.sort(key=lambda event: (event[0], event[2].chat, event[1]))
    chosen = [event for _at, _order, event in events[:total]]  # a chat's later messages may fall past the cut
    for n, event in enumerate(chosen):
        event.at, event.update_id = n / rate, n + 1
    resends = [Planned(event.at + rng.uniform(1, 5), event.chat, event.kind, event.topic, event.text, event.update_id,
                       resend=True) for event in chosen if rng.random() < 0.03]
    return sorted(chosen + resends, key=lambda event: event.at)


async def throughput(ctx: Context, rate: float, seconds: float, seed: int, receive_first: bool = False,
                     ) -> dict[str, Any]:
    """Send the plan as Telegram delivers to a webhook: updates become due at their time, at most
    MAX_CONNECTIONS POSTs in flight, an update whose POST was not answered 200 is posted again
    after a pause that doubles (1 s, 2 s, 4 s…). `receive_first`: the worker is stopped (SIGSTOP)
    until every update is accepted, so receiving and answering are each measured alone."""
    from tests.fakes.telegram_api import start_update, text_update

    schedule = plan(rate, seconds, seed)
    base_id = 10**6
    for event in schedule:
        event.update_id += base_id
    chats = range(CHAT_BASE + 10**6, CHAT_BASE + 2 * 10**6)
    unique = [event for event in schedule if not event.resend]
    posted: list[Posted] = []
    accepted: dict[int, float] = {}  # update id → when its first 200 came
    samples: list[tuple[float, int, int, int, int]] = []  # (t, accepted, stored, handled, answered)
    due: asyncio.Queue[tuple[Planned, int]] = asyncio.Queue()
    unfinished = 0
    finished = asyncio.Event()
    print(f"  part 2: {len(unique)} updates at {rate:g}/s (+ {len(schedule) - len(unique)} resends)",
          file=sys.stderr, flush=True)

    def done_one() -> None:
        nonlocal unfinished
        unfinished -= 1
        if unfinished == 0 and feeding.done():
            finished.set()

    async def again(event: Planned, attempt: int) -> None:
        await asyncio.sleep(min(2.0 ** (attempt - 1), 60.0))
        due.put_nowait((event, attempt + 1))

    async def connection() -> None:
        while True:
            event, attempt = await due.get()
            update = (start_update(event.update_id, event.chat) if event.kind == "start"
                      else text_update(event.update_id, event.chat, event.text))
            try:
                sent, answered, status = await post_update(ctx, update)
            except Exception:  # no answer: posted again, as Telegram does
                sent, answered, status = now(), now(), 0
            posted.append(Posted(event, sent, answered, status))
            if status == 200:
                accepted.setdefault(event.update_id, answered)
                done_one()
            elif attempt < RETRIES:
                retries.add(asyncio.create_task(again(event, attempt)))
            else:
                done_one()

    async def feed() -> None:
        nonlocal unfinished
        for event in schedule:
            delay = started + event.at - now()
            if delay > 0:
                await asyncio.sleep(delay)
            unfinished += 1
            due.put_nowait((event, 1))

    def counts() -> tuple[int, int, int]:
        from messengers.models import InboundUpdate

        updates = InboundUpdate.objects.filter(connection_id=ctx.connection_id, update_id__gt=base_id)
        stored = updates.count()
        handled = updates.exclude(status=InboundUpdate.Status.RECEIVED).count()
        return stored, handled, len(ctx.fake.of("sendMessage", chats))

    async def sample() -> None:
        while not stop_sampling.is_set():
            stored, handled, answered = await asyncio.to_thread(counts)
            samples.append((now() - started, len(accepted), stored, handled, answered))
            try:
                await asyncio.wait_for(stop_sampling.wait(), 2.0)
            except TimeoutError:
                pass

    retries: set[asyncio.Task[None]] = set()
    stop_sampling = asyncio.Event()
    cpu = {"server": cpu_seconds(ctx.server_pid), "worker": cpu_seconds(ctx.worker_pid)}
    started = now() + 0.5
    sampler = asyncio.create_task(sample())
    if receive_first:
        os.kill(ctx.worker_pid, signal.SIGSTOP)
    senders = [asyncio.create_task(connection()) for _ in range(MAX_CONNECTIONS)]
    feeding = asyncio.create_task(feed())
    await feeding
    if unfinished:
        await finished.wait()
    sent_all = now()
    if receive_first:
        os.kill(ctx.worker_pid, signal.SIGCONT)
    for sender in senders:
        sender.cancel()
    cpu_sending = {name: cpu_seconds(pid) - cpu[name] for name, pid in
                   (("server", ctx.server_pid), ("worker", ctx.worker_pid))}
    print("  part 2: sent; draining", file=sys.stderr, flush=True)
    expected = len(accepted)  # one sendMessage per accepted update: a greeting or a reply
    last_progress, last_answered = now(), -1
    while True:
        stored, handled, answered = await asyncio.to_thread(counts)
        if answered != last_answered:
            last_progress, last_answered = now(), answered
        if handled >= stored and answered >= expected:
            break
        if now() - last_progress > 120:
            print(f"  no progress for 120 s: {handled}/{stored} handled, {answered}/{expected} answered",
                  file=sys.stderr)
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(3)  # anything sent twice would arrive now
    stop_sampling.set()
    await sampler
    cpu_all = {name: cpu_seconds(pid) - cpu[name] for name, pid in
               (("server", ctx.server_pid), ("worker", ctx.worker_pid))}
    return {"schedule": schedule, "posted": posted, "accepted": accepted, "samples": samples, "started": started,
            "sent_all": sent_all, "cpu_sending": cpu_sending, "cpu_all": cpu_all, "base_id": base_id,
            "chats": chats}


def check_throughput(ctx: Context, result: dict[str, Any]) -> dict[str, Any]:
    """What the database and the fake say about part 2's updates."""
    from chat.models import Message
    from messengers.models import Delivery, InboundUpdate

    schedule: list[Planned] = result["schedule"]
    accepted: dict[int, float] = result["accepted"]
    unique = [event for event in schedule if not event.resend]
    taken = [event for event in unique if event.update_id in accepted]
    questions = [event for event in taken if event.kind == "question"]
    updates = InboundUpdate.objects.filter(connection_id=ctx.connection_id, update_id__gt=result["base_id"])
    per_id = Counter(updates.values_list("update_id", flat=True))
    statuses = Counter(updates.values_list("status", flat=True))
    visitors = {f"tg:{event.chat}" for event in unique}
    asked = Message.objects.filter(conversation__visitor_id__in=visitors, role=Message.Role.VISITOR)
    replies = Message.objects.filter(reply_to__in=asked, role=Message.Role.BOT)
    deliveries = Delivery.objects.filter(connection_id=ctx.connection_id, chat__chat_id__in=[
        str(event.chat) for event in unique], method="sendMessage")
    delivery_status = Counter(deliveries.values_list("status", flat=True))
    calls = [call for call in ctx.fake.of("sendMessage", result["chats"]) if call["status"] == 200]
    by_text = Counter((call["chat"], call["text"]) for call in calls)
    by_chat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for call in calls:
        by_chat[call["chat"]].append(call)
    expected_by_chat = Counter(str(event.chat) for event in taken)
    lost = sum(max(0, count - len(by_chat.get(chat, []))) for chat, count in expected_by_chat.items())
    extra = sum(max(0, len(by_chat.get(chat, [])) - count) for chat, count in expected_by_chat.items())
    wrong: list[str] = []  # replies without their passage's fact
    # The n-th accepted update of a chat ↔ its n-th sendMessage (a chat's updates are answered in
    # update order): from the moment it was due (Telegram had it) to its reply at the fake.
    due_to_answer: list[float] = []
    by_chat_events: dict[str, list[Planned]] = defaultdict(list)
    for event in taken:
        by_chat_events[str(event.chat)].append(event)
    for chat, events in by_chat_events.items():
        sent = sorted(by_chat.get(chat, []), key=lambda call: call["at"])
        for event, call in zip(sorted(events, key=lambda e: e.update_id), sent, strict=False):
            if event.kind == "question" and TOPICS[event.topic][0] not in call["text"]:
                wrong.append(f"{event.text} → {call['text'][:80]}")
            due_to_answer.append((call["at"] - result["started"] - event.at) * 1000)
    return {
        "unique": len(unique), "accepted": len(taken), "questions": len(questions),
        "starts": len(taken) - len(questions), "resends": len(schedule) - len(unique),
        "stored": sum(per_id.values()), "stored_ids": len(per_id),
        "stored_twice": sum(1 for count in per_id.values() if count > 1), "statuses": dict(statuses),
        "asked": asked.count(), "replies": replies.count(), "deliveries": dict(delivery_status),
        "sent": len(calls), "lost": lost, "extra": extra,
        "same_text_twice": sum(count - 1 for count in by_text.values() if count > 1),
        "wrong": wrong, "due_to_answer": due_to_answer, "answer_times": sorted(call["at"] for call in calls),
    }


# --- report ---------------------------------------------------------------------------------------------


def ms(values: list[float], q: float) -> float:
    from knowledge.evaluation import percentile

    return percentile(values, q)


def report_overhead(turns: list[Round], cpu: dict[str, float]) -> None:
    widget = [turn.widget_ms for turn in turns]
    telegram = [turn.telegram_ms for turn in turns]
    extra = [turn.telegram_ms - turn.widget_ms for turn in turns]
    ok = [(turn.post_ok - turn.posted) * 1000 for turn in turns]
    typing = [(turn.typing - turn.posted) * 1000 for turn in turns]
    over50 = ms(telegram, 50) - ms(widget, 50)
    rows: list[list[Any]] = [
        ["(a) widget: `message` frame → the bot's `message` frame (baseline)", len(widget), ms(widget, 50),
         ms(widget, 95), max(widget), 1.0, ""],
        ["(b) Telegram: update POSTed → the reply's sendMessage at the fake", len(telegram), ms(telegram, 50),
         ms(telegram, 95), max(telegram), ms(telegram, 50) / ms(widget, 50), ""],
        ["    update POSTed → the POST's 200", len(ok), ms(ok, 50), ms(ok, 95), max(ok), "", ""],
        ["    update POSTed → sendChatAction «typing» at the fake", len(typing), ms(typing, 50), ms(typing, 95),
         max(typing), "", ""],
        ["overhead b − a, per round", len(extra), ms(extra, 50), ms(extra, 95), max(extra), "",
         "yes" if ms(extra, 50) <= TARGET_OVERHEAD_MS else "no"],
        ["overhead: p50(b) − p50(a)", "", over50, "", "", "", "yes" if over50 <= TARGET_OVERHEAD_MS else "no"],
    ]
    print(common.table(["turn", "rounds", "p50 ms", "p95 ms", "max ms", "p50 vs widget",
                        f"≤ {TARGET_OVERHEAD_MS:.0f} ms p50"], rows))
    per_turn = {name: seconds * 1000 / len(turns) for name, seconds in cpu.items()}
    print(f"\nCPU per round (one turn each way): app process {per_turn['server']:.1f} ms, "
          f"worker {per_turn['worker']:.1f} ms\n")
    names = {
        "w_stored": ("widget", "frame sent → the visitor's message stored (app)"),
        "w_chain": ("widget", "→ the reply stored (the chain)"),
        "w_shown": ("widget", "→ the reply's frame at the client"),
        "t_stored": ("Telegram", "POST sent → the update stored (app)"),
        "t_ok": ("Telegram", "POST sent → 200 at the client"),
        "t_hop": ("Telegram", "update stored → the visitor's message stored (worker: Celery hop, claim, "
                              "conversation)"),
        "t_typing": ("Telegram", "→ sendChatAction at the fake"),
        "t_chain": ("Telegram", "→ the reply stored (the chain)"),
        "t_delivery": ("Telegram", "→ its delivery row made"),
        "t_sent": ("Telegram", "→ sendMessage at the fake"),
    }
    rows = [[way, step, ms([t.steps[key] for t in turns], 50), ms([t.steps[key] for t in turns], 95)]
            for key, (way, step) in names.items()]
    print(common.table(["turn", "step (from the rows' timestamps)", "p50 ms", "p95 ms"], rows))


def report_throughput(result: dict[str, Any], checked: dict[str, Any], rate: float, seconds: float,
                      threads: int) -> None:
    posted: list[Posted] = result["posted"]
    started, sent_all = result["started"], result["sent_all"]
    schedule: list[Planned] = result["schedule"]
    accepted: dict[int, float] = result["accepted"]
    due = {event.update_id: started + event.at for event in schedule if not event.resend}
    waited = [(accepted[uid] - at) * 1000 for uid, at in due.items() if uid in accepted]
    latency = [(p.done - p.sent) * 1000 for p in posted if p.status == 200]
    others = Counter(p.status for p in posted if p.status != 200)
    first_posts: dict[int, Posted] = {}
    for item in sorted((p for p in posted if not p.planned.resend), key=lambda p: p.sent):
        first_posts.setdefault(item.planned.update_id, item)
    first_try = [uid for uid, item in first_posts.items() if item.status == 200]
    answers = checked["answer_times"]
    last_due = started + seconds
    accepted_in_time = sum(1 for at in accepted.values() if at <= last_due + 1)
    during = [at for at in answers if at <= last_due + 1]
    last_answer = answers[-1] if answers else sent_all
    last_accepted = max(accepted.values(), default=sent_all)
    alone = [at for at in answers if at > last_accepted]
    statuses = checked["statuses"]
    print(f"{checked['unique']} updates from {len({event.chat for event in schedule})} chats + {checked['resends']} "
          f"resends; at most {MAX_CONNECTIONS} POSTs in flight (Telegram's default), an unanswered POST sent again "
          f"after 1, 2, 4… s; one app process, one worker process with {threads} threads\n")
    rows: list[list[Any]] = [
        ["updates due per second / accepted per second while due", f"{rate:g} / "
         f"{accepted_in_time / (seconds + 1):.1f}", "yes" if accepted_in_time >= checked["unique"] * 0.99 else "no"],
        ["updates accepted (200) / at the first POST / never (after 8 POSTs)",
         f"{checked['accepted']} / {len(first_try)} / {checked['unique'] - checked['accepted']}", ""],
        ["POSTs: all / answered 200 / other answers",
         f"{len(posted)} / {len(posted) - sum(others.values())} / "
         + (", ".join(f"{status or 'none'}: {count}" for status, count in sorted(others.items())) or "0"), ""],
        ["POST → 200, p50 / p95 / max ms", f"{ms(latency, 50):.1f} / {ms(latency, 95):.1f} / {max(latency):.0f}", ""],
        ["update due → 200 (Telegram's queue + POSTs), p50 / p95 / max ms",
         f"{ms(waited, 50):.1f} / {ms(waited, 95):.1f} / {max(waited):.0f}", ""],
        ["updates stored (rows) / distinct update ids / ids stored twice",
         f"{checked['stored']} / {checked['stored_ids']} / {checked['stored_twice']}",
         "yes" if checked["stored_ids"] == checked["accepted"] and checked["stored_twice"] == 0 else "no"],
        ["updates handled / failed / ignored / left", f"{statuses.get('handled', 0)} / {statuses.get('failed', 0)} / "
         f"{statuses.get('ignored', 0)} / {statuses.get('received', 0)}", ""],
        [f"questions ({checked['questions']}): visitor messages stored / bot replies stored",
         f"{checked['asked']} / {checked['replies']}",
         "yes" if checked["asked"] == checked["replies"] == checked["questions"] else "no"],
        ["sendMessage deliveries by status", ", ".join(f"{k} {v}" for k, v in sorted(checked["deliveries"].items())),
         ""],
        [f"sendMessage calls answered 200 (one per accepted update: {checked['accepted']})", checked["sent"], ""],
        ["lost (an accepted update without its sendMessage) / sent more than once / same chat + text twice",
         f"{checked['lost']} / {checked['extra']} / {checked['same_text_twice']}",
         "yes" if checked["lost"] == checked["extra"] == checked["same_text_twice"] == 0 else "no"],
        ["replies without their passage's fact", len(checked["wrong"]), ""],
        ["answers per second while updates were due", f"{len(during) / (seconds + 1):.1f}", ""],
        ["answers per second, first due → last answer", f"{len(answers) / max(1e-9, last_answer - started):.1f}", ""],
        ["answers per second after the last update was accepted (the worker alone)",
         f"{len(alone) / max(1e-9, last_answer - last_accepted):.1f}" if len(alone) > 1 else "", ""],
        ["backlog when the last update was due (accepted, not answered)",
         max(0, accepted_in_time - len(during)), ""],
        ["drain: last update due → last answer, s", f"{max(0.0, last_answer - last_due):.1f}", ""],
        ["update due → its sendMessage, p50 / p95 s",
         f"{ms(checked['due_to_answer'], 50) / 1000:.2f} / {ms(checked['due_to_answer'], 95) / 1000:.2f}", ""],
        ["CPU while sending: app / worker (1.0 = one core)",
         f"{result['cpu_sending']['server'] / (sent_all - started):.2f} / "
         f"{result['cpu_sending']['worker'] / (sent_all - started):.2f}", ""],
        ["worker CPU per answer, ms", f"{result['cpu_all']['worker'] * 1000 / max(1, len(answers)):.1f}", ""],
        ["app CPU per POST, ms", f"{result['cpu_all']['server'] * 1000 / max(1, len(posted)):.2f}", ""],
    ]
    print(common.table([f"{rate:g} updates/s for {seconds:g} s", "measured", "met"], rows))
    for line in checked["wrong"][:5]:
        print(f"  not from its passage: {line}")
    print()
    timeline: list[list[Any]] = []
    for t, taken, stored, handled, answered in result["samples"]:
        if not timeline or t - timeline[-1][0] >= 10 or t == result["samples"][-1][0]:
            due_by = sum(1 for event in schedule if not event.resend and event.at <= t)
            timeline.append([round(t), due_by, taken, stored, handled, answered, stored - answered])
    print(common.table(["s since the first update was due", "due", "accepted", "stored", "handled", "answered",
                        "backlog (stored − answered)"], timeline))


# --- part 3: a waiting conversation reaches the operators' Telegram chats --------------------------------


@dataclass
class Team:
    """A bot whose operators linked their Telegram: where its widget is and their chats."""

    name: str
    widget: str
    chats: list[int]
    reached: list[float] = field(default_factory=list)  # ms, every chat of every round
    everyone: list[float] = field(default_factory=list)  # ms, the last chat of each round
    cpu: dict[str, float] = field(default_factory=lambda: {"server": 0.0, "worker": 0.0})  # s, all rounds


def link_operators(bot: Any, connection: Any, count: int, first_chat: int) -> list[int]:
    """`count` operators of the bot, each linked to a Telegram chat of its own as the inbox links
    them (a one-time code, then /start op_<code> in their chat); their chat ids."""
    from bots.services import membership_add
    from messengers import operators, services

    chats = []
    for n in range(count):
        user = membership_add(bot=bot, email=f"op{n}.{bot.slug}{OPERATOR_EMAILS}",
                              role="operator").membership.user
        chat_id = first_chat + n
        chat = services.chat_remember(connection=connection, chat_id=str(chat_id), name=f"Оператор {n}", username="")
        code = operators.code_make(user=user, bot=bot)
        if operators.link_by_code(connection=connection, chat=chat, code=code.code) is None:
            raise RuntimeError(f"operator {n} of {bot.slug} was not linked")
        chats.append(chat_id)
    return chats


def set_up_operators(bot: Any, connection: Any, count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bench bot's `count` linked operators, and the baseline bot with one: (main, baseline)
    as (widget public key, operator chats)."""
    from messengers import services

    one = common.bench_bot(SLUG_ONE, fresh=True)
    one.allowed_origins = [ORIGIN]
    one.save()
    one_connection = services.telegram_connect(bot=one, token=TOKEN_ONE)
    main = {"key": bot.public_key, "chats": link_operators(bot, connection, count, OPERATOR_CHAT_BASE)}
    baseline = {"key": one.public_key, "chats": link_operators(one, one_connection, 1, OPERATOR_CHAT_BASE + count)}
    return main, baseline


async def waiting_round(ctx: Context, team: Team, visitor: str) -> None:
    """A visitor of the team's bot calls an operator; every linked chat's notice timed."""
    from websockets.asyncio.client import connect

    ws = await connect(team.widget, origin=ORIGIN, ping_interval=None, open_timeout=TIMEOUT)  # type: ignore[arg-type]
    try:
        await ws.send(json.dumps({"type": "hello", "visitor_id": visitor, "last_seen_id": None}))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
        if welcome["type"] != "welcome":
            raise RuntimeError(f"expected welcome, got {welcome}")
        notices = [ctx.fake.expect("sendMessage", chat) for chat in team.chats]
        sent = now()
        await ws.send(json.dumps({"type": "button", "id": "operator"}))
        calls = await asyncio.wait_for(asyncio.gather(*notices), TIMEOUT)
    finally:
        await ws.close()
    times = [(call["at"] - sent) * 1000 for call in calls]
    team.reached.extend(times)
    team.everyone.append(max(times))


async def operators_reach(ctx: Context, port: int, teams: list[Team], rounds: int) -> None:
    print(f"  part 3: {rounds} rounds, {' and '.join(f'{len(t.chats)} operators' for t in teams)}",
          file=sys.stderr, flush=True)
    for r in range(rounds):
        for team in teams if r % 2 == 0 else reversed(teams):
            before = {"server": cpu_seconds(ctx.server_pid), "worker": cpu_seconds(ctx.worker_pid)}
            await waiting_round(ctx, team, f"v_op_{ctx.run}_{team.name}_{r}")
            await asyncio.sleep(PAUSE)
            await settle(ctx)
            team.cpu["server"] += cpu_seconds(ctx.server_pid) - before["server"]
            team.cpu["worker"] += cpu_seconds(ctx.worker_pid) - before["worker"]


def report_operators(teams: list[Team]) -> None:
    base = teams[-1]
    rows: list[list[Any]] = []
    for team in teams:
        rows.append([f"{len(team.chats)} linked: «Позвать оператора» → the last chat's sendMessage", len(team.everyone),
                     ms(team.everyone, 50), ms(team.everyone, 95), max(team.everyone),
                     ms(team.everyone, 95) / ms(base.everyone, 95),
                     "yes" if ms(team.everyone, 95) <= TARGET_REACH_MS else "no"])
        rows.append([f"{len(team.chats)} linked: → each chat's sendMessage", len(team.reached), ms(team.reached, 50),
                     ms(team.reached, 95), max(team.reached), "", ""])
    print(common.table(["a conversation starts waiting", "samples", "p50 ms", "p95 ms", "max ms",
                        "p95 vs 1 linked", f"≤ {TARGET_REACH_MS:.0f} ms p95"], rows))
    for team in teams:
        rounds = max(1, len(team.everyone))
        print(f"\nCPU per waiting conversation, {len(team.chats)} linked (the visitor's socket included): app process "
              f"{team.cpu['server'] * 1000 / rounds:.0f} ms, worker {team.cpu['worker'] * 1000 / rounds:.0f} ms")


def drop_operators() -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(email__endswith=OPERATOR_EMAILS).delete()


# --- main -----------------------------------------------------------------------------------------------


def set_up() -> tuple[Any, Any]:
    from bench.ws_capacity import PASSAGES
    from messengers import services

    bot = common.bench_bot(SLUG, fresh=True)
    bot.allowed_origins = [ORIGIN]
    bot.save()
    common.load_passages(bot, PASSAGES, source_title="bench-tg")
    common.embed_bot(bot, "e5-small")
    return bot, services.telegram_connect(bot=bot, token=TOKEN)


async def measure(args: argparse.Namespace, fake: FakeProcess, port: int, bot: Any, connection: Any,
                  server_pid: int, worker_pid: int) -> dict[str, Any]:
    import httpx

    out: dict[str, Any] = {}
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=500, max_keepalive_connections=100),
                                 timeout=TIMEOUT) as http:
        ctx = Context(fake=fake, http=http, webhook=f"http://127.0.0.1:{port}/messengers/telegram/{connection.webhook_key}/",
                      secret=connection.secret, widget=f"ws://127.0.0.1:{port}/ws/chat/{bot.public_key}/",
                      connection_id=connection.pk, server_pid=server_pid, worker_pid=worker_pid)
        await warm_up(ctx)
        if "overhead" in args.only:
            out["turns"], out["cpu"] = await overhead(ctx, args.rounds)
            await asyncio.to_thread(steps_from_rows, out["turns"], connection.pk)
            await settle(ctx)
        if "operators" in args.only:
            main, baseline = await asyncio.to_thread(set_up_operators, bot, connection, args.operators)
            out["teams"] = [Team("many", f"ws://127.0.0.1:{port}/ws/chat/{main['key']}/", main["chats"]),
                            Team("one", f"ws://127.0.0.1:{port}/ws/chat/{baseline['key']}/", baseline["chats"])]
            await settle(ctx)
            await operators_reach(ctx, port, out["teams"], args.operator_rounds)
        if "throughput" in args.only:
            out["throughput"] = await throughput(ctx, args.rate, args.seconds, args.seed, args.receive_first)
            out["checked"] = await asyncio.to_thread(check_throughput, ctx, out["throughput"])
    return out


def main() -> None:
    if "--serve-fake" in sys.argv:
        serve_fake()
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40, help="part 1: questions asked each way")
    parser.add_argument("--rate", type=float, default=100.0, help="part 2: new updates per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="part 2: how long they are sent")
    parser.add_argument("--threads", type=int, default=4, help="the worker's threads (-P threads -c N)")
    parser.add_argument("--worker-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for the worker's environment (e.g. DB_CONN_MAX_AGE=60)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--only", default="overhead,operators,throughput",
                        help="any of overhead, operators, throughput (comma-separated)")
    parser.add_argument("--operators", type=int, default=50, help="part 3: operators linked to the bench bot")
    parser.add_argument("--operator-rounds", type=int, default=20, help="part 3: waiting conversations per bot")
    parser.add_argument("--receive-first", action="store_true",
                        help="part 2: the worker paused until every update is accepted (each side alone)")
    parser.add_argument("--quick", action="store_true", help="16 rounds, 20 s of updates")
    parser.add_argument("--code", type=Path, default=common.REPO,
                        help="run the app and the worker from this checkout (compare a change)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.operator_rounds = 16, 20.0, 8
    load_before = os.getloadavg()
    fake = FakeProcess()
    os.environ.update({"TELEGRAM_API_BASE": fake.url, "CELERY_QUEUE": QUEUE, "LLM_PROVIDER": "none"})
    from bench.ws_capacity import Server, free_port, start_server, stop_server

    worker: Worker | None = None
    server: Server | None = None
    try:
        common.setup_django(DATABASE)
        from django.conf import settings

        bot, connection = set_up()
        from assistant.asgi import uvicorn_flags

        server = Server("production", uvicorn_flags(), [])
        port = free_port()
        start_server(server, port, args.code)
        worker = Worker(args.threads, list(settings.WORKER_QUEUES),
                        dict(item.split("=", 1) for item in args.worker_env))
        worker.start(args.code)
        assert server.process is not None and worker.process is not None
        started = time.monotonic()
        results = asyncio.run(measure(args, fake, port, bot, connection, server.process.pid, worker.process.pid))
        elapsed = time.monotonic() - started
    finally:
        if worker is not None:
            worker.stop()
        if server is not None:
            stop_server(server)
        fake.stop()
        if "django" in sys.modules and "bench.common" in sys.modules:
            try:
                common.drop_bot(SLUG)
                common.drop_bot(SLUG_ONE)
                drop_operators()
            except Exception as exc:  # the set-up itself failed
                print(f"  the bench bot was not deleted: {exc!r}", file=sys.stderr)
    load_after = os.getloadavg()
    assert server is not None and worker is not None
    errors = server.new_errors() + worker.tracebacks()
    print(f"# Messengers (Telegram) — {common.machine()}; one uvicorn process, one Celery worker "
          f"(-P threads -c {args.threads}), the fake Bot API in a process of its own")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {elapsed:.0f} s measuring; "
          f"tracebacks in the app and worker logs: {errors}")
    print(f"# app and worker code: {'this checkout' if args.code == common.REPO else args.code}"
          + (f"; worker environment: {' '.join(args.worker_env)}" if args.worker_env else "") + "\n")
    if "turns" in results:
        print(f"## Part 1: a Telegram turn over the widget's, {len(results['turns'])} rounds\n")
        report_overhead(results["turns"], results["cpu"])
        print()
    if "teams" in results:
        print(f"## Part 3: a waiting conversation reaches the operators linked in Telegram, "
              f"{len(results['teams'][0].everyone)} rounds per bot\n")
        report_operators(results["teams"])
        print()
    if "throughput" in results:
        print(f"## Part 2: {args.rate:g} updates/s for {args.seconds:g} s\n")
        report_throughput(results["throughput"], results["checked"], args.rate, args.seconds, args.threads)


if __name__ == "__main__":
    main()
