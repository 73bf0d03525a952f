"""Faults survived, measured (issue 10, item 8; docs/reliability.md): five faults, each beside a
run of the same traffic without the fault.

    .venv/bin/python bench/faults.py [--visitors 50] [--streams 10] [--only redis,postgres,...]

The processes, the faults and the widget-like visitors are the fault tests' own
(tests/faults/harness.py, scenarios.py, crawls.py): real uvicorn, Celery, Redis and PostgreSQL
processes, killed or restarted for real.

- `redis`: Redis restarted (kill -9, back empty) under `--visitors` sockets of one uvicorn; four
  rounds of questions: before, at the kill, while it is down, after its return.
- `postgres`: PostgreSQL stopped (fast) for 4 s under the same traffic, then started again.
- `asgi`: kill -9 of uvicorn while `--streams` answers stream (the fake Messages API, ~15 s a
  reply); the visitors reconnect to a new process.
- `llm`: a model that keeps the stream busy with pings and never answers; CHAT_LLM_TIMEOUT 2 s.
- `celery`: kill -9 of the Celery worker mid-crawl of a local site (24 pages, 0.25 s each), a new
  worker started at once.

Columns: sent / answered / lost / doubled are questions (asked, answered exactly once on screen
and in the database, never answered, answered twice); for `celery` they are pages (on the site,
stored whole, missing or half-written) and doubled entries. "time" is what the scenario is about:
seconds from the service's return to the last answer (chat faults, the baseline: the same last
round with nothing broken); from the kill to the last answer (asgi: a new uvicorn's start is in
it); the slowest answer (llm); from the kill to the crawl's end (celery, the baseline: the whole
crawl).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

PREFIX = "spravka-bench-faults"
CROWD_ENV = {"CHAT_RATE_IP": "100000", "CHAT_RATE_CONVERSATIONS_IP": "100000", "CHAT_MAX_SOCKETS_IP": "100000",
             "CHAT_RATE_VISITOR": "1000"}
LLM_TIMEOUT = 2.0
SCENARIOS = ["redis", "postgres", "asgi", "llm", "celery"]
ANSWER = "Доставка по Москве — на следующий день, 300 ₽."


def said() -> dict[str, Any]:
    return {"intent": "question", "source": 0, "answer": ANSWER, "product_query": "", "fixed": ""}


def shop_bot() -> Any:
    """The chat tests' shop (tests/chat/conftest.py KNOWLEDGE), embedded; no conversations left."""
    from chat.models import Conversation
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert
    from tests.chat.conftest import KNOWLEDGE, ORIGIN

    bot = common.bench_bot("bench-faults")
    bot.allowed_origins = [ORIGIN]
    bot.save(update_fields=["allowed_origins"])
    Conversation.objects.filter(bot=bot).delete()
    for key, title, text, url in KNOWLEDGE:
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url,
                                                            kind=Entry.Kind.QA))
    embed_pending(bot_id=bot.pk)
    return bot


def fleet_env() -> dict[str, str]:
    from django.conf import settings
    from django.db import connection

    from tests.faults.harness import database_url

    return os.environ | {
        "DATABASE_URL": database_url(connection.settings_dict), "REDIS_URL": settings.REDIS_URL,
        "LLM_PROVIDER": "none", "ANTHROPIC_API_KEY": "", "DEBUG": "0", "SPRAVKA_LOG_LEVEL": "INFO", **CROWD_ENV,
    }


def chat_row(label: str, run: str, outcome: Any, time_s: float | None, note: str = "") -> list[Any]:
    return [label, run, outcome.visitors, outcome.sent, outcome.answered, outcome.lost, outcome.doubled,
            outcome.errors_text, f"{time_s:.2f}" if time_s is not None else "never", note]


# --- chat traffic around Redis and PostgreSQL --------------------------------------------------------


