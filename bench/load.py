"""Load held (issue 10, item 9; docs/reliability.md): 200 widget visitors at human pace on one
uvicorn process, retrieval only, for 10 minutes, beside a single visitor in the same run.

    .venv/bin/python bench/load.py [--visitors 200] [--minutes 10] [--pause 5 20] [--baseline 30]

The bot is the demo shop crawled into its own bench database (`spravka_bench_load`), vectors
e5-small; LLM_PROVIDER=none, so every answer is the retrieval chain's (search, facts, rules). The
questions are the demo's real Russian questions (demo/cases.jsonl, typos and all; the few that ask
for a person are left out: they end the bot's part of a conversation), drawn at random.

1. Warm-up: every question once, unmeasured (models loaded, query vectors cached for both runs).
   Baseline: one visitor asks `--baseline` questions, one at a time, a second apart, on the same
   process (answer times without anyone else asking).
2. Load: `--visitors` visitors connect over the first 20 s; each waits `--pause` s (uniform),
   asks, waits for the answer, and again, until `--minutes` are over; every visitor pings like the
   widget (every 25 s).

Answer time: from sending the `message` frame to the bot's `message` frame, on the client (a
light asyncio client: one reader task per socket, a future per question, so the 200 visitors cost
the 2 shared cores little). Errors: error frames, answers not within 30 s, sockets that closed,
and the chain's apology for a failure («что-то пошло не так»: a turn that raised).
RSS of the uvicorn process is sampled every 10 s; growth is from the sample at minute 1 to the
last. The process's CPU time is reported over the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATABASE = "spravka_bench_load"
ORIGIN = "https://shop.example"
ANSWER_TIMEOUT = 30.0
PING_SECONDS = 25.0
RSS_EVERY = 10.0
CROWD_ENV = {"CHAT_RATE_IP": "1000000", "CHAT_RATE_CONVERSATIONS_IP": "1000000", "CHAT_MAX_SOCKETS_IP": "100000",
             "CHAT_RATE_VISITOR": "1000"}


@dataclass
class Tally:
    times: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    asked: int = 0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


class Socket:
    """One widget socket: a reader task resolving the future of the question in flight."""

    apology = ""  # the chain's «something broke» answer (replies "failure"): an error, not an answer

    def __init__(self, ws: Any, tally: Tally) -> None:
        self.ws, self.tally = ws, tally
        self.waiting: asyncio.Future[dict[str, Any]] | None = None
        self.welcome: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.closed = False
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                frame = json.loads(raw)
                kind = frame.get("type")
                if kind == "welcome" and not self.welcome.done():
                    self.welcome.set_result(frame)
                elif kind == "error":
                    self.tally.error(f"error frame {frame.get('code')}")
                    if self.waiting is not None and not self.waiting.done():
                        self.waiting.set_result(frame)
                elif kind == "message" and frame["message"]["role"] == "bot":
                    if self.waiting is not None and not self.waiting.done():
                        self.waiting.set_result(frame)
        except Exception:  # noqa: S110 - counted below as a closed socket
            pass
        finally:
            self.closed = True
            for future in (self.waiting, self.welcome):
                if future is not None and not future.done():
                    future.set_exception(ConnectionError("socket closed"))

    async def ask(self, client_msg_id: str, text: str) -> float | None:
        """Seconds to the bot's answer, or None (counted as an error)."""
        self.waiting = asyncio.get_running_loop().create_future()
        started = time.monotonic()
        self.tally.asked += 1
        try:
            await self.ws.send(json.dumps({"type": "message", "client_msg_id": client_msg_id, "text": text}))
            frame = await asyncio.wait_for(self.waiting, ANSWER_TIMEOUT)
        except TimeoutError:
            self.tally.error("no answer within 30 s")
            return None
        except Exception:
            self.tally.error("socket closed")
            return None
        if frame.get("type") != "message":
            return None
        if frame["message"]["text"] == self.apology:
            self.tally.error("the chain failed (apology shown)")
            return None
        took = time.monotonic() - started
        self.tally.times.append(took)
        return took

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.gather(self.reader, return_exceptions=True)


