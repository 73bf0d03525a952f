"""The answer chain's speed: without a model at 10k and 100k entries under 20 concurrent askers,
and with a fake model at a fixed speed (our overhead over the model's time, first visible text).

    python bench/chain_speed.py [--sizes 10000 100000] [--concurrency 20] [--queries 200]
                                [--first-token 0.8] [--tps 50] [--quick]

Part 1, no model (LLM_PROVIDER=none): `pipeline.answer()` for xquad questions from N threads at
once, against bare `search_entries` (query embedding included, as the chain does it) from the
same N threads on the same bot: the chain's p95 over the search's p95 is what the chain adds.
The query-vector cache is emptied before each of these, so every question is embedded. Two more
rows: N visitors who pause 1–5 s (`--think-min/--think-max`) before each question, as people in
a chat do, and the back-to-back run again with the questions' vectors cached (repeat questions).
Bench data is search_speed.py's synthetic entries (same helpers, COPY + one HNSW build).

Part 2, fake model (tests/fakes/messages_api.py in a process of its own, so its HTTP work does
not count as ours; settings overridden in-process to LLM_PROVIDER=anthropic and
ANTHROPIC_BASE_URL=the fake): every answer streams a tool call after
`--first-token` s at `--tps` deltas/s. Model time is what the fake is scripted to spend
(first-token latency + (deltas - 1) / tps); served = the same reply read by a bare HTTP client in
the same run (the baseline); overhead = total - served. Time to first visible
text is measured at the first `on_delta` call. Run on the smallest size.

`--quick`: sizes 1000 and 10000, 60 queries. Bench bots (`bench-chain-<size>`) are deleted at the
end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

# Its own database: search_speed.py drops and rebuilds the shared HNSW index of `spravka_bench`,
# so the two must not share one while either is measuring.
DATABASE = "spravka_bench_chain"
# No figure in it: the fake cites source 0 of whatever was found, and a figure that source does
# not give would (rightly) be blocked; the same text is streamed before and after the fact check.
ANSWER_TEXT = (
    "Доставка по городу занимает немного времени, стоимость зависит от веса заказа и района; "
    "подробности и тарифы — на странице доставки по ссылке ниже."
)


def build_bot(size: int, sources: list[Any]) -> Any:
    from bench import search_speed
    from knowledge.lexicon import lexicon_refresh

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


def no_model_rows(
    size: int, bot: Any, questions: list[str], workers: int, think: tuple[float, float]
) -> list[list[Any]]:
    """Bare search (with and without the query embedding) and the chain, 1 and `workers` askers."""
    from django.test import override_settings

    from answers import pipeline
    from knowledge.evaluation import percentile
    from knowledge.search import search_entries

    rows: list[list[Any]] = []
    vectors = common.embed_queries(questions, "e5-small")
    with override_settings(LLM_PROVIDER="none"):
        pipeline.answer(bot=bot, text=questions[0], history=[])  # warm: model loaded, caches filled
        for question in questions:  # warm: index and table pages in memory, so no row pays for the first reads
            search_entries(bot, question, k=pipeline.SEARCH_K, query_vector=vectors[question], model_key="e5-small")
        cases: list[tuple[str, Callable[[str], Any]]] = [
            ("search_entries, query vector given", lambda q: search_entries(
                bot, q, k=pipeline.SEARCH_K, query_vector=vectors[q], model_key="e5-small")),
            ("bare search_entries (k=5, embedding incl.)", lambda q: search_entries(bot, q, k=pipeline.SEARCH_K)),
            ("chain answer(), no model", lambda q: pipeline.answer(bot=bot, text=q, history=[])),
        ]
        for label, call in cases:
            for concurrency in (1, workers):
                clear_query_cache(questions)  # every question new to the process, as in the first visit
                times, wall = concurrent_ms(call, questions, concurrency)
                rows.append([size, label, concurrency, percentile(times, 50), percentile(times, 95),
                             len(questions) / wall])
        chain = cases[-1][1]
        clear_query_cache(questions)
        times, wall = paced_ms(chain, questions, workers, think)
        rows.append([size, f"{PACED} {think[0]:g}–{think[1]:g} s", workers, percentile(times, 50),
                     percentile(times, 95), len(questions) / wall])
        times, wall = concurrent_ms(chain, questions, workers)  # the same questions: vectors cached
        rows.append([size, REPEATED, workers, percentile(times, 50), percentile(times, 95), len(questions) / wall])
    return rows


PACED = "chain, visitors pausing between questions"
REPEATED = "chain, the same questions again (query cache warm)"


def paced_ms(
    call: Callable[[str], Any], questions: list[str], workers: int, think: tuple[float, float]
) -> tuple[list[float], float]:
    """`workers` visitors at once, each asking its share of the questions with a pause of
    uniform(`think`) seconds before each one (reading the answer, typing the next question), as
    people in a chat do. Latency of each call (ms) and the wall time (s)."""
    shares = [questions[i::workers] for i in range(workers)]

    def visitor(index: int) -> list[float]:
        pauses = random.Random(index)
        times = []
        for question in shares[index]:
            time.sleep(pauses.uniform(*think))
            started = time.perf_counter()
            call(question)
            times.append((time.perf_counter() - started) * 1000)
        return times

    started = time.perf_counter()
    times = [t for share in _pool(workers).map(visitor, range(workers)) for t in share]
    return times, time.perf_counter() - started


def clear_query_cache(questions: list[str]) -> None:
    """Forget the questions' vectors in this process and in the shared (Redis) cache."""
    from django.core.cache import caches

    from knowledge.embeddings import QueryVectorCache, get_embedder, normalize_query, query_cache

    embedder = get_embedder()
    query_cache.clear_local()
    caches[query_cache.shared_alias or "default"].delete_many(
        [QueryVectorCache.shared_key(embedder, normalize_query(q)) for q in questions])