def chat(kind: str, bot: Any, visitors: int, fault: bool) -> list[Any]:
    from tests.faults.harness import Fleet
    from tests.faults.scenarios import Fault, chat_around, groups_heard, postgres_restart, redis_restart

    database_url = fleet_env()["DATABASE_URL"]
    with Fleet(fleet_env()) as fleet:
        redis = fleet.redis()
        redis.start()
        env = {"REDIS_URL": redis.redis_url}
        chosen = Fault("no fault")
        if kind == "redis" and fault:
            chosen = redis_restart(redis)
        if kind == "postgres":
            server = fleet.postgresql()
            database_url = server.copy_database(database_url, "spravka")
            env["DATABASE_URL"] = database_url
            if fault:
                chosen = postgres_restart(server)
        app = fleet.uvicorn("asgi", env)
        app.start()
        heard: dict[str, float] = {}

        async def after(people: list[Any]) -> None:
            if kind == "redis":
                heard["groups"] = await groups_heard(redis, people)

        outcome, _people = asyncio.run(chat_around(
            chosen, url=app.url, public_key=bot.public_key, database_url=database_url, visitors=visitors,
            prefix=f"{kind}{int(fault)}-{int(time.time())}-", during=after))
        note = f"outage {outcome.outage:.1f} s" if fault else "nothing broken"
        if "groups" in heard:
            when = "again, after the return," if fault else "in"
            note += f"; operator events reach every socket {when} {heard['groups']:.1f} s"
        if fault:
            note += f"; same process: {'yes' if app.alive() and app.starts == 1 else 'NO'}"
            note += f"; tracebacks in its log: {app.tracebacks()}"
        label = {"redis": "Redis restart", "postgres": "PostgreSQL restart"}[kind]
        return chat_row(label, "fault" if fault else "baseline", outcome, outcome.recovered, note)


# --- kill -9 of uvicorn mid-stream -----------------------------------------------------------------


def asgi(bot: Any, streams: int, fault: bool) -> list[Any]:
    from tests.fakes.messages_api import FakeLLMServer, tool_use
    from tests.faults.conftest import model_env
    from tests.faults.harness import Fleet, Visitor
    from tests.faults.scenarios import ORIGIN, Outcome, question_id, stored_replies, tally

    fake = FakeLLMServer().start()
    slow = [tool_use(said(), chunk_chars=2, tokens_per_second=4) for _ in range(streams)]
    fast = [tool_use(said(), chunk_chars=8) for _ in range(streams)]
    fake.script(*(slow + fast if fault else fast))
    env = model_env(fake.url)
    outcome = Outcome("asgi", visitors=streams)
    try:
        with Fleet(fleet_env()) as fleet:
            first, second = fleet.uvicorn("asgi-1", env), fleet.uvicorn("asgi-2", env)
            first.start()
            boot: dict[str, float] = {}

            async def run() -> tuple[float | None, list[Visitor]]:
                people = [Visitor(f"{first.url}/ws/chat/{bot.public_key}/", f"asgi{int(fault)}-{time.time():.0f}-{n}",
                                  ORIGIN) for n in range(streams)]
                await asyncio.gather(*(p.connect(timeout=120) for p in people))
                asked = time.monotonic()
                for n, person in enumerate(people):
                    await person.send(question_id(n, 0), "Сколько стоит доставка по Москве?")
                if not fault:
                    await asyncio.gather(*(p.wait_frame(lambda f: is_bot(f.data), 120) for p in people))
                    took = time.monotonic() - asked
                else:
                    await asyncio.gather(*(p.wait_frame(lambda f: f.data["type"] == "delta", 120) for p in people))
                    await asyncio.to_thread(first.kill)
                    killed = time.monotonic()
                    await asyncio.gather(*(p.wait_closed() for p in people))
                    boot["seconds"] = await asyncio.to_thread(second.start)
                    await asyncio.gather(*(p.connect(f"{second.url}/ws/chat/{bot.public_key}/", 120) for p in people))
                    await asyncio.gather(*(p.wait_frame(lambda f: is_bot(f.data), 120) for p in people))
                    took = time.monotonic() - killed
                await asyncio.sleep(1.0)
                await asyncio.gather(*(p.close() for p in people))
                return took, people

            took, people = asyncio.run(run())
            tally(outcome, people, 1, stored_replies(fleet_env()["DATABASE_URL"], bot.public_key))
            note = (f"of which the new uvicorn's start {boot.get('seconds', 0):.1f} s; the dead process's claims "
                    f"lapse with its heartbeat (8 s); model requests: {len(fake.requests)}" if fault
                    else "answer streamed to the end, nothing broken")
    finally:
        fake.stop()
    return chat_row("kill -9 uvicorn mid-stream", "fault" if fault else "baseline", outcome, took, note)


def is_bot(data: dict[str, Any]) -> bool:
    return data["type"] == "message" and data["message"]["role"] == "bot"


# --- a model that hangs ------------------------------------------------------------------------------