async def open_socket(url: str, visitor_id: str, tally: Tally) -> Socket:
    from websockets.asyncio.client import connect

    ws = await connect(url, origin=ORIGIN, ping_interval=None, open_timeout=60)  # type: ignore[arg-type]
    sock = Socket(ws, tally)
    await ws.send(json.dumps({"type": "hello", "visitor_id": visitor_id}))
    await asyncio.wait_for(sock.welcome, 60)
    return sock


def questions() -> list[str]:
    from behavior.intents import classify

    rows = common.read_jsonl(common.DEMO_CASES)
    return [row["question"] for row in rows if classify(row["question"]).name != "operator"]


async def warm_up(url: str, asked: list[str], tag: str) -> None:
    """Every question once, unmeasured: the process loads its models and the query vectors are
    cached for both runs alike (a popular question repeats in a real chat too)."""
    sock = await open_socket(url, f"warm-{tag}", Tally())
    for n, text in enumerate(asked):
        await sock.ask(f"w{n}", text)
    await sock.close()


async def baseline(url: str, asked: list[str], count: int, tag: str) -> Tally:
    tally = Tally()
    sock = await open_socket(url, f"base-{tag}", tally)
    for n in range(count):
        await sock.ask(f"b{n}", asked[n % len(asked)])
        await asyncio.sleep(1.0)
    await sock.close()
    return tally