def model_time(first_token: float, tps: float, chunks: int) -> float:
    return first_token + max(0, chunks - 1) / tps


def fake_model_rows(bot: Any, questions: list[str], args: argparse.Namespace) -> tuple[list[list[Any]], float]:
    import json

    from django.test import override_settings

    from knowledge.evaluation import percentile
    tool_input = {"intent": "question", "source": 0, "answer": ANSWER_TEXT, "product_query": "", "fixed": ""}
    raw = json.dumps(tool_input, ensure_ascii=False)
    chunk_chars = 4
    chunks = -(-len(raw) // chunk_chars)
    scripted = model_time(args.first_token, args.tps, chunks)
    # The first delta that carries answer text: intent and source stream first (the schema's order).
    before_answer = raw.index(ANSWER_TEXT[:8]) // chunk_chars
    first_answer_ms = 1000 * model_time(args.first_token, args.tps, before_answer + 1)
    rows: list[list[Any]] = []
    plan = {"tool_input": tool_input, "first_token": args.first_token, "tps": args.tps, "chunk_chars": chunk_chars}
    with fake_model_process(plan) as url:
        overrides = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": url,
                     "ANTHROPIC_API_KEY": "sk-ant-bench-fake", "LLM_MAX_RETRIES": 0}
        import httpx

        with httpx.Client(timeout=30) as client:  # made once: a client's set-up is not the model's time
            served = [served_stream_ms(client, url) for _ in range(10)]
        model_ms = statistics.median(served)
        with override_settings(**overrides):
            sourced = _with_sources(bot, questions)
            # (askers, answers, spread): with `spread`, asker i starts i/askers of one model time late,
            # as visitors arrive one after another; without, all ask at the same instant (a burst).
            runs = ((1, 20, False), (args.concurrency, args.concurrency * 2, False),
                    (args.concurrency, args.concurrency * 2, True))
            for concurrency, count, spread in runs:
                asked = sourced[:count]
                clear_query_cache(asked)
                delays = [scripted * (i % concurrency) / concurrency if spread else 0.0 for i in range(count)]
                pairs = zip(asked, delays, strict=True)
                results = list(_pool(concurrency).map(lambda qd: _ask_streaming(bot, *qd), pairs))
                totals = [r[0] for r in results]
                firsts = [r[1] for r in results]
                llms = [r[2] for r in results]
                routes = [r[3] for r in results]
                calls = sum(r[4] for r in results)
                overhead = [t - model_ms for t in totals]
                shown = [f for f in firsts if f == f]
                rows.append([
                    f"{concurrency}, {'arriving over one model time' if spread else 'at once'}",
                    len(asked), f"{scripted * 1000:.0f} / {model_ms:.0f}",
                    statistics.median(totals), percentile(totals, 95),
                    statistics.median(overhead), percentile(overhead, 95),
                    100 * statistics.median(overhead) / model_ms, 100 * percentile(overhead, 95) / model_ms,
                    f"{first_answer_ms:.0f}",
                    statistics.median(shown) if shown else "none", percentile(shown, 95) if shown else "none",
                    statistics.median(llms), calls / len(asked), ",".join(sorted(set(routes))),
                ])
    return rows, scripted


def served_stream_ms(client: Any, url: str) -> float:
    """One streamed reply of the fake read to its end by a bare HTTP client (no SDK, no chain): the
    model's time as served, sleeps' overshoot and transport included. Overhead is measured
    against this baseline, so the fake's own inaccuracy is not counted as ours."""
    body = {"model": "bench", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "?"}],
            "tool_choice": {"type": "tool", "name": "answer"}}
    started = time.perf_counter()
    with client.stream("POST", f"{url}/v1/messages", json=body) as response:
        for _chunk in response.iter_bytes():
            pass
    return (time.perf_counter() - started) * 1000


