"""Operator ↔ visitor latency on one ASGI process with many conversations held by operators:
operator message → the visitor's widget, visitor message → the operator's inbox, and the
widget's ping → pong on the same process in the same run (the baseline: the transport alone).

    python bench/operator_latency.py [--conversations 50] [--operators 5] [--rounds 20]
                                     [--pauses 2.5 1.0 0] [--quick] [--code DIR]

One `uvicorn assistant.asgi:application` subprocess (the production options, DEBUG=0,
LLM_PROVIDER=none, rate limits far above what is sent: see bench/ws_capacity.py) on the bench
database and the usual Redis. The clients are real websocket clients in this process:
`--conversations` widget sockets (the bot's allowed Origin) and `--operators` inbox sockets
(a real session cookie each, this server's own Origin). Set-up, through the sockets as people
do it: every visitor presses «Позвать оператора», the operators take the conversations in turn
(10 each with the defaults), so every conversation is in `operator` state and every operator
socket hears the bot's whole feed (a `conversation` frame for every message of every
conversation, a `message` frame for those it holds).

Then every conversation runs `--rounds` rounds at once, one load per `--pauses` value, each
step followed by a pause of that many seconds × uniform(0.5, 1.5):
1. the visitor's ping → pong (the baseline, on the same sockets, under the same load);
2. the operator types (`typing` on → the visitor sees the dots), sends a message (→ its `ack`;
   → the visitor's `message` frame: "the visitor's screen") and stops typing, as inbox.js does;
3. the visitor sends a message (→ its `ack`; → the holding operator's `message` frame).
With 2.5 s each side writes about every 7 s in every conversation at once (people typing fast,
all fifty conversations busy); 1 s is faster than people type; 0 is every conversation back to
back (the limit, not a load people make). A latency is the time from sending a frame to the arrival of the frame it
causes at the other socket, both clocks being this process's. Only one frame per socket is in
flight at a time. Server CPU is the uvicorn process's user+system time over the wall time of
the step (1.0 = one core busy). Every frame is matched by its client_msg_id and checked; the
server's log is searched for tracebacks. The bench bot and its users are deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.ws_capacity import Server, free_port, start_server, stop_server

ORIGIN = "https://bench.example"
SLUG = "bench-ops"
USERS = "bench-ops-"
TARGET_MS = 150.0
TIMEOUT = 60.0
LOST_AFTER = 20.0


Future = asyncio.Future[tuple[float, dict[str, Any]]]


class Socket:
    """One client websocket read by one task: each frame a caller awaits resolves its future with
    (arrival time, frame). Keys: ("pong",), ("ack", client_msg_id), ("message", client_msg_id),
    ("typing", on), ("state", state), ("welcome",), ("queue",), ("presence",), ("conversation", id,
    state) and ("visitor", visitor_id, state) for the same frame (a conversation the visitor started
    by the button: its id is not known before it arrives). `seen` counts every key that arrived."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.waiting: dict[tuple[Any, ...], Future] = {}
        self.seen: Counter[tuple[Any, ...]] = Counter()
        self.errors: list[dict[str, Any]] = []
        self.task = asyncio.create_task(self._read())

    def expect(self, *key: Any) -> Future:
        future = self.waiting[key] = asyncio.get_running_loop().create_future()
        return future

    async def send(self, **frame: Any) -> float:
        """Send a frame; the time it was handed to the socket."""
        started = time.perf_counter()
        await self.ws.send(json.dumps(frame, ensure_ascii=False))
        return started

    @staticmethod
    def _keys(frame: dict[str, Any]) -> list[tuple[Any, ...]]:
        kind = frame["type"]
        if kind in ("ack", "message"):
            return [(kind, frame["message"]["client_msg_id"])]
        if kind == "typing":
            return [(kind, frame["on"])]
        if kind == "state":
            return [(kind, frame["state"])]
        if kind == "conversation":
            conversation = frame["conversation"]
            return [(kind, conversation["id"], conversation["state"]),
                    ("visitor", conversation["visitor"]["id"], conversation["state"])]
        return [(kind,)]

    async def _read(self) -> None:
        async for raw in self.ws:
            arrived = time.perf_counter()
            frame = json.loads(raw)
            if frame["type"] == "error":
                self.errors.append(frame)
            for key in self._keys(frame):
                self.seen[key] += 1
                future = self.waiting.pop(key, None)
                if future is not None and not future.done():
                    future.set_result((arrived, frame))

    async def close(self) -> None:
        await self.ws.close()
        self.task.cancel()


