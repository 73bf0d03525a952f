"""The REST API's speed: entries list at 1k and 100k entries, and what ask/ adds over the chain.

    python bench/api_speed.py [--sizes 1000 100000] [--requests 300] [--questions 60] [--rounds 2]

Entries list: `GET /api/v1/entries/` (a page of 50) through the whole server stack in-process
(Django's middleware, DRF, key lookup, the per-key throttle in Redis, cursor pagination, JSON),
against the same ORM query without the API layer (the page the paginator asks for, 51 rows of
`knowledge.selectors.entries_of`, ordered by -id), in the same run at the same size. Also the
page 20 pages deep (followed through `next` cursors) and a filtered page (kind, active).

Ask: `POST /api/v1/ask/` against the chain itself, `pipeline.answer()` called directly, and
against `conversation_ask_once()` (the service `manage.py ask` and a recorded ask/ call: the chain
plus the conversation's rows, the review record and the broadcasts); `{"record": false}` calls the
chain alone, so its baseline is the chain; the recorded call's is the service. A third call in
the record=false turns, an ask/ refused by validation (an empty question: the key, both throttle
scopes, parsing and the error's rendering, no chain), is the API layer's floor, shown as a share of
the chain's mean time. Without a model
(LLM_PROVIDER=none, the case where the chain is fastest and any overhead weighs most). Each API
call is timed beside its baseline as a pair (record=false with the chain, recorded with the
service), both on the same question one after the other, which first in turns, the query-vector
cache emptied before each call (every question is embedded, as a new one is): drift on a shared
machine falls on both alike, and a stored call's after-commit work never lands on an unstored one.

`--conn-max-age N` sets DB_CONN_MAX_AGE for the run: the settings' default 0 opens a new database
connection for every request (~12 ms here), which a direct call of the chain does not pay.

Bench data: search_speed.py's synthetic entries (real xquad-ru passages re-cut, vectors moved
between real ones), loaded with COPY into `spravka_bench_api`; the bench bots are deleted at
the end. Rates are raised for the run (API_RATE, API_ASK_RATE): the throttle still counts every
request in Redis, it just never refuses one.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATABASE = "spravka_bench_api"
MODEL = "e5-small"


def seed_vectors() -> None:
    """Cache e5 vectors of the real xquad passages (search_speed.source_passages reads them)."""
    bot = common.bench_bot(f"bench-api-seed-{MODEL}", fresh=True)
    try:
        common.load_passages(bot, common.read_jsonl(common.XQUAD / "passages.jsonl"), source_title="xquad")
        cached, computed = common.embed_bot(bot, MODEL)
        print(f"  seed vectors: {cached} cached, {computed} computed", file=sys.stderr)
    finally:
        common.drop_bot(bot.slug)


def build_bots(sizes: list[int]) -> dict[int, Any]:
    from bench import search_speed
    from knowledge.lexicon import lexicon_refresh

    sources = search_speed.source_passages()
    bots = {size: common.bench_bot(f"bench-api-{size}", fresh=True) for size in sizes}
    search_speed.drop_hnsw()
    try:
        for size, bot in bots.items():
            with common.timed(f"COPY {size} rows"):
                search_speed.copy_entries(bot.pk, search_speed.synthetic_rows(sources, size, seed=size))
    finally:
        with common.timed("HNSW build"):
            search_speed.rebuild_hnsw()
    for bot in bots.values():
        lexicon_refresh(bot_id=bot.pk)
    return bots


def ms_each(call: Callable[[], Any], count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def list_rows(size: int, bot: Any, requests: int) -> list[list[Any]]:
    from django.test import Client

    from bots.apikeys import api_key_create
    from knowledge.evaluation import percentile
    from knowledge.selectors import entries_of

    client = Client(HTTP_AUTHORIZATION=f"Bearer {api_key_create(bot=bot, name='bench')[1]}")

    def api(url: str) -> Callable[[], Any]:
        def call() -> None:
            response = client.get(url)
            assert response.status_code == 200, response.content[:300]
            assert len(response.json()["results"]) == 50

        return call

    def orm() -> None:
        assert len(list(entries_of(bot=bot).order_by("-id")[:51])) == 51

    depth = max(1, min(20, size // 50 - 2))
    deep = "/api/v1/entries/"
    for _ in range(depth):
        deep = client.get(deep).json()["next"]
    cases = [
        ("ORM query alone (baseline)", orm),
        ("GET entries/ (first page)", api("/api/v1/entries/")),
        (f"GET entries/ page {depth + 1} (cursor)", api(deep)),
        ("GET entries/?kind=chunk&active=true", api("/api/v1/entries/?kind=chunk&active=true")),
    ]
    for _label, call in cases:  # warm: table and index pages in memory, connections open
        ms_each(call, 20)
    rows = []
    baseline_p95 = 0.0
    for label, call in cases:
        times = ms_each(call, requests)
        p95 = percentile(times, 95)
        baseline_p95 = baseline_p95 or p95
        rows.append([size, label, len(times), percentile(times, 50), p95, p95 / baseline_p95,
                     "" if label.startswith("ORM") else ("yes" if p95 <= 50 else "no")])
    return rows


def ask_rows(bot: Any, questions: list[str], rounds: int, overrides: dict[str, Any]) -> list[list[Any]]:
    from django.test import Client, override_settings

    from answers import pipeline
    from bench.chain_speed import clear_query_cache
    from bots.apikeys import api_key_create
    from chat.services import conversation_ask_once
    from knowledge.evaluation import percentile

    client = Client(HTTP_AUTHORIZATION=f"Bearer {api_key_create(bot=bot, name='bench-ask')[1]}")

    def api(question: str, record: bool = True) -> None:
        body = {"question": question, "record": record}
        response = client.post("/api/v1/ask/", body, content_type="application/json")
        assert response.status_code == 200, response.content[:300]

    def api_floor(_question: str) -> None:
        # The same request refused by validation after the key, both throttle scopes and parsing:
        # everything the API layer does for an ask except the chain and the reply's rendering.
        response = client.post("/api/v1/ask/", {"question": "", "record": False}, content_type="application/json")
        assert response.status_code == 400, response.content[:300]

    modes: list[tuple[str, Callable[[str], Any]]] = [
        ("chain: pipeline.answer() (baseline)", lambda q: pipeline.answer(bot=bot, text=q, history=[])),
        ("conversation_ask_once() (manage.py ask)",
         lambda q: conversation_ask_once(bot=bot, text=q, visitor_id=f"bench:{uuid.uuid4().hex[:12]}")),
        ("POST ask/ (recorded, as manage.py ask)", api),
        ("POST ask/ {record: false}", lambda q: api(q, record=False)),
        ("POST ask/ refused by validation (the API layer alone, no chain)", api_floor),
    ]
    samples: dict[str, list[float]] = {label: [] for label, _call in modes}
    with override_settings(**overrides):
        for _label, call in modes:  # warm: the embedding model loaded, connections open
            call(questions[0])
        # Each API call beside what it does without the API, as a pair on its own: a recorded call
        # leaves work behind (broadcasts, the review record's after-commit hooks) that would slow
        # whatever runs next, so a stored and an unstored call never alternate.
        for pair in ((modes[0], modes[3], modes[4]), (modes[1], modes[2])):
            for round_ in range(rounds):
                for index, question in enumerate(questions):
                    # Both on each question, in turns first: drift falls on both alike. Each call
                    # embeds the question afresh.
                    for label, call in pair if (index + round_) % 2 == 0 else pair[::-1]:
                        clear_query_cache([question])
                        started = time.perf_counter()
                        call(question)
                        samples[label].append((time.perf_counter() - started) * 1000)
    chain, service = samples[modes[0][0]], samples[modes[1][0]]
    # What each API call does without the API layer: record=false is the chain, recorded is the service.
    baseline = {modes[2][0]: service, modes[3][0]: chain}
    rows = []
    for label, _call in modes:
        times = samples[label]
        own = baseline.get(label)
        if label == modes[4][0]:  # the floor: its whole time is API layer, as a share of the chain's
            rows.append([label, len(times), statistics.mean(times), percentile(times, 50), percentile(times, 95),
                         statistics.mean(times) / statistics.mean(chain) * 100, "", ""])
            continue
        rows.append([label, len(times), statistics.mean(times), percentile(times, 50), percentile(times, 95),
                     _over(times, chain), _over(times, own) if own else "",
                     ("yes" if _over(times, own) <= 5 else "no") if own else ""])
    return rows


def _over(times: list[float], base: list[float]) -> float:
    """How much longer on average, in %: mean against mean."""
    return statistics.mean(times) / statistics.mean(base) * 100 - 100


MODEL_SECONDS = 0.8  # the fake model's time per call (ask/ does not stream: the whole reply at once)


@contextmanager
def model_process(plan: dict[str, Any]) -> Iterator[str]:
    """The fake Messages API in a process of its own (its HTTP work must not count as ours), each
    reply sent after `plan["delay"]` s. Yields its base URL."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve_model, args=(plan, child), daemon=True)
    process.start()
    try:
        yield parent.recv()
    finally:
        process.terminate()
        process.join(5)


