"""Review queue speed: the queue page and one decision with 100 and 10,000 items in the queue.

    python bench/review_speed.py [--items 100 10000] [--rounds 60]

Requests go through Django's whole stack in process (middleware, session, admin permission checks,
the real PostgreSQL of the bench database), without a network hop. Baseline in the same run: the
admin index page for the same logged-in owner (the admin's own fixed cost). Decisions: «Всё верно»
(label only), «Исправить» (a correction entry with its vector computed in the request, a culprit
flagged) and the undo of a correction. The queue's rows are loaded in bulk; every row is a real
bot answer of a real conversation, as the chat stores them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-review-speed"
REASONS = (["low_confidence"], ["friction"], ["escalation", "low_confidence"], ["friction", "low_confidence"])


def load_queue(bot: Any, n: int) -> list[int]:
    """n flagged answers (visitor question + bot answer in a conversation each) and their items."""
    from django.utils import timezone

    from chat.models import Conversation, Message
    from knowledge.drafts import EntryDraft
    from knowledge.services import entry_upsert
    from review.models import ReviewItem

    entries = [
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key=f"e{i}", title=f"Страница {i}", text=f"Текст {i}.",
                                                              url=f"https://shop.example/p{i}/"))[0]
        for i in range(3)
    ]
    ids = [e.pk for e in entries]
    now = timezone.now()
    conversations = Conversation.objects.bulk_create(
        [Conversation(bot=bot, visitor_id=f"bench-{i}", state="closed") for i in range(n)], batch_size=2000
    )
    questions = Message.objects.bulk_create(
        [Message(conversation=c, bot=bot, role="visitor", text=f"Вопрос посетителя номер {i}?")
         for i, c in enumerate(conversations)], batch_size=2000,
    )
    answers = Message.objects.bulk_create(
        [Message(conversation=q.conversation, bot=bot, role="bot", text=f"Ответ бота на вопрос {i}.", reply_to=q,
                 sources=ids, source_entry_id=ids[0], confidence=0.5, flags={"low_confidence": True})
         for i, q in enumerate(questions)], batch_size=2000,
    )
    ReviewItem.objects.bulk_create(
        [ReviewItem(bot=bot, message=a, reasons=REASONS[i % 4], question=f"Вопрос посетителя номер {i}?",
                    answer=a.text, confidence=0.5, cited_entry_id=ids[0], source_ids=ids,
                    answered_at=now - common_timedelta(n - i)) for i, a in enumerate(answers)],
        batch_size=2000,
    )
    from django.db import connection

    with connection.cursor() as cursor:  # what autovacuum does soon after a bulk load
        cursor.execute("ANALYZE review_reviewitem; ANALYZE chat_message; ANALYZE chat_conversation")
    return ids


def common_timedelta(seconds: int) -> Any:
    from datetime import timedelta

    return timedelta(seconds=seconds)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def timed_request(call: Any) -> tuple[float, int, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = call()
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed, len(queries), response


def run(n: int, rounds: int) -> list[list[Any]]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from bench.learning_curve import drop
    from bots.models import Membership
    from review.models import ReviewItem

    drop(SLUG)
    bot = common.bench_bot(SLUG)
    user, _created = get_user_model().objects.get_or_create(username="bench-review-owner",
                                                            defaults={"is_staff": True})
    Membership.objects.get_or_create(bot=bot, user=user, defaults={"role": Membership.Role.OWNER})
    with common.timed(f"{n} items loaded"):
        load_queue(bot, n)
    client = Client()
    client.force_login(user)
    queue_url = reverse("admin:review_reviewitem_changelist")
    client.get(queue_url)  # warm: templates, the embedding model for the «Исправить» rounds
    rows = []

    def measure(label: str, calls: list[Any]) -> None:
        samples, query_counts = [], []
        for call in calls:
            elapsed, queries, response = timed_request(call)
            assert response.status_code == 200, (label, response.status_code, response.content[:300])
            samples.append(elapsed)
            query_counts.append(queries)
        p50, p95 = percentiles(samples)
        rows.append([n, label, len(samples), p50, p95, max(query_counts)])

    measure("baseline: admin index", [lambda: client.get(reverse("admin:index"))] * rounds)
    measure("queue page", [lambda: client.get(queue_url)] * rounds)

    def decide(decision: str, text: str = "") -> Any:
        first, second = ReviewItem.objects.filter(bot=bot, status="pending").order_by("answered_at", "id")[:2]
        return lambda: client.post(reverse("admin:review_reviewitem_decide", args=[first.pk]),
                                   {"decision": decision, "text": text, "after": second.pk})

    def lazily(make: Any) -> Any:
        return lambda: make()()

    measure("decision «Всё верно»", [lazily(lambda: decide("correct"))] * rounds)
    fix_rounds = max(10, rounds // 3)
    measure("decision «Исправить» (entry + vector)",
            [lazily(lambda: decide("fixed", "Правильный ответ: доставка 350 ₽, на следующий день."))] * fix_rounds)
    fixed = list(ReviewItem.objects.filter(bot=bot, decision="fixed").values_list("pk", flat=True))
    measure("undo of a correction", [
        (lambda pk=pk: client.post(reverse("admin:review_reviewitem_undo", args=[pk]))) for pk in fixed
    ])
    drop(SLUG)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", nargs="+", type=int, default=[100, 10_000])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    common.setup_django()
    rows = []
    for n in args.items:
        rows += run(n, args.rounds)
    print(f"# Review queue speed — {common.machine()}\n")
    print(common.table(["items in queue", "request", "n", "p50 ms", "p95 ms", "queries"], rows))


if __name__ == "__main__":
    main()