async def wait(future: Future) -> tuple[float, dict[str, Any]]:
    return await asyncio.wait_for(future, TIMEOUT)


@dataclass
class Conversation:
    id: int
    visitor: Socket
    operator: Socket


@dataclass
class Samples:
    """Latencies in ms by path, for one load."""

    paths: dict[str, list[float]] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)  # frames that never arrived (within LOST_AFTER s)
    wall: float = 0.0
    cpu: float = 0.0

    def add(self, path: str, started: float, arrived: float) -> None:
        self.paths.setdefault(path, []).append((arrived - started) * 1000)


PATHS = {
    "ping": "widget ping → pong (baseline, the same sockets)",
    "op_ack": "operator message → its ack",
    "op_visitor": "operator message → the visitor's widget",
    "typing": "operator typing → the visitor's dots",
    "typing_off": "operator stops typing → the dots go",
    "v_ack": "visitor message → its ack",
    "v_operator": "visitor message → the operator's inbox",
}


async def open_visitor(base: str, public_key: str, visitor_id: str) -> tuple[Socket, int | None]:
    """A widget socket after `hello` → `welcome`, and the visitor's open conversation (None: a new
    visitor has none until their first message or the operator button starts one)."""
    from websockets.asyncio.client import connect

    ws = await connect(f"{base}/ws/chat/{public_key}/", origin=ORIGIN, ping_interval=None,  # type: ignore[arg-type]
                       open_timeout=TIMEOUT)
    socket = Socket(ws)
    welcome = socket.expect("welcome")
    await socket.send(type="hello", visitor_id=visitor_id, last_seen_id=None)
    _, frame = await wait(welcome)
    return socket, None if frame["conversation_id"] is None else int(frame["conversation_id"])


async def open_operator(base: str, origin: str, cookie: str) -> Socket:
    from websockets.asyncio.client import connect

    ws = await connect(f"{base}/ws/inbox/", origin=origin, ping_interval=None,  # type: ignore[arg-type]
                       additional_headers={"Cookie": f"sessionid={cookie}"}, open_timeout=TIMEOUT, max_size=2**24)
    socket = Socket(ws)
    queue = socket.expect("queue")
    await socket.send(type="hello")
    await wait(queue)
    return socket


async def hand_over(operators: list[Socket], visitors: list[tuple[Socket, str]]) -> list[Conversation]:
    """Every visitor asks for an operator (the button starts their conversation); the operators take
    them in turn."""
    conversations = []
    for n, (visitor, visitor_id) in enumerate(visitors):
        operator = operators[n % len(operators)]
        waiting, taken = visitor.expect("state", "waiting_operator"), visitor.expect("state", "operator")
        seen = operator.expect("visitor", visitor_id, "waiting_operator")
        await visitor.send(type="button", id="operator")
        _, frame = await wait(seen)
        await wait(waiting)
        conversation_id = int(frame["conversation"]["id"])
        await operator.send(type="take", conversation_id=conversation_id)
        await wait(taken)
        conversations.append(Conversation(conversation_id, visitor, operator))
    return conversations


def _pause(base: float) -> float:
    return base * random.uniform(0.5, 1.5) if base else 0.0