async def load(url: str, asked: list[str], visitors: int, seconds: float, pause: tuple[float, float], tag: str,
               sample: Any) -> tuple[Tally, int]:
    tally = Tally()
    rng = random.Random(7)
    deadline = time.monotonic() + seconds
    opened = 0

    async def visitor(n: int) -> None:
        nonlocal opened
        await asyncio.sleep(20.0 * n / visitors)  # arrivals spread over the first 20 s
        try:
            sock = await open_socket(url, f"load-{tag}-{n}", tally)
        except Exception:
            tally.error("could not connect")
            return
        opened += 1
        last_ping = time.monotonic()
        k = 0
        try:
            while True:
                wait = rng.uniform(*pause)
                if time.monotonic() + wait >= deadline:
                    break
                while wait > 0:  # the widget pings every 25 s while the visitor reads or types
                    step = min(wait, PING_SECONDS - (time.monotonic() - last_ping))
                    if step > 0:
                        await asyncio.sleep(step)
                        wait -= step
                    if time.monotonic() - last_ping >= PING_SECONDS:
                        await sock.ws.send('{"type": "ping"}')
                        last_ping = time.monotonic()
                if sock.closed:
                    tally.error("socket closed")
                    return
                await sock.ask(f"m{k}", rng.choice(asked))
                k += 1
        finally:
            await sock.close()

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(visitor(n) for n in range(visitors)))
    sampler.cancel()
    await asyncio.gather(sampler, return_exceptions=True)
    return tally, opened


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prepare_bot() -> Any:
    from bench.retrieval_quality import crawl_into, serve_demo
    from knowledge.models import Entry

    bot = common.bench_bot("bench-load-demo")
    if not Entry.objects.filter(bot=bot, active=True).exists():
        crawl_into(bot, serve_demo())
    common.embed_bot(bot, "e5-small")
    bot.allowed_origins = [ORIGIN]
    bot.save(update_fields=["allowed_origins"])
    return bot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visitors", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--pause", type=float, nargs=2, default=(5.0, 20.0), metavar=("MIN", "MAX"))
    parser.add_argument("--baseline", type=int, default=30, help="questions of the single visitor")
    args = parser.parse_args()
    os.environ.update({"CHANNELS_PREFIX": "spravka-bench-load", "CACHE_PREFIX": "spravka-bench-load",
                       "CELERY_QUEUE": "spravka-bench-load", "LLM_PROVIDER": "none", "CRAWL_ALLOW_PRIVATE": "1",
                       "CRAWL_DELAY": "0"})
    common.setup_django(DATABASE)
    import psutil
    from django.conf import settings
    from django.db import connection

    from answers import replies
    from chat.models import Conversation
    from tests.faults.harness import Fleet, database_url

    bot = prepare_bot()
    Socket.apology = replies.say(bot, "failure")
    Conversation.objects.filter(bot=bot).delete()
    asked = questions()
    connection.close()
    env = os.environ | {"DATABASE_URL": database_url(connection.settings_dict), "REDIS_URL": settings.REDIS_URL,
                        "LLM_PROVIDER": "none", "ANTHROPIC_API_KEY": "", "DEBUG": "0", **CROWD_ENV}
    tag = f"{int(time.time())}"
    load_before = os.getloadavg()
    with Fleet(env) as fleet:
        app = fleet.uvicorn("asgi")
        app.start()
        url = f"{app.url}/ws/chat/{bot.public_key}/"
        process = psutil.Process(app.pid)
        asyncio.run(warm_up(url, asked, tag))
        base = asyncio.run(baseline(url, asked, args.baseline, tag))
        rss: list[tuple[float, float]] = []
        started = time.monotonic()
        cpu_before = sum(process.cpu_times()[:2])

        async def sample() -> None:
            while True:
                rss.append((time.monotonic() - started, process.memory_info().rss / 2**20))
                await asyncio.sleep(RSS_EVERY)

        tally, opened = asyncio.run(load(url, asked, args.visitors, args.minutes * 60, tuple(args.pause), tag,
                                         sample))
        wall = time.monotonic() - started
        cpu = sum(process.cpu_times()[:2]) - cpu_before
        rss.append((wall, process.memory_info().rss / 2**20))
        alive = app.alive()
        tracebacks = app.tracebacks()
    load_after = os.getloadavg()

    at_minute = next((mb for at, mb in rss if at >= 60), rss[0][1])
    growth = (rss[-1][1] / at_minute - 1) * 100
    print(f"# Load — {common.machine()}")
    print(f"{len(asked)} demo questions; load average before {load_before[0]:.2f} / after {load_after[0]:.2f} "
          f"(1 min); uvicorn alive at the end: {alive}, tracebacks in its log: {tracebacks}\n")
    rows = [
        ["1 visitor (baseline)", 1, base.asked, len(base.times), base.error_count, statistics.median(base.times),
         pct(base.times, 0.95), max(base.times), "", ""],
        [f"{args.visitors} visitors, {args.minutes:g} min, pause {args.pause[0]:g}–{args.pause[1]:g} s", opened,
         tally.asked, len(tally.times), tally.error_count, statistics.median(tally.times), pct(tally.times, 0.95),
         max(tally.times), f"{len(tally.times) / wall:.1f}", f"{cpu / wall * 100:.0f}%"],
    ]
    print(common.table(["run", "visitors", "asked", "answered", "errors", "p50 (s)", "p95 (s)", "max (s)",
                        "answers/s", "server CPU"], rows))
    print(f"\np95 ratio (load / one visitor): {pct(tally.times, 0.95) / pct(base.times, 0.95):.2f}")
    if tally.errors:
        print("errors: " + ", ".join(f"{kind} × {n}" for kind, n in sorted(tally.errors.items())))
    print(f"\nRSS of the uvicorn process (MB), every {RSS_EVERY:.0f} s: "
          + ", ".join(f"{mb:.0f}" for _at, mb in rss))
    print(f"RSS at minute 1: {at_minute:.1f} MB; at the end: {rss[-1][1]:.1f} MB; growth {growth:+.1f}% "
          f"(target < 10%)")


if __name__ == "__main__":
    main()
