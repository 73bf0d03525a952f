"""The chain's budget check (llm/budget.py) at 10k and 100k billing lines this month.

    python bench/budget_check.py [--rows 10000 100000] [--rounds 300]

What the chain pays per model question to know whether the month's budget is spent. Baseline in
the same run: summing the month's `Usage` rows on every check (the indexed aggregate the cache
replaces). Also: a bot without a budget (one cache read), and the extra cost a billing line pays
to move the cached total (usage_record with and without it is not separable, so `spent_add` alone).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-budget"


def timed(fn: Callable[[], object], rounds: int) -> tuple[float, float]:
    fn()  # warm
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def load(bot: Any, rows: int) -> None:
    """`rows` billing lines spread over this month so far."""
    from django.utils import timezone

    from llm import budget
    from llm.models import Usage

    Usage.objects.filter(bot=bot).delete()
    start, now = budget.month_start(), timezone.now()
    Usage.objects.bulk_create([
        Usage(bot=bot, route="chat", purpose="answer", provider="anthropic", model="claude-haiku-4-5",
              input_tokens=1200, output_tokens=150, cost_usd=Decimal("0.001950"),
              created_at=start + (now - start) * (i / rows))
        for i in range(rows)
    ], batch_size=5000)


def measure(bot: Any, free: Any, rows: int, rounds: int) -> list[tuple[str, tuple[float, float]]]:
    from django.core.cache import cache
    from django.db.models import Sum

    from bots.models import Bot
    from llm import budget
    from llm.models import Usage

    load(bot, rows)
    budget.budget_set(bot=bot, limit=Decimal("1000000"))
    stale = Bot.objects.get(pk=bot.pk)

    def naive() -> bool:
        total = Usage.objects.filter(bot_id=stale.pk, created_at__gte=budget.month_start()).aggregate(
            total=Sum("cost_usd"))["total"] or Decimal(0)
        return total >= Decimal("1000000")

    def cold() -> bool:
        cache.delete(budget._spent_key(stale.pk, budget.month_label()))
        return budget.over_budget(stale)

    def line() -> None:
        budget.spent_add(bot_id=stale.pk, cost=Decimal("0.000001"), at=budget.month_start())

    return [
        ("baseline: sum the month's rows per check", timed(naive, rounds)),
        ("over_budget, total cached (the chain's check)", timed(lambda: budget.over_budget(stale), rounds)),
        ("over_budget, total not cached (once an hour)", timed(cold, max(20, rounds // 10))),
        ("over_budget, bot without a budget", timed(lambda: budget.over_budget(free), rounds)),
        ("spent_add (per billing line)", timed(line, rounds)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    common.setup_django()
    bot = common.bench_bot(SLUG, fresh=True)
    free = common.bench_bot(SLUG + "-free", fresh=True)
    print(common.machine())
    print(f"{'lines':>8} | {'check':<46} | {'p50 ms':>8} | {'p95 ms':>8}")
    print("-" * 80)
    for rows in args.rows:
        results = measure(bot, free, rows, args.rounds)
        for name, (p50, p95) in results:
            print(f"{rows:>8} | {name:<46} | {p50:>8.3f} | {p95:>8.3f}")
        ratio = results[0][1][0] / results[1][1][0]
        print(f"{rows:>8} | {'ratio baseline / cached check (p50)':<46} | {ratio:>8.1f} |")
    common.drop_bot(SLUG)
    common.drop_bot(SLUG + "-free")


if __name__ == "__main__":
    main()
