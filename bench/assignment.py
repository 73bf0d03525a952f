"""Assignment in turn (issue 24): 20 operators on hand and 200 conversations arriving on one ASGI
process: every conversation given at once, evenly (each operator within ±1 of 200 / 20), none to
an operator who said they are away, and the time from the visitor's «Позвать оператора» to the
assigned operator's screen (target ≤ 100 ms p95); the baseline, in the same run, is the same
arrivals with «кто первым возьмёт»: the time to the waiting conversation on an operator's screen.

    python bench/assignment.py [--on-hand 20] [--away 3] [--arrivals 200] [--rate 10]
                               [--patterns poisson burst] [--rounds 2] [--limit 20] [--quick] [--code DIR]

One `uvicorn assistant.asgi:application` subprocess (the production options, DEBUG=0,
LLM_PROVIDER=none, the widget's rate limits far above what is sent: bench/ws_capacity.py) on the
bench database and the usual Redis. A bench bot with handoff on and `operator_open_limit`
`--limit` (20: twice what each gets, so the limit never shapes the counts), its `--on-hand` +
`--away` operators (a real session cookie each) connected to `/ws/inbox/` with the server's own
Origin, each `hello`'d (that makes them on hand; a ping → pong after it says the server has
written so); then the `--away` ones send `{"type":"presence","away":true}`. The bench checks in
the database that exactly the `--on-hand` ones are on hand before any load.

A load: `--arrivals` widget sockets open and `hello` (a new visitor: no conversation yet), then
each presses «Позвать оператора» (`{"type":"button","id":"operator"}`, which starts their
conversation) at its arrival time: `poisson`, a Poisson process at `--rate` per second (200 in
about 20 s: a busy shop's peak, after a mailing, more than 20 people answer in a minute), or
`burst`, waves of `--on-hand` at the same instant every `--on-hand / --rate` seconds (the same
mean rate, the worst case for the per-bot lock). Each (pattern, mode) is one load per round; the
bot's mode is switched between loads (`first`, the baseline, then `in_turn`; the order flips every
round, so neither always runs first), the previous load's conversations are deleted, and the
load's visitors open their widgets 2 s before the first arrival.

Latencies, both clocks this process's, from the button frame handed to the socket:
- in turn: to the `conversation` frame showing that conversation in state `operator` assigned to
  them at the ASSIGNED operator's socket (the target); to the visitor's `state: operator`;
- both modes: to the `conversation` frame in state `waiting_operator` at one on-hand operator's
  socket (the n-th arrival: operator n mod 20) — with «кто первым возьмёт» that is the baseline;
  to the visitor's `state: waiting_operator`.
Every operator socket hears the bot's whole feed, so every socket sees every assignment: the bench
checks that all of them name the same holder, once, that the holder is on hand, and, after the
load, the database: every conversation in `operator` state (in turn) or waiting (first), its
holder the one the frames named, per-operator counts. A frame not there within 20 s is lost.
Before the loads, one warm-up burst of 2 × `--on-hand` in each mode, not counted (a fresh process's
first frames pay for imports and connections). Server CPU is the uvicorn process's user+system
time over the load's wall time. The server log is searched for tracebacks. The bench bot and its
users are deleted at the end. `--quick`: 6 on hand, 2 away, 60 arrivals, Poisson only (~30 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.operator_latency import ORIGIN, Future, Socket, cpu_seconds, open_operator, open_visitor, wait
from bench.ws_capacity import Server, free_port, start_server, stop_server

SLUG = "bench-assign"
USERS = "bench-assign-"
TARGET_MS = 100.0
LOST_AFTER = 20.0
SETTLE = 2.0  # seconds between a load's sockets opened and its first arrival
FIRST, IN_TURN = "first", "in_turn"

PATHS = {
    "op_assigned": "button → the assigned operator's screen (`conversation`, operator, theirs)",
    "v_operator": "button → the visitor's `state: operator`",
    "op_waiting": "button → an operator's screen (`conversation`, waiting_operator)",
    "v_waiting": "button → the visitor's `state: waiting_operator`",
}


@dataclass
class Operator:
    user_id: int
    socket: Socket
    away: bool


@dataclass
class Load:
    pattern: str
    mode: str
    paths: dict[str, list[float]] = field(default_factory=dict)
    lost: Counter[str] = field(default_factory=Counter)
    given: Counter[int] = field(default_factory=Counter)  # operator id → conversations the frames gave them
    to_away: int = 0  # given to an operator who said they are away
    disagreeing: int = 0  # sockets naming different holders for one conversation
    doubled: int = 0  # an assignment frame seen more than once at one socket
    db_mismatch: int = 0  # the database's holder or state differs from what the frames said
    conversations: int = 0  # rows of the bot after the load
    wall: float = 0.0
    cpu: float = 0.0

    def add(self, path: str, started: float, arrived: float | None) -> None:
        if arrived is None:
            self.lost[path] += 1
        else:
            self.paths.setdefault(path, []).append((arrived - started) * 1000)


async def arrival(future: Future) -> tuple[float, dict[str, Any]] | None:
    try:
        return await asyncio.wait_for(future, LOST_AFTER)
    except TimeoutError:
        return None


def arrival_times(pattern: str, count: int, rate: float, wave: int) -> list[float]:
    """Seconds from the load's start at which each visitor presses the button."""
    if pattern == "burst":
        return [(n // wave) * wave / rate for n in range(count)]
    times, at = [], 0.0
    for _ in range(count):
        at += random.expovariate(rate)
        times.append(at)
    return times


async def visitor_arrives(visitor: Socket, visitor_id: str, n: int, at: float, started_at: float, load: Load,
                          operators: list[Operator]) -> None:
    on_hand = [o for o in operators if not o.away]
    await asyncio.sleep(max(0.0, started_at + at - time.perf_counter()))
    watched = on_hand[n % len(on_hand)]
    v_waiting, op_waiting = visitor.expect("state", "waiting_operator"), watched.socket.expect(
        "visitor", visitor_id, "waiting_operator")
    v_operator: Future | None = None
    assigned: list[Future] = []
    if load.mode == IN_TURN:
        v_operator = visitor.expect("state", "operator")
        assigned = [o.socket.expect("visitor", visitor_id, "operator") for o in operators]
    started = await visitor.send(type="button", id="operator")
    got = await arrival(op_waiting)
    load.add("op_waiting", started, got[0] if got else None)
    got = await arrival(v_waiting)
    load.add("v_waiting", started, got[0] if got else None)
    if load.mode != IN_TURN:
        return
    assert v_operator is not None
    frames = await asyncio.gather(*(arrival(future) for future in assigned))
    holders = {got[1]["conversation"]["assigned_to"]["id"] for got in frames if got is not None}
    if len(holders) > 1:
        load.disagreeing += 1
    holder = next(iter(holders), None)
    at_holder = next((got for o, got in zip(operators, frames, strict=True) if o.user_id == holder), None)
    load.add("op_assigned", started, at_holder[0] if at_holder else None)
    got = await arrival(v_operator)
    load.add("v_operator", started, got[0] if got else None)
    if holder is not None:
        load.given[holder] += 1
        load.to_away += any(o.away and o.user_id == holder for o in operators)


def conversations_of(bot_id: int) -> dict[str, tuple[str, int | None]]:
    """visitor id → (state, holder id) of the bot's conversations."""
    from chat.models import Conversation

    rows = Conversation.objects.filter(bot_id=bot_id).values_list("visitor_id", "state", "assigned_to_id")
    return {visitor_id: (state, holder) for visitor_id, state, holder in rows}


def start_load(bot_id: int, mode: str) -> None:
    """The bot in `mode`, without the previous load's conversations."""
    from bots.models import Bot
    from chat.models import Conversation

    Conversation.objects.filter(bot_id=bot_id).delete()
    Bot.objects.filter(pk=bot_id).update(assignment=mode)


def on_hand_ids(bot_id: int) -> set[int]:
    from bots.models import Bot
    from chat import presence

    return set(presence.on_hand(Bot.objects.get(pk=bot_id)).values_list("pk", flat=True))


async def run_load(base: str, public_key: str, bot_id: int, operators: list[Operator], pattern: str, mode: str,
                   label: str, args: argparse.Namespace, pid: int, count: int) -> Load:
    await asyncio.to_thread(start_load, bot_id, mode)
    visitor_ids = [f"v_assign_{label}_{n}" for n in range(count)]
    opened = await asyncio.gather(*(open_visitor(base, public_key, visitor_id) for visitor_id in visitor_ids))
    if any(conversation_id is not None for _socket, conversation_id in opened):
        raise RuntimeError("a new visitor's hello resumed a conversation")
    visitors = [socket for socket, _none in opened]
    await asyncio.sleep(SETTLE)  # whatever the sockets' opening (and the last load's closing) left to do
    load = Load(pattern, mode)
    times = arrival_times(pattern, count, args.rate, args.on_hand)
    cpu, started = cpu_seconds(pid), time.perf_counter()
    arrivals = enumerate(zip(visitors, visitor_ids, times, strict=True))
    await asyncio.gather(*(visitor_arrives(visitor, visitor_id, n, at, started, load, operators)
                           for n, (visitor, visitor_id, at) in arrivals))
    load.wall = time.perf_counter() - started
    load.cpu = (cpu_seconds(pid) - cpu) / load.wall
    errors = [e for s in visitors for e in s.errors]
    await asyncio.gather(*(s.close() for s in visitors), return_exceptions=True)
    if errors:
        raise RuntimeError(f"{len(errors)} error frames, the first: {errors[0]}")
    for o in operators:
        load.doubled += sum(o.socket.seen[("visitor", v, "operator")] > 1 for v in visitor_ids)
    rows = await asyncio.to_thread(conversations_of, bot_id)
    load.conversations = len(rows)
    if mode == IN_TURN:
        load.db_mismatch = sum(state != "operator" or holder is None for state, holder in rows.values())
        in_db = Counter(holder for _state, holder in rows.values() if holder is not None)
        load.db_mismatch += sum(abs(in_db[o.user_id] - load.given[o.user_id]) for o in operators)
    else:
        load.db_mismatch = sum(state != "waiting_operator" or holder is not None for state, holder in rows.values())
    return load


async def measure(port: int, public_key: str, bot_id: int, members: list[tuple[int, str, bool]],
                  args: argparse.Namespace, pid: int) -> list[Load]:
    base, origin = f"ws://127.0.0.1:{port}", f"http://127.0.0.1:{port}"
    operators = []
    for user_id, cookie, away in members:
        socket = await open_operator(base, origin, cookie)
        pong = socket.expect("pong")
        await socket.send(type="ping")  # frames of one socket are handled in order: hello's presence is written
        await wait(pong)
        operators.append(Operator(user_id, socket, away))
    for o in operators:
        if o.away:
            said = o.socket.expect("presence")
            await o.socket.send(type="presence", away=True)
            _, frame = await wait(said)
            if frame.get("away") is not True:
                raise RuntimeError(f"away not confirmed: {frame}")
    on_hand = await asyncio.to_thread(on_hand_ids, bot_id)
    if on_hand != {o.user_id for o in operators if not o.away}:
        raise RuntimeError(f"on hand {sorted(on_hand)}, expected the {args.on_hand} who did not say away")
    for mode in (FIRST, IN_TURN):  # a warm-up in each mode, not counted: the process's first frames pay for imports
        await run_load(base, public_key, bot_id, operators, "burst", mode, f"{port}_warm_{mode}", args, pid,
                       2 * args.on_hand)
    loads = []
    for r in range(args.rounds):
        for pattern in args.patterns:
            modes = [FIRST, IN_TURN] if r % 2 == 0 else [IN_TURN, FIRST]
            for mode in modes:
                print(f"  round {r + 1}: {pattern}, {mode}", file=sys.stderr, flush=True)
                loads.append(await run_load(base, public_key, bot_id, operators, pattern, mode,
                                            f"{port}_{r}_{pattern}_{mode}", args, pid, args.arrivals))
    errors = [e for o in operators for e in o.socket.errors]
    await asyncio.gather(*(o.socket.close() for o in operators), return_exceptions=True)
    if errors:
        raise RuntimeError(f"{len(errors)} error frames at the operators, the first: {errors[0]}")
    return loads


def set_up(args: argparse.Namespace) -> tuple[Any, list[tuple[int, str, bool]]]:
    from bots.models import Bot

    bot = common.bench_bot(SLUG, fresh=True)
    bot.allowed_origins = [ORIGIN]
    bot.handoff_enabled = True
    bot.assignment = Bot.Assignment.FIRST
    bot.operator_open_limit = args.limit
    bot.save()
    common.drop_users(USERS)
    members = []
    for n in range(args.on_hand + args.away):
        away = n >= args.on_hand
        user, cookie = common.bench_member(bot, f"{USERS}{n}@bench.example", "operator",
                                           first_name=f"{'Отошедший' if away else 'Оператор'} {n}")
        members.append((int(user.pk), cookie, away))
    return bot, members


def merged(loads: list[Load], pattern: str, mode: str) -> Load:
    """The rounds of one (pattern, mode) pooled."""
    total = Load(pattern, mode)
    for load in (x for x in loads if x.pattern == pattern and x.mode == mode):
        for path, values in load.paths.items():
            total.paths.setdefault(path, []).extend(values)
        total.lost += load.lost
        total.given += load.given
        total.to_away += load.to_away
        total.disagreeing += load.disagreeing
        total.doubled += load.doubled
        total.db_mismatch += load.db_mismatch
        total.conversations += load.conversations
        total.wall += load.wall
        total.cpu += load.cpu * load.wall
    total.cpu = total.cpu / total.wall if total.wall else 0.0
    return total


def report(loads: list[Load], members: list[tuple[int, str, bool]], args: argparse.Namespace,
           load_before: tuple[float, ...], load_after: tuple[float, ...], tracebacks: int) -> None:
    from knowledge.evaluation import percentile

    even = args.arrivals / args.on_hand
    print(f"# Assignment in turn — {common.machine()}; one uvicorn process, {args.on_hand} operators on hand "
          f"+ {args.away} away, {args.arrivals} arrivals per load, {args.rounds} round(s), "
          f"operator_open_limit {args.limit}")
    print(f"# arrivals: {', '.join(args.patterns)} at {args.rate:g}/s on average "
          f"(burst: {args.on_hand} at once every {args.on_hand / args.rate:g} s)")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
          f"tracebacks in the server log: {tracebacks}")
    print(f"# server code: {'this checkout' if args.code == common.REPO else args.code}\n")
    rows: list[list[Any]] = []
    checks: list[list[Any]] = []
    for pattern in args.patterns:
        baseline = merged(loads, pattern, FIRST)
        base95 = percentile(baseline.paths.get("op_waiting", []), 95)
        for mode in (FIRST, IN_TURN):
            load = merged(loads, pattern, mode)
            name = "in turn" if mode == IN_TURN else "first (baseline)"
            label = f"{pattern}, {name}: server CPU {load.cpu:.2f}"
            for path, title in PATHS.items():
                if path not in load.paths and not load.lost[path]:
                    continue
                values = load.paths.get(path, [])
                p95 = percentile(values, 95)
                target = ("yes" if p95 <= TARGET_MS and not load.lost[path] else "no") if path == "op_assigned" else ""
                rows.append([label, title, len(values), load.lost[path], percentile(values, 50), p95,
                             max(values, default=0.0), p95 / base95 if base95 else "", target])
            if mode == IN_TURN:
                on_hand = [user_id for user_id, _cookie, away in members if not away]
                # Evenness load by load: the fewest and the most one operator got in any one load.
                each = [[x.given[user_id] for user_id in on_hand]
                        for x in loads if x.pattern == pattern and x.mode == mode]
                least, most = min(min(counts) for counts in each), max(max(counts) for counts in each)
                within = even - 1 <= least and most <= even + 1
                ok = (within and not load.to_away and not load.disagreeing and not load.doubled
                      and not load.db_mismatch and not sum(load.lost.values())
                      and load.conversations == args.arrivals * args.rounds)
                checks.append([pattern, load.conversations, sum(load.given.values()), least, most,
                               f"{even:g} ± 1", load.to_away, sum(load.lost.values()), load.doubled,
                               load.disagreeing, load.db_mismatch, "yes" if ok else "no"])
    print(common.table(["load", "path", "samples", "lost", "p50 ms", "p95 ms", "max ms", "p95 vs baseline",
                        f"p95 ≤ {TARGET_MS:.0f} ms"], rows))
    print()
    print(common.table(["pattern (in turn)", "conversations", "given", "fewest in a load", "most in a load",
                        "even", "to away", "lost frames", "doubled", "holders disagree", "database differs",
                        "all checks"], checks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--on-hand", type=int, default=20)
    parser.add_argument("--away", type=int, default=3)
    parser.add_argument("--arrivals", type=int, default=200)
    parser.add_argument("--rate", type=float, default=10.0, help="arrivals per second on average")
    parser.add_argument("--patterns", nargs="+", choices=["poisson", "burst"], default=["poisson", "burst"])
    parser.add_argument("--rounds", type=int, default=2, help="loads per (pattern, mode); the order flips each round")
    parser.add_argument("--limit", type=int, default=20, help="the bot's operator_open_limit")
    parser.add_argument("--quick", action="store_true", help="6 on hand, 2 away, 60 arrivals, Poisson only")
    parser.add_argument("--code", type=Path, default=common.REPO,
                        help="run the server from this checkout (compare a change under the same conditions)")
    args = parser.parse_args()
    if args.quick:
        args.on_hand, args.away, args.arrivals, args.patterns = 6, 2, 60, ["poisson"]
    load_before = os.getloadavg()
    common.setup_django()
    from assistant.asgi import uvicorn_flags

    bot, members = set_up(args)
    server = Server("production", uvicorn_flags(), [])
    try:
        port = free_port()
        start_server(server, port, args.code)
        try:
            assert server.process is not None
            loads = asyncio.run(measure(port, bot.public_key, bot.pk, members, args, server.process.pid))
        finally:
            stop_server(server)
        tracebacks = server.new_errors()
    finally:
        common.drop_bot(SLUG)
        common.drop_users(USERS)
    report(loads, members, args, load_before, os.getloadavg(), tracebacks)


if __name__ == "__main__":
    main()