async def one_round(c: Conversation, tag: str, samples: Samples | None, pause: float) -> None:
    async def timed(path: str, started: float, future: Future, check: Callable[[dict[str, Any]], bool]) -> None:
        """Wait for the frame `future` stands for; record its latency, or that it never came."""
        try:
            arrived, frame = await asyncio.wait_for(future, LOST_AFTER)
        except TimeoutError:
            if samples is not None:
                samples.lost[path] = samples.lost.get(path, 0) + 1
            return
        if not check(frame):
            raise RuntimeError(f"{path}: unexpected frame {frame}")
        if samples is not None:
            samples.add(path, started, arrived)

    def any_frame(_frame: dict[str, Any]) -> bool:
        return True

    pong = c.visitor.expect("pong")
    await timed("ping", await c.visitor.send(type="ping"), pong, any_frame)
    await asyncio.sleep(_pause(pause))

    text, cmid = f"Оператор отвечает {tag}", f"o{tag}"
    dots, shown = c.visitor.expect("typing", True), c.visitor.expect("message", cmid)
    ack = c.operator.expect("ack", cmid)
    await timed("typing", await c.operator.send(type="typing", conversation_id=c.id, on=True), dots, any_frame)
    started = await c.operator.send(type="message", conversation_id=c.id, client_msg_id=cmid, text=text)
    await timed("op_visitor", started, shown,
                lambda frame: frame["message"]["text"] == text and frame["message"]["role"] == "operator")
    await timed("op_ack", started, ack, lambda frame: frame["conversation_id"] == c.id)
    dots_off = c.visitor.expect("typing", False)
    await timed("typing_off", await c.operator.send(type="typing", conversation_id=c.id, on=False), dots_off, any_frame)
    await asyncio.sleep(_pause(pause))

    text, cmid = f"Посетитель спрашивает {tag}", f"v{tag}"
    heard, v_ack = c.operator.expect("message", cmid), c.visitor.expect("ack", cmid)
    started = await c.visitor.send(type="message", client_msg_id=cmid, text=text)
    await timed("v_ack", started, v_ack, lambda frame: frame["message"]["text"] == text)
    await timed("v_operator", started, heard,
                lambda frame: frame["message"]["text"] == text and frame["conversation_id"] == c.id)
    await asyncio.sleep(_pause(pause))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_load(conversations: list[Conversation], rounds: int, pause: float, label: str, pid: int) -> Samples:
    samples = Samples()

    async def one(c: Conversation) -> None:
        await asyncio.sleep(random.uniform(0, pause))  # people do not all start typing in the same instant
        for r in range(rounds):
            await one_round(c, f"{label}_{c.id}_{r}", samples, pause)

    cpu, started = cpu_seconds(pid), time.perf_counter()
    await asyncio.gather(*(one(c) for c in conversations))
    samples.wall = time.perf_counter() - started
    samples.cpu = (cpu_seconds(pid) - cpu) / samples.wall
    return samples


async def idle_ping(socket: Socket, count: int = 200) -> list[float]:
    latencies = []
    for _ in range(count):
        pong = socket.expect("pong")
        started = await socket.send(type="ping")
        latencies.append(((await wait(pong))[0] - started) * 1000)
    return latencies


async def measure(server: Server, port: int, public_key: str, cookies: list[str], args: argparse.Namespace,
                  ) -> tuple[list[float], list[tuple[str, Samples]]]:
    base, origin = f"ws://127.0.0.1:{port}", f"http://127.0.0.1:{port}"
    assert server.process is not None
    operators = [await open_operator(base, origin, cookie) for cookie in cookies]
    visitor_ids = [f"v_ops_{port}_{n}" for n in range(args.conversations)]
    visitors = await asyncio.gather(*(open_visitor(base, public_key, visitor_id) for visitor_id in visitor_ids))
    conversations = await hand_over(operators, [(socket, visitor_id) for (socket, _none), visitor_id
                                                in zip(visitors, visitor_ids, strict=True)])
    await asyncio.gather(*(one_round(c, f"warm_{c.id}", None, 0.0) for c in conversations))
    idle = await idle_ping(conversations[0].visitor)
    loads = []
    for n, pause in enumerate(args.pauses):
        label = f"{pause:g} s ±50 % between steps" if pause else "back to back"
        loads.append((label, await run_load(conversations, args.rounds, pause, f"l{n}", server.process.pid)))
    errors = [e for s in [*operators, *(c.visitor for c in conversations)] for e in s.errors]
    if errors:
        raise RuntimeError(f"{len(errors)} error frames, the first: {errors[0]}")
    await asyncio.gather(*(s.close() for s in [*operators, *(c.visitor for c in conversations)]),
                         return_exceptions=True)
    return idle, loads