def _serve_model(plan: dict[str, Any], pipe: Any) -> None:
    import threading

    from tests.fakes import messages_api

    fake = messages_api.FakeLLMServer().start()
    fake.script(*[messages_api.tool_use(plan["tool_input"], delay=plan["delay"])] * 100_000)
    pipe.send(fake.url)
    threading.Event().wait()


def model_rows(bot: Any, questions: list[str]) -> list[list[Any]]:
    from bench import chain_speed

    tool_input = {"intent": "question", "source": 0, "answer": chain_speed.ANSWER_TEXT, "product_query": "",
                  "fixed": ""}
    with model_process({"tool_input": tool_input, "delay": MODEL_SECONDS}) as url:
        overrides = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-bench-fake",
                     "LLM_MAX_RETRIES": 0}
        from django.test import override_settings

        with override_settings(**overrides):
            sourced = chain_speed._with_sources(bot, questions)[:20]
        return ask_rows(bot, sourced, 1, overrides)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 100000])
    parser.add_argument("--requests", type=int, default=300, help="list requests per case")
    parser.add_argument("--questions", type=int, default=60, help="xquad questions for ask")
    parser.add_argument("--rounds", type=int, default=2, help="ask: rounds of every mode")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--conn-max-age", type=int, default=None,
                        help="DB_CONN_MAX_AGE for the run (default: the settings', 0 = a new connection per request)")
    parser.add_argument("--ask-only", action="store_true", help="only the ask part (at the smallest size)")
    parser.add_argument("--with-model", action="store_true",
                        help=f"ask also with the fake model ({MODEL_SECONDS} s a reply), 20 questions")
    args = parser.parse_args()
    if args.conn_max_age is not None:
        import os

        os.environ["DB_CONN_MAX_AGE"] = str(args.conn_max_age)
    common.setup_django(args.database)
    from django.conf import settings
    from django.db import connection

    settings.API_RATE = settings.API_ASK_RATE = "1000000/min"
    cases = common.read_jsonl(common.XQUAD / "cases.jsonl")
    questions = [c["question"] for c in cases[:: max(1, len(cases) // args.questions)][: args.questions]]
    seed_vectors()
    if args.ask_only:
        args.sizes = [min(args.sizes)]
    bots = build_bots(sorted(args.sizes))
    try:
        rows = [] if args.ask_only else [
            row for size, bot in bots.items() for row in list_rows(size, bot, args.requests)]
        asked = ask_rows(bots[min(bots)], questions, args.rounds, {"LLM_PROVIDER": "none"})
        with_model = model_rows(bots[min(bots)], questions) if args.with_model else []
    finally:
        for bot in bots.values():
            common.drop_bot(bot.slug)
    age = connection.settings_dict["CONN_MAX_AGE"]
    print(f"# API speed — {common.machine()}; CONN_MAX_AGE={age} "
          f"({'a new database connection per request' if not age else 'connections kept between requests'})\n")
    if rows:
        print("## Entries list, a page of 50; baseline: the same ORM query without the API layer\n")
        print(common.table(["entries", "what", "requests", "p50 ms", "p95 ms", "p95 / ORM p95", "p95 ≤ 50 ms"],
                           rows))
    print(f"\n## ask/ without a model, {min(bots)} entries, {len(questions)} xquad questions × {args.rounds} "
          "rounds; baseline: the chain called directly\n")
    headers = ["what", "answers", "mean ms", "p50 ms", "p95 ms", "mean over the chain %",
               "mean over the same call without the API %", "API adds ≤ 5 %"]
    print(common.table(headers, asked))
    if with_model:
        print(f"\n## ask/ with the fake model (tests/fakes in a process of its own, {MODEL_SECONDS} s a reply), "
              "20 questions with sources\n")
        print(common.table(headers, with_model))


if __name__ == "__main__":
    main()
