"""Route overhead of the review-reply route: everything but the model calls, per review.

    python bench/route_overhead.py [--reviews 40] [--rounds 3]

Each review runs the whole route in process (`review_reply_run`: the declaration check, knowledge
search with the query embedding, prompt, filters, judge request, journal and usage rows, approval
point) against the fake Messages API on a local port (the real anthropic SDK, no scripted delay).
Three scenarios: the judge passes the first draft (2 model calls); it rejects the first and
passes the repaired one (4 calls, an approach change); the judge is down (1 draft call + the judge's
failed attempts, no backoff wait).

Baseline in the same run: the same number of the same fake model calls alone, through the same
SDK client with the same prompts' sizes, without the route. Overhead = route time − baseline; also
shown: route time − the calls' own latency as the provider measured it inside the route.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-route-overhead"
TARGET_MS = 50.0
KNOWLEDGE = [
    ("Доставка", "Доставка по Москве — на следующий день, стоимость 300 ₽. От 5000 ₽ бесплатно."),
    ("Возврат", "Вернуть товар можно в течение 14 дней, если сохранены упаковка и чек."),
    ("Оплата", "Оплатить можно картой на сайте, через СБП или наличными курьеру."),
    ("Упаковка", "Каждый заказ упаковываем в плотную коробку; помятую коробку заменим при получении."),
    ("Размеры", "Таблица размеров есть на странице каждого товара; обмен размера бесплатный."),
]
TEXTS = [
    "Кроссовки хорошие, но коробка была помята. Надеюсь, в следующий раз упакуют лучше.",
    "Платье пришло на следующий день, сидит отлично, спасибо!",
    "Курьер опоздал на два часа и не позвонил заранее.",
    "Вернула куртку без вопросов, деньги пришли быстро.",
]
GOOD = "Здравствуйте! Спасибо за отзыв. Нам жаль, что коробка пришла помятой: передали складу, упакуем бережнее."


def setup(n: int) -> tuple[Any, list[Any]]:
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert
    from routes.reviews import ReviewDraft, reviews_import

    bot = common.bench_bot(SLUG, fresh=True)
    for number, (title, text) in enumerate(KNOWLEDGE):
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key=f"k{number}", title=title, text=text,
                                                              url=f"https://shop.example/{number}", kind=Entry.Kind.QA))
    embed_pending(bot_id=bot.pk)
    drafts = [ReviewDraft(f"Покупатель {i}", 4 + i % 2, f"{TEXTS[i % len(TEXTS)]} (заказ {i})", "Кроссовки",
                          datetime.date(2026, 11, 20), "Яндекс Карты") for i in range(n)]
    return bot, reviews_import(bot=bot, drafts=drafts).created


def baseline_calls(fake: Any, calls: list[tuple[str, dict[str, Any]]]) -> float:
    """The same fake calls alone (ms): the SDK client the provider uses, same tools, similar prompts."""
    import anthropic
    from django.conf import settings

    from llm.anthropic_provider import _sdk_client

    client = _sdk_client(settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL)
    started = time.perf_counter()
    for tool, reply in calls:
        fake.script_tool(tool, reply)
        try:
            client.messages.create(
                model=settings.LLM_FAST_MODEL, max_tokens=700, system="Правила ответа на отзыв. " * 40,
                messages=[{"role": "user", "content": "Источники и отзыв. " * 60}],
                tools=[{"name": tool, "input_schema": {"type": "object"}}], tool_choice={"type": "tool", "name": tool},
            )
        except anthropic.APIStatusError:
            pass  # the judge that is down: its failed attempts are model time too
    return (time.perf_counter() - started) * 1000


def scenario(fake: Any, name: str) -> tuple[list[tuple[str, Any]], bool]:
    from tests.fakes.messages_api import tool_use, verdict

    if name == "pass":
        return [("review_reply", tool_use({"reply": GOOD})), ("verdict", verdict(0.93))], False
    if name == "repair":
        return [("review_reply", tool_use({"reply": "Спасибо за обращение."})), ("verdict", verdict(0.3, "мимо")),
                ("review_reply", tool_use({"reply": GOOD})), ("verdict", verdict(0.93))], False
    return [("review_reply", tool_use({"reply": GOOD}))], True


def run(reviews: list[Any], fake: Any, name: str, *, one_commit: bool = False) -> list[list[Any]]:
    from contextlib import nullcontext

    from django.conf import settings
    from django.db import transaction

    from llm.models import Usage
    from routes.review_reply import review_reply_run
    from tests.fakes.messages_api import error

    route_ms, inside_ms, base_ms, calls_per = [], [], [], 0
    for review in reviews:
        calls, judge_down = scenario(fake, name)
        for tool, reply in calls:
            fake.script_tool(tool, reply)
        if judge_down:
            fake.tool_down("verdict")
        started = time.perf_counter()
        with transaction.atomic() if one_commit else nullcontext():
            run_row = review_reply_run(review=review)
        route_ms.append((time.perf_counter() - started) * 1000)
        fake.tool_up("verdict")
        lines = list(Usage.objects.filter(run_id=run_row.pk).values_list("latency_ms", flat=True))
        inside_ms.append(float(sum(lines)))
        calls_per = len(lines)
        attempts = settings.LLM_MAX_RETRIES + 1
        base = [*calls, *([("verdict", error(529))] * attempts if judge_down else [])]
        base_ms.append(baseline_calls(fake, base))
    overhead = [r - b for r, b in zip(route_ms, base_ms, strict=True)]
    overhead_inside = [r - i for r, i in zip(route_ms, inside_ms, strict=True)]
    p50, p95 = percentiles(overhead)
    label = f"{name} (one commit)" if one_commit else name
    return [[label, len(reviews), calls_per, statistics.median(route_ms), statistics.median(base_ms), p50, p95,
             statistics.median(overhead_inside),
             f"{'yes' if p50 <= TARGET_MS else 'no'} / {'yes' if p95 <= TARGET_MS else 'no'}"]]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=40, help="reviews per scenario")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the scenarios")
    parser.add_argument("--one-commit", action="store_true",
                        help="also each run inside one transaction: how much of the overhead is commits")
    args = parser.parse_args()
    common.setup_django()
    from django.conf import settings

    from tests.fakes import FAKE_ANTHROPIC_KEY
    from tests.fakes.messages_api import FakeLLMServer

    fake = FakeLLMServer().start()
    settings.LLM_PROVIDER, settings.ANTHROPIC_BASE_URL = "anthropic", fake.url
    settings.ANTHROPIC_API_KEY = FAKE_ANTHROPIC_KEY
    settings.LLM_FAST_MODEL, settings.LLM_STRONG_MODEL = "claude-haiku-4-5", "claude-sonnet-4-6"
    settings.LLM_MAX_RETRIES, settings.LLM_RETRY_BACKOFF, settings.LLM_RETRY_MAX_WAIT = 2, 0.0, 0.0
    names = ["pass", "repair", "judge_down"]
    _bot, reviews = setup(args.reviews * len(names) * args.rounds * (2 if args.one_commit else 1) + 1)
    from routes.review_reply import review_reply_run
    from tests.fakes.messages_api import tool_use, verdict

    fake.script_tool("review_reply", tool_use({"reply": GOOD}))  # warm-up: embedding model, connections
    fake.script_tool("verdict", verdict(0.9))
    review_reply_run(review=reviews.pop())
    rows: list[list[Any]] = []
    for _round in range(args.rounds):
        for name in names:
            batch, reviews = reviews[:args.reviews], reviews[args.reviews:]
            rows += run(batch, fake, name)
            if args.one_commit:
                batch, reviews = reviews[:args.reviews], reviews[args.reviews:]
                rows += run(batch, fake, name, one_commit=True)
    fake.stop()
    print(f"Route overhead, review_reply ({common.machine()}); target: overhead ≤ {TARGET_MS:.0f} ms per review")
    headers = ["scenario", "reviews", "model calls", "route p50 ms", "baseline: calls alone p50 ms",
               "overhead p50 ms", "overhead p95 ms", "route − in-route call latency p50 ms", "p50 / p95 ≤ 50 ms"]
    print(common.table(headers, rows))
    common.drop_bot(SLUG)


if __name__ == "__main__":
    main()
