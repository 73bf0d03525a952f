"""The owner dashboard's pages with a big bot, beside the same pages of an empty bot (same run).

    python bench/dashboard_pages.py [--entries 100000] [--conversations 50000] [--requests 60]
                                    [--conn-max-age N] [--keep]

Set-up on the bench database, bulk-inserted (bulk_create in batches, dates spread with one UPDATE
each): the bot `bench-dash` gets `--entries` entries (98 % page chunks, 2 % Q/A pairs, 3 site
sources with 40 crawl runs), `--conversations` conversations over the last 120 days, each a visitor
question and a bot answer (5 % rated thumbs-down), an outcome per conversation (answered 70 %,
handed off 15 %, abandoned 10 %, lead 5 %), a lead per 20 conversations, review items for 10 % of
the answers (a fifth pending, the rest decided over the weeks) and 300 gaps with 10,000 questions.
The empty bot `bench-dash-empty` has nothing. One owner owns both and is signed in.

Each page is requested `--requests` times (after 3 warm-ups) through the whole Django stack
in-process (Django's test client: middleware, session, auth, view, selectors, templates), the
big bot and the empty bot in turns, so drift on the shared machine falls on both alike:
`/b/<slug>/` (overview, 30 days), `/b/<slug>/?days=90`, `/b/<slug>/setup/`, `/b/<slug>/knowledge/`,
and `/` (the list of the owner's two bots; one page, so no baseline pair). Queries per page are
counted. The target: every page p95 ≤ 200 ms with the big bot.

Without `--keep` the bench bots and the owner are deleted at the end (entries in one statement).
`--conn-max-age N` sets DB_CONN_MAX_AGE (the settings' 0 opens a new connection per request).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG, EMPTY_SLUG = "bench-dash", "bench-dash-empty"
OWNER = "bench-dash-owner@shop.example"
TARGET_MS = 200.0
BATCH = 5000
DAYS = 120


def _batched(model: Any, rows: list[Any]) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(rows), BATCH):
        out += model.objects.bulk_create(rows[start:start + BATCH], batch_size=BATCH)
    return out


def _spread(table: str, column: str, bot_id: int) -> None:
    """Dates over the last DAYS days, by id (auto_now_add wrote now() into every row)."""
    from django.db import connection
    from psycopg import sql

    with connection.cursor() as cursor:
        statement = sql.SQL(
            "UPDATE {} SET {} = now() - (id %% %s) * interval '1 day' - (id %% 997) * interval '1 minute' "
            "WHERE bot_id = %s"
        ).format(sql.Identifier(table), sql.Identifier(column))
        cursor.execute(statement, [DAYS, bot_id])


def fill(bot: Any, *, entries: int, conversations: int) -> None:
    from django.utils import timezone

    from chat.models import Conversation, Lead, Message
    from feedback.models import Gap, GapQuestion, Outcome
    from knowledge.models import CrawlRun, Entry, Source
    from review.models import ReviewItem

    rng = random.Random(12)
    now = timezone.now()
    with common.timed(f"{entries} entries"):
        sources = [Source.objects.create(bot=bot, kind="site", url=f"https://shop{n}.example/", title=f"Сайт {n}")
                   for n in range(3)]
        qa_source = Source.objects.create(bot=bot, kind="manual", title="Вопросы и ответы")
        for n in range(40):
            CrawlRun.objects.create(bot=bot, source=sources[n % 3], status="done", pages_total=500, pages_done=500,
                                    fetched=480, unchanged=20, entries_created=3000, finished_at=now)
        qa_every = 50
        _batched(Entry, [
            Entry(bot=bot, source=qa_source if i % qa_every == 0 else sources[i % 3],
                  kind="qa" if i % qa_every == 0 else "chunk", key=f"k{i}",
                  title=f"Вопрос покупателя номер {i}?" if i % qa_every == 0 else f"Страница {i // 8}",
                  text=f"Доставка по Москве за 1 день, по России за 3–7 дней. Оплата картой или по счёту. {i}",
                  url="" if i % qa_every == 0 else f"https://shop{i % 3}.example/p/{i // 8}/",
                  weight=0.8 if i % qa_every == 0 else 0.5)
            for i in range(entries)])
    with common.timed(f"{conversations} conversations, {2 * conversations} messages"):
        convs = _batched(Conversation, [Conversation(bot=bot, visitor_id=f"v{i}", state="closed")
                                        for i in range(conversations)])
        questions = _batched(Message, [Message(conversation=c, bot=bot, role="visitor", text="Сколько стоит доставка?")
                                       for c in convs])
        answers = _batched(Message, [
            Message(conversation=c, bot=bot, role="bot", text="Доставка по Москве — 300 ₽.", reply_to=q,
                    rating=-1 if rng.random() < 0.05 else (1 if rng.random() < 0.2 else 0))
            for c, q in zip(convs, questions, strict=True)])
        _spread("chat_conversation", "created_at", bot.pk)
        _spread("chat_message", "created_at", bot.pk)
    with common.timed("outcomes, leads, review items, gaps"):
        started = dict(Conversation.objects.filter(bot=bot).values_list("pk", "created_at"))
        kinds = ["answered"] * 70 + ["handed_off"] * 15 + ["abandoned"] * 10 + ["lead"] * 5
        _batched(Outcome, [Outcome(bot=bot, conversation=c, kind=rng.choice(kinds), started_at=started[c.pk])
                           for c in convs])
        _batched(Lead, [Lead(bot=bot, conversation=c, visitor_id=c.visitor_id, name="Анна", phone="+79990000000",
                             consent_text="Согласен", consent_policy_url="https://shop.example/privacy/",
                             consented_at=now) for c in convs[::20]])
        _spread("chat_lead", "created_at", bot.pk)
        items = []
        for n, answer in enumerate(answers[::10]):
            pending = n % 5 == 0
            items.append(ReviewItem(
                bot=bot, message=answer, reasons=["low_confidence"], question="Сколько стоит доставка?",
                answer=answer.text, answered_at=started[answer.conversation_id],
                status="pending" if pending else "decided",
                decision="" if pending else ("correct" if rng.random() < 0.8 else "fixed"),
                decided_at=None if pending else started[answer.conversation_id] + timedelta(hours=3)))
        _batched(ReviewItem, items)
        gaps = _batched(Gap, [Gap(bot=bot, title=f"Тема без ответа {n}", count=rng.randint(1, 60), first_seen=now,
                                  last_seen=now) for n in range(300)])
        _batched(GapQuestion, [
            GapQuestion(bot=bot, gap=gaps[n % 300], message=q, text=q.text, reason="no_answer",
                        asked_at=started[q.conversation_id])
            for n, q in enumerate(questions[:10000])])
    with common.timed("VACUUM ANALYZE"):
        from django.db import connection

        with connection.cursor() as cursor:
            for table in ("knowledge_entry", "chat_conversation", "chat_message", "chat_lead", "feedback_outcome",
                          "review_reviewitem", "feedback_gap", "feedback_gapquestion", "knowledge_crawlrun"):
                cursor.execute(f"VACUUM ANALYZE {table}")


def measure(client: Any, path: str, requests: int, cpu: list[float] | None = None) -> tuple[list[float], int]:
    """Wall times (ms) of `requests` GETs of `path`, and the queries one of them makes; `cpu`
    collects this process's CPU time per request (Django, the view, the template; the database's
    own work runs in PostgreSQL's process), which other work on a shared machine disturbs less."""
    from django.db import connection

    for _ in range(3):
        assert client.get(path).status_code == 200, path
    queries: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        client.get(path)
    times = []
    for _ in range(requests):
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200
    return times, len(queries)


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--conversations", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--conn-max-age", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the bench bots (a second run skips the load)")
    args = parser.parse_args()
    if args.conn_max_age is not None:
        os.environ["DB_CONN_MAX_AGE"] = str(args.conn_max_age)
    common.setup_django()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bots.models import Membership
    from knowledge.models import Entry

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    big = common.bench_bot(SLUG)
    loaded = Entry.objects.filter(bot=big).count()
    if loaded != args.entries:
        big = common.bench_bot(SLUG, fresh=True)
        fill(big, entries=args.entries, conversations=args.conversations)
    empty = common.bench_bot(EMPTY_SLUG, fresh=True)
    user, _created = get_user_model().objects.get_or_create(username=OWNER, defaults={"email": OWNER})
    for bot in (big, empty):
        Membership.objects.get_or_create(bot=bot, user=user, defaults={"role": "owner"})
    client = Client()
    client.force_login(user)
    pages = [("overview, 30 days", ""), ("overview, 90 days", "?days=90"), ("setup", "setup/"),
             ("knowledge", "knowledge/")]
    rows: list[list[object]] = []
    try:
        for label, tail in pages:
            big_times: list[float] = []
            empty_times: list[float] = []
            big_cpu: list[float] = []
            big_queries = empty_queries = 0
            for _round in range(2):  # halves in turns: big, empty, big, empty
                times, big_queries = measure(client, f"/b/{SLUG}/{tail}", args.requests // 2, big_cpu)
                big_times += times
                times, empty_queries = measure(client, f"/b/{EMPTY_SLUG}/{tail}", args.requests // 2)
                empty_times += times
            rows.append([label, f"{p(big_times, 0.5):.1f}", f"{p(big_times, 0.95):.1f}", f"{p(big_cpu, 0.5):.1f}",
                         big_queries,
                         f"{p(empty_times, 0.5):.1f}", f"{p(empty_times, 0.95):.1f}", empty_queries,
                         f"{p(big_times, 0.95) / p(empty_times, 0.95):.2f}",
                         "yes" if p(big_times, 0.95) <= TARGET_MS else "no"])
        home_cpu: list[float] = []
        home, home_queries = measure(client, "/", args.requests, home_cpu)
        rows.append(["/ (the owner's two bots)", f"{p(home, 0.5):.1f}", f"{p(home, 0.95):.1f}",
                     f"{p(home_cpu, 0.5):.1f}", home_queries,
                     "—", "—", "—", "—", "yes" if p(home, 0.95) <= TARGET_MS else "no"])
    finally:
        if not args.keep:
            common.drop_bot(SLUG)
            common.drop_bot(EMPTY_SLUG)
            get_user_model().objects.filter(username=OWNER).delete()
    from django.db import connection

    print(f"\n{common.machine()}; load {os.getloadavg()[0]:.1f}; {args.entries} entries, {args.conversations} "
          f"conversations; {args.requests} requests per page and bot; CONN_MAX_AGE "
          f"{connection.settings_dict['CONN_MAX_AGE']}\n")
    print(common.table(["page", "big p50 ms", "big p95 ms", "big CPU p50 ms", "queries", "empty p50 ms",
                        "empty p95 ms", "queries", "p95 ratio", f"p95 ≤ {TARGET_MS:.0f} ms"], rows))
    print(f"\nmedian of all big-bot p95s: {statistics.median(float(str(r[2])) for r in rows):.1f} ms; load at the end "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