def llm(bot: Any, streams: int, fault: bool) -> list[Any]:
    from tests.fakes.messages_api import FakeLLMServer, tool_use
    from tests.faults.conftest import model_env
    from tests.faults.harness import Fleet, Visitor
    from tests.faults.scenarios import ORIGIN, Outcome, question_id, stored_replies, tally

    fake = FakeLLMServer().start()
    hang = tool_use(said(), pings=300, ping_interval=0.2)
    fake.script(*[hang if fault else tool_use(said(), chunk_chars=8) for _ in range(streams + 1)])  # +1: warm-up
    outcome = Outcome("llm", visitors=streams)
    try:
        with Fleet(fleet_env()) as fleet:
            app = fleet.uvicorn("asgi", model_env(fake.url, timeout=LLM_TIMEOUT))
            app.start()

            async def run() -> tuple[list[float], list[Visitor]]:
                people = [Visitor(f"{app.url}/ws/chat/{bot.public_key}/", f"llm{int(fault)}-{time.time():.0f}-{n}",
                                  ORIGIN) for n in range(streams)]
                await asyncio.gather(*(p.connect(timeout=120) for p in people))
                await people[0].send("warm", "Как вернуть товар?")  # the first search loads the model
                await people[0].wait_frame(lambda f: is_bot(f.data), 120)

                async def one(n: int, person: Visitor) -> float:
                    asked = time.monotonic()
                    mark = len(person.frames)
                    await person.send(question_id(n, 0), "Сколько стоит доставка по Москве?")
                    await person.wait_frame(lambda f: is_bot(f.data), 60, since=mark)
                    return time.monotonic() - asked

                times = await asyncio.gather(*(one(n, p) for n, p in enumerate(people)))
                await asyncio.sleep(0.5)
                await asyncio.gather(*(p.close() for p in people))
                return list(times), people

            times, people = asyncio.run(run())
            tally(outcome, people, 1, stored_replies(fleet_env()["DATABASE_URL"], bot.public_key))
            note = (f"p50 {statistics.median(times):.2f} s; CHAT_LLM_TIMEOUT {LLM_TIMEOUT:.0f} s, "
                    f"so the target is ≤ {LLM_TIMEOUT + 1:.0f} s")
    finally:
        fake.stop()
    return chat_row("LLM hangs past its timeout", "fault" if fault else "baseline", outcome, max(times), note)


# --- kill -9 of the Celery worker mid-crawl ----------------------------------------------------------


def celery(fault: bool) -> list[Any]:
    from tests.faults.crawls import crawl_around_a_kill
    from tests.faults.harness import Fleet
    from tests.knowledge.sites import Site

    bot = common.bench_bot("bench-faults-crawl", fresh=True)
    site = Site().start()
    try:
        with Fleet(fleet_env()) as fleet:
            outcome = crawl_around_a_kill(fleet, bot=bot, site=site, kill=fault)
    finally:
        site.stop()
    end = outcome.at_end
    whole = end.pages - len(end.half_written)
    note = f"run {outcome.status}; {end.entries} entries of {outcome.expected_entries} expected"
    if outcome.at_kill is not None:
        note += (f"; at the kill {outcome.at_kill.pages} pages stored, half-written "
                 f"{len(outcome.at_kill.half_written)}; after: {outcome.unchanged} unchanged, "
                 f"{outcome.fetched} fetched")
    time_s = outcome.recovered if fault else outcome.seconds
    return ["kill -9 Celery mid-crawl", "fault" if fault else "baseline", "pages", outcome.pages, whole,
            outcome.pages - whole, end.duplicates, "—", f"{time_s:.2f}", note]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visitors", type=int, default=50, help="widget sockets for the Redis and PostgreSQL runs")
    parser.add_argument("--streams", type=int, default=10, help="visitors for the uvicorn-kill and LLM runs")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated: " + ", ".join(SCENARIOS))
    args = parser.parse_args()
    for name in ("CHANNELS_PREFIX", "CACHE_PREFIX", "CELERY_QUEUE"):
        os.environ[name] = PREFIX
    os.environ.update({"CRAWL_ALLOW_PRIVATE": "1", "CRAWL_DELAY": "0", "LLM_PROVIDER": "none"})
    common.setup_django("spravka_bench_faults")
    bot = shop_bot()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    load_before = os.getloadavg()
    started = time.monotonic()
    rows: list[list[Any]] = []
    for name in chosen:
        for fault in (False, True):
            if name in ("redis", "postgres"):
                rows.append(chat(name, bot, args.visitors, fault))
            elif name == "asgi":
                rows.append(asgi(bot, args.streams, fault))
            elif name == "llm":
                rows.append(llm(bot, args.streams, fault))
            elif name == "celery":
                rows.append(celery(fault))
            print("  " + " | ".join(str(cell) for cell in rows[-1]), flush=True)
    load_after = os.getloadavg()
    print(f"\n# Faults — {common.machine()}")
    print(f"load average before {load_before[0]:.2f} / after {load_after[0]:.2f} (1 min); "
          f"{time.monotonic() - started:.0f} s in all\n")
    print(common.table(["fault", "run", "visitors", "sent", "answered", "lost", "doubled", "errors shown",
                        "time (s)", "notes"], rows))


if __name__ == "__main__":
    main()