def set_up(args: argparse.Namespace) -> tuple[Any, list[str]]:
    bot = common.bench_bot(SLUG, fresh=True)
    bot.allowed_origins = [ORIGIN]
    bot.handoff_enabled = True
    bot.save()
    common.drop_users(USERS)
    cookies = [common.bench_member(bot, f"{USERS}{n}@bench.example", "operator", first_name=f"Оператор {n}")[1]
               for n in range(args.operators)]
    return bot, cookies


def report(idle: list[float], loads: list[tuple[str, Samples]], args: argparse.Namespace,
           load_before: tuple[float, ...], load_after: tuple[float, ...], errors: int) -> None:
    from knowledge.evaluation import percentile

    per = args.conversations // args.operators
    print(f"# Operator latency — {common.machine()}; one uvicorn process, {args.conversations} conversations "
          f"in operator state, {args.operators} operators (~{per} each), {args.rounds} rounds per conversation")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
          f"tracebacks in the server log: {errors}")
    print(f"# server code: {'this checkout' if args.code == common.REPO else args.code}\n")
    rows: list[list[Any]] = [["one socket, nothing else running", "widget ping → pong (idle baseline)", len(idle), 0,
                              percentile(idle, 50), percentile(idle, 95), max(idle), "", "", ""]]
    for label, samples in loads:
        ping95 = percentile(samples.paths["ping"], 95)
        messages = sum(len(samples.paths[p]) for p in ("op_visitor", "v_operator"))
        load = f"{label}: {messages / samples.wall:.0f} messages/s, server CPU {samples.cpu:.2f}"
        for path, name in PATHS.items():
            values, lost = samples.paths.get(path, []), samples.lost.get(path, 0)
            p95 = percentile(values, 95)
            target = ("yes" if p95 <= TARGET_MS and not lost else "no") if path in ("op_visitor", "v_operator") else ""
            rows.append([load, name, len(values), lost, percentile(values, 50), p95, max(values, default=0.0),
                         p95 / ping95 if ping95 else "", f"{p95 - ping95:.1f}", target])
    print(common.table(["load", "path", "samples", "lost", "p50 ms", "p95 ms", "max ms", "p95 vs ping",
                        "p95 − ping ms", f"p95 ≤ {TARGET_MS:.0f} ms"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--operators", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20, help="rounds per conversation and load")
    parser.add_argument("--pauses", type=float, nargs="+", default=[2.5, 1.0, 0.0],
                        help="one load per value: seconds between a conversation's steps (0: back to back)")
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    parser.add_argument("--code", type=Path, default=common.REPO,
                        help="run the server from this checkout (compare a change under the same conditions)")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 5
    load_before = os.getloadavg()
    common.setup_django()
    from assistant.asgi import uvicorn_flags

    bot, cookies = set_up(args)
    server = Server("production", uvicorn_flags(), [])
    try:
        port = free_port()
        start_server(server, port, args.code)
        try:
            idle, loads = asyncio.run(measure(server, port, bot.public_key, cookies, args))
        finally:
            stop_server(server)
        errors = server.new_errors()
    finally:
        common.drop_bot(SLUG)
        common.drop_users(USERS)
    report(idle, loads, args, load_before, os.getloadavg(), errors)


if __name__ == "__main__":
    main()