@contextmanager
def fake_model_process(plan: dict[str, Any]) -> Iterator[str]:
    """The fake Messages API in a process of its own, answering every request with `plan`'s
    streamed tool call: its HTTP and SSE work must not share this process's GIL and so count as
    our overhead. Yields its base URL."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve_fake_model, args=(plan, child), daemon=True)
    process.start()
    try:
        yield parent.recv()
    finally:
        process.terminate()
        process.join(5)


def _serve_fake_model(plan: dict[str, Any], pipe: Any) -> None:
    from tests.fakes import messages_api

    fake = messages_api.FakeLLMServer().start()
    reply = messages_api.tool_use(plan["tool_input"], first_token_latency=plan["first_token"],
                                  tokens_per_second=plan["tps"], chunk_chars=plan["chunk_chars"])
    fake.script(*[reply] * 100_000)
    pipe.send(fake.url)
    threading.Event().wait()


def _with_sources(bot: Any, questions: list[str]) -> list[str]:
    """Questions whose prompt lists at least one source: the fake always answers `source: 0`, which
    is out of range (a form repair, a second call) when the prompt has none."""
    from answers import pipeline, prompt
    from knowledge.search import search_entries

    return [q for q in questions if prompt.numbered_sources(bot, search_entries(bot, q, k=pipeline.SEARCH_K))]


def _ask_streaming(bot: Any, question: str, delay: float = 0.0) -> tuple[float, float, float, str, int]:
    """(total ms, ms to the first on_delta or NaN, the chain's own llm timing, route, model calls),
    timed from the moment the visitor asks, `delay` seconds after the call."""
    from answers import pipeline

    time.sleep(delay)
    started = time.perf_counter()
    first: list[float] = []

    def on_delta(_text: str) -> None:
        if not first:
            first.append((time.perf_counter() - started) * 1000)

    reply = pipeline.answer(bot=bot, text=question, history=[], on_delta=on_delta)
    total = (time.perf_counter() - started) * 1000
    return (total, first[0] if first else float("nan"), reply.timings.get("llm", 0.0),
            str(reply.llm_meta.get("route")), int(reply.llm_meta.get("attempts") or 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10000, 100000])
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--first-token", type=float, default=0.8)
    parser.add_argument("--tps", type=float, default=50.0)
    parser.add_argument("--think-min", type=float, default=1.0, help="paced visitors: shortest pause, s")
    parser.add_argument("--think-max", type=float, default=5.0, help="paced visitors: longest pause, s")
    parser.add_argument("--quick", action="store_true", help="sizes 1000 and 10000, 60 queries")
    parser.add_argument("--no-model-part", action="store_true", help="skip the fake-model part")
    parser.add_argument("--model-part-only", action="store_true", help="only the fake-model part")
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
            if not args.model_part_only:
                rows += no_model_rows(size, bot, questions, args.concurrency, (args.think_min, args.think_max))
            if size == min(args.sizes) and not args.no_model_part:
                model_rows, scripted = fake_model_rows(bot, questions, args)
        finally:
            common.drop_bot(bot.slug)
    print(f"# Chain speed — {common.machine()}; {len(questions)} xquad questions\n")
    if rows:
        print("## Without a model (LLM_PROVIDER=none); baseline: bare search at the same size and concurrency\n")
        print(common.table(["entries", "what", "askers", "p50 ms", "p95 ms", "answers/s"], rows))
        by_key = {(r[0], r[1], r[2]): r for r in rows}
        ratio_rows = []
        for size in sorted(args.sizes):
            for concurrency in (1, args.concurrency):
                chain = by_key[(size, "chain answer(), no model", concurrency)]
                bare = by_key[(size, "bare search_entries (k=5, embedding incl.)", concurrency)]
                ratio_rows.append([size, "chain, asking back to back", concurrency, chain[4], bare[4],
                                   chain[4] / bare[4], "yes" if chain[4] <= 100 else "no"])
            for row in rows:
                if row[0] == size and (row[1].startswith(PACED) or row[1] == REPEATED):
                    ratio_rows.append([size, row[1], row[2], row[4], "", "", "yes" if row[4] <= 100 else "no"])
        print()
        print(common.table(["entries", "how they ask", "askers", "chain p95 ms", "search p95 ms", "chain / search",
                            "p95 ≤ 100 ms"], ratio_rows))
    if model_rows:
        print(f"\n## With the fake model ({args.first_token} s to first token, {args.tps:g} deltas/s; "
              f"scripted model time {scripted:.2f} s), at {min(args.sizes)} entries\n")
        print(common.table(
            ["askers, how", "answers", "model ms scripted / served", "total p50", "total p95",
             "overhead p50 ms", "overhead p95 ms",
             "overhead p50 %", "overhead p95 %", "model's first answer char ms", "first text p50 ms",
             "first text p95 ms", "llm timing p50",
             "model calls/answer", "route"], model_rows))


if __name__ == "__main__":
    main()
