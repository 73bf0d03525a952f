"""The answer chain's speed: without a model at 10k and 100k entries under 20 concurrent askers,
and with a fake model at a fixed speed (our overhead over the model's time, first visible text).

    python bench/chain_speed.py [--sizes 10000 100000] [--concurrency 20] [--queries 200]
                                [--first-token 0.8] [--tps 50] [--quick]

Part 1, no model (LLM_PROVIDER=none): `pipeline.answer()` for xquad questions from N threads at
once, against bare `search_entries` (query embedding included, as the chain does it) from the
same N threads on the same bot: the chain's p95 over the search's p95 is what the chain adds.
Bench data is search_speed.py's synthetic entries (same helpers, COPY + one HNSW build).

Part 2, fake model (tests/fakes/messages_api.py, settings overridden in-process to
LLM_PROVIDER=anthropic and ANTHROPIC_BASE_URL=the fake): every answer streams a tool call after
`--first-token` s at `--tps` deltas/s. Model time is what the fake is scripted to spend
(first-token latency + (deltas - 1) / tps); overhead = total - model time. Time to first visible
text is measured at the first `on_delta` call. Run on the smallest size.

`--quick`: sizes 1000 and 10000, 60 queries. Bench bots (`bench-chain-<size>`) are deleted at the
end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

# Its own database: search_speed.py drops and rebuilds the shared HNSW index of `spravka_bench`,
# so the two must not share one while either is measuring.
DATABASE = "spravka_bench_chain"
ANSWER_TEXT = (
    "Доставка по городу занимает один-два дня, стоимость зависит от веса заказа и района; "
    "подробности и тарифы — на странице доставки по ссылке ниже."
)


def build_bot(size: int, sources: list[Any]) -> Any:
    from bench import search_speed
    from knowledge.indexing import lexicon_refresh

    bot = common.bench_bot(f"bench-chain-{size}", fresh=True)
    search_speed.drop_hnsw()
    try:
        with common.timed(f"COPY {size} rows"):
            search_speed.copy_entries(bot.pk, search_speed.synthetic_rows(sources, size, seed=size))
    finally:
        with common.timed("HNSW build"):
            search_speed.rebuild_hnsw()
    lexicon_refresh(bot_id=bot.pk)
    return bot


def concurrent_ms(call: Callable[[str], Any], questions: list[str], workers: int) -> tuple[list[float], float]:
    """Latency of each call (ms) with `workers` threads asking at once, and the wall time (s).
    Threads come from one long-lived pool, so each keeps its database connection between runs."""

    def one(question: str) -> float:
        started = time.perf_counter()
        call(question)
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    times = list(_pool(workers).map(one, questions))
    return times, time.perf_counter() - started


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(max_workers=workers)
    return _POOLS[workers]


def no_model_rows(size: int, bot: Any, questions: list[str], workers: int) -> list[list[Any]]:
    """Bare search (with and without the query embedding) and the chain, 1 and `workers` askers."""
    from django.test import override_settings

    from assistant.chat import pipeline
    from knowledge.evaluation import percentile
    from knowledge.search import search_entries

    rows: list[list[Any]] = []
    vectors = common.embed_queries(questions, "e5-small")
    with override_settings(LLM_PROVIDER="none"):
        pipeline.answer(bot=bot, text=questions[0], history=[])  # warm: model loaded, caches filled
        cases: list[tuple[str, Callable[[str], Any]]] = [
            ("search_entries, query vector given", lambda q: search_entries(
                bot, q, k=pipeline.SEARCH_K, query_vector=vectors[q], model_key="e5-small")),
            ("bare search_entries (k=5, embedding incl.)", lambda q: search_entries(bot, q, k=pipeline.SEARCH_K)),
            ("chain answer(), no model", lambda q: pipeline.answer(bot=bot, text=q, history=[])),
        ]
        for label, call in cases:
            for concurrency in (1, workers):
                times, wall = concurrent_ms(call, questions, concurrency)
                rows.append([size, label, concurrency, percentile(times, 50), percentile(times, 95),
                             len(questions) / wall])
    return rows


def model_time(first_token: float, tps: float, chunks: int) -> float:
    return first_token + max(0, chunks - 1) / tps


def fake_model_rows(bot: Any, questions: list[str], args: argparse.Namespace) -> tuple[list[list[Any]], float]:
    import json

    from django.test import override_settings

    from knowledge.evaluation import percentile
    from tests.fakes import messages_api

    tool_input = {"intent": "question", "source": 0, "answer": ANSWER_TEXT, "product_query": "", "fixed": ""}
    raw = json.dumps(tool_input, ensure_ascii=False)
    chunk_chars = 4
    chunks = -(-len(raw) // chunk_chars)
    scripted = model_time(args.first_token, args.tps, chunks)
    # The first delta that carries answer text: intent and source stream first (the schema's order).
    before_answer = raw.index(ANSWER_TEXT[:8]) // chunk_chars
    first_answer_ms = 1000 * model_time(args.first_token, args.tps, before_answer + 1)
    fake = messages_api.FakeLLMServer().start()
    rows: list[list[Any]] = []
    try:
        overrides = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": fake.url,
                     "ANTHROPIC_API_KEY": "sk-ant-bench-fake", "LLM_MAX_RETRIES": 0}
        with override_settings(**overrides):
            sourced = _with_sources(bot, questions)
            for concurrency, count in ((1, 5), (args.concurrency, args.concurrency * 2)):
                asked = sourced[:count]
                calls_before = len(fake.requests)
                fake.script(*[messages_api.tool_use(tool_input, first_token_latency=args.first_token,
                                                    tokens_per_second=args.tps, chunk_chars=chunk_chars)
                              for _ in asked])
                fake.script(*[messages_api.tool_use(tool_input) for _ in asked])  # spare: never expected
                results = list(_pool(concurrency).map(lambda q: _ask_streaming(bot, q), asked))
                totals = [r[0] for r in results]
                firsts = [r[1] for r in results]
                llms = [r[2] for r in results]
                routes = [r[3] for r in results]
                calls = len(fake.requests) - calls_before
                fake._queue.clear()
                model_ms = scripted * 1000
                overhead = [t - model_ms for t in totals]
                shown = [f for f in firsts if f == f]
                rows.append([
                    concurrency, len(asked), f"{model_ms:.0f}", statistics.median(totals), percentile(totals, 95),
                    statistics.median(overhead), percentile(overhead, 95),
                    100 * statistics.median(overhead) / model_ms, 100 * percentile(overhead, 95) / model_ms,
                    f"{first_answer_ms:.0f}",
                    statistics.median(shown) if shown else "none", percentile(shown, 95) if shown else "none",
                    statistics.median(llms), calls / len(asked), ",".join(sorted(set(routes))),
                ])
    finally:
        fake.stop()
    return rows, scripted


def _with_sources(bot: Any, questions: list[str]) -> list[str]:
    """Questions whose prompt lists at least one source: the fake always answers `source: 0`, which
    is out of range (a form repair, a second call) when the prompt has none."""
    from assistant.chat import pipeline, prompt
    from knowledge.search import search_entries

    return [q for q in questions if prompt.numbered_sources(bot, search_entries(bot, q, k=pipeline.SEARCH_K))]


def _ask_streaming(bot: Any, question: str) -> tuple[float, float, float, str]:
    """(total ms, ms to the first on_delta or NaN, the chain's own llm timing, route) of one answer."""
    from assistant.chat import pipeline

    started = time.perf_counter()
    first: list[float] = []

    def on_delta(_text: str) -> None:
        if not first:
            first.append((time.perf_counter() - started) * 1000)

    reply = pipeline.answer(bot=bot, text=question, history=[], on_delta=on_delta)
    total = (time.perf_counter() - started) * 1000
    return total, first[0] if first else float("nan"), reply.timings.get("llm", 0.0), str(reply.llm_meta.get("route"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10000, 100000])
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--first-token", type=float, default=0.8)
    parser.add_argument("--tps", type=float, default=50.0)
    parser.add_argument("--quick", action="store_true", help="sizes 1000 and 10000, 60 queries")
    parser.add_argument("--no-model-part", action="store_true", help="skip the fake-model part")
    parser.add_argument("--database", default=DATABASE, help="bench database of this script (created if missing)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.queries = [1000, 10000], 60
    common.setup_django(args.database)
    from bench import search_speed

    sources = search_speed.source_passages()
    cases = common.read_jsonl(common.XQUAD / "cases.jsonl")[:: max(1, 1190 // args.queries)][: args.queries]
    questions = [c["question"] for c in cases]
    rows: list[list[Any]] = []
    model_rows: list[list[Any]] = []
    scripted = 0.0
    for size in sorted(args.sizes):
        bot = build_bot(size, sources)
        try:
            rows += no_model_rows(size, bot, questions, args.concurrency)
            if size == min(args.sizes) and not args.no_model_part:
                model_rows, scripted = fake_model_rows(bot, questions, args)
        finally:
            common.drop_bot(bot.slug)
    print(f"# Chain speed — {common.machine()}; {len(questions)} xquad questions\n")
    print("## Without a model (LLM_PROVIDER=none); baseline: bare search at the same size and concurrency\n")
    print(common.table(["entries", "what", "askers", "p50 ms", "p95 ms", "answers/s"], rows))
    by_key = {(r[0], r[1], r[2]): r for r in rows}
    ratio_rows = []
    for size in sorted(args.sizes):
        for concurrency in (1, args.concurrency):
            chain = by_key[(size, "chain answer(), no model", concurrency)]
            bare = by_key[(size, "bare search_entries (k=5, embedding incl.)", concurrency)]
            ratio_rows.append([size, concurrency, chain[4], bare[4], chain[4] / bare[4],
                               "yes" if chain[4] <= 100 else "no"])
    print()
    print(common.table(["entries", "askers", "chain p95 ms", "search p95 ms", "chain / search", "p95 ≤ 100 ms"],
                       ratio_rows))
    if model_rows:
        print(f"\n## With the fake model ({args.first_token} s to first token, {args.tps:g} deltas/s; "
              f"scripted model time {scripted:.2f} s), at {min(args.sizes)} entries\n")
        print(common.table(
            ["askers", "answers", "model ms", "total p50", "total p95", "overhead p50 ms", "overhead p95 ms",
             "overhead p50 %", "overhead p95 %", "model's first answer char ms", "first text p50 ms",
             "first text p95 ms", "llm timing p50",
             "model calls/answer", "route"], model_rows))


if __name__ == "__main__":
    main()
