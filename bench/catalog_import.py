"""Catalog import speed: a 10,000-offer YML feed (the Yandex Market format) into a bot's catalog.

    python bench/catalog_import.py [--offers 10000]

The feed is generated (categories, prices, old prices, pictures, params, CDATA descriptions) and
written to a file; rows:

- baseline: lxml parsing the same bytes alone (what any reader of the file pays);
- parse: feeds.parse_feed (the parser with its checks, no database);
- first import: `catalog_import_file` into an empty catalog (all added);
- re-import unchanged: the same file again (nothing written);
- re-import with 10 % of prices changed and 5 % of offers replaced (changed / added / removed).

Then product search at the same size: `products.product_search` for 200 shop questions (price
ceilings and floors, in stock, vendors, categories, plain words), p50 / p95, against the
baseline the issue names: the entries search (`knowledge.search.search_entries`, hybrid, query
vector given so embedding is excluded) on a bot with as many entries (the offers' texts, random
unit vectors, COPY + the HNSW build as bench/search_speed.py does it), the same questions.

Search by meaning (offer embeddings, filled behind an import on the embed queue, never awaited):
the offers get random unit vectors of the default model's size before the searches (embedding
10,000 offers with e5-small takes minutes; the cost of the search is the same), written as the
embedding task writes them (`embedding.offer_vectors_write`, batch by batch, 10,000 old row
versions left behind) and ended as the task ends (`offers_statistics_refresh`, its ANALYZE), with
no VACUUM: the state a visitor meets right after the pass. Two more rows: questions no offer's
words match (the search falls back to the nearest offers by meaning, the offers' partial HNSW
index with an iterative scan), once with the question's vector cached (as in the chain, where
the entries search has just embedded the same text) and once with the query embedding included.
For comparison, the same fallback is timed before the task's ANALYZE (what the pass left before
it had one: the planner's statistics say no offer has a vector) and, at the end, after a manual
VACUUM ANALYZE (the steady state once autovacuum has been).

Targets (issue 13): ≤ 60 s for the first import of 10,000 offers; product search p95 ≤ 50 ms at
10,000 offers. The bench bots (`bench-catalog`, `bench-catalog-entries`) are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-catalog"
TARGET_S = 60.0
SEARCH_TARGET_MS = 50.0
WORDS = ["Пылесос", "Чайник", "Кофемашина", "Светильник", "Кондиционер", "Утюг", "Блендер", "Удлинитель"]
VENDORS = ["Вихрь", "Ключ", "Пар", "Свет", "Холод", "Дом"]


def make_feed(offers: int, *, seed: int = 1, price_shift: float = 0.0, replace: float = 0.0) -> bytes:
    rng = random.Random(seed)
    changed = random.Random(seed + 1)
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<yml_catalog date="2026-12-01 10:00"><shop>'
             "<name>ТехноДом</name><categories>"]
    parts += [f'<category id="{i}">Категория {i}</category>' for i in range(1, 41)]
    parts.append("</categories><offers>")
    for i in range(offers):
        offer_id = f"new-{i}" if changed.random() < replace else f"sku-{i}"
        price = rng.randint(500, 90000)
        if changed.random() < price_shift:
            price += 100
        word, vendor = rng.choice(WORDS), rng.choice(VENDORS)
        parts.append(
            f'<offer id="{offer_id}" available="{"true" if rng.random() < 0.8 else "false"}">'
            f"<url>https://shop.example/p/{offer_id}</url><price>{price}</price><oldprice>{price + 1000}</oldprice>"
            f"<currencyId>RUB</currencyId><categoryId>{rng.randint(1, 40)}</categoryId>"
            f"<picture>https://shop.example/img/{offer_id}.jpg</picture><name>{word} {vendor} {i}</name>"
            f"<vendor>{vendor}</vendor><description><![CDATA[<p>{word} {vendor}: модель {i}, "
            f"гарантия 2 года, доставка по Москве.</p>]]></description>"
            f'<param name="Мощность" unit="Вт">{rng.randint(100, 2500)}</param><param name="Цвет">белый</param>'
            "</offer>"
        )
    parts.append("</offers></shop></yml_catalog>")
    return "".join(parts).encode()


QUESTIONS = [
    "есть {w} до {p} ₽?", "{w} от {q} тысяч в наличии", "{w} {v}", "что есть от {v} дешевле {p}?",
    "{w} для дома", "нужен {w} в наличии", "{w} от {q} до {r} тыс.", "покажите {w}",
]


def questions(count: int) -> list[str]:
    rng = random.Random(7)
    made = []
    for i in range(count):
        made.append(QUESTIONS[i % len(QUESTIONS)].format(
            w=rng.choice(WORDS).lower(), v=rng.choice(VENDORS), p=rng.randint(2, 60) * 1000,
            q=rng.randint(1, 20), r=rng.randint(21, 60)))
    return made


MEANING = [
    "чем убрать пыль в квартире", "вскипятить воду", "сварить эспрессо утром", "подарок маме на юбилей",
    "что-нибудь для уборки", "освежить воздух в спальне", "погладить рубашки", "подключить телевизор",
]


def give_vectors(bot: Any) -> int:
    """Random unit vectors of the default model's size on every offer of `bot`, written as the
    embedding task writes them (batches of EMBEDDING_BATCH), without the task's closing ANALYZE."""
    import numpy as np
    from django.conf import settings

    from knowledge.catalog.embedding import offer_vectors_write
    from knowledge.catalog.models import CatalogOffer
    from knowledge.embeddings import DIMENSIONS, get_embedder

    key = get_embedder().key
    rng = np.random.default_rng(5)
    offers = list(CatalogOffer.objects.filter(bot=bot).order_by("pk").values_list("pk", "content_hash"))
    size = settings.EMBEDDING_BATCH
    for start in range(0, len(offers), size):
        rows = []
        for pk, content_hash in offers[start:start + size]:
            vector = rng.standard_normal(DIMENSIONS[key]).astype(np.float32)
            vector /= np.linalg.norm(vector)
            rows.append((pk, content_hash, "[" + ",".join(f"{x:.5f}" for x in vector) + "]"))
        offer_vectors_write(model_key=key, rows=rows)
    return len(offers)


def vacuum() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE commerce_catalogoffer")


def meaning_rows(bot: Any, count: int, when: str = "") -> list[str]:
    """Questions no offer's words match: the fallback by meaning, vector cached and not."""
    from knowledge.catalog.products import product_search
    from knowledge.embeddings import get_embedder
    from knowledge.evaluation import percentile

    embedder = get_embedder()
    asked = [MEANING[i % len(MEANING)] for i in range(count)]
    for question in set(asked):
        embedder.query(question)  # cached, as after the chain's entries search
    cached = []
    for question in asked:
        started = time.perf_counter()
        product_search(bot=bot, text=question)
        cached.append((time.perf_counter() - started) * 1000)
    cold = []
    run = random.Random().getrandbits(32)  # query vectors are cached in Redis across runs too
    for i, question in enumerate(asked):
        fresh = f"{question} {run:x}{i}"  # a text never embedded before
        started = time.perf_counter()
        product_search(bot=bot, text=fresh)
        cold.append((time.perf_counter() - started) * 1000)
    p95 = percentile(cached, 95)
    return [
        f"| product search falling back to meaning, question vector cached (as in the chain){when} | "
        f"{percentile(cached, 50):.1f} | {p95:.1f} | — | {'met' if p95 <= SEARCH_TARGET_MS else 'not met'} |",
        f"| the same with the query embedding included{when} | {percentile(cold, 50):.1f} | "
        f"{percentile(cold, 95):.1f} | — | — |",
    ]


def search_rows(bot: Any, count: int, *, baseline: bool = True, when: str = "") -> list[str]:
    """p50 / p95 of product search and of the entries search at the same size, same questions."""
    import numpy as np

    from bench import search_speed
    from knowledge.catalog.models import CatalogOffer
    from knowledge.catalog.products import product_search
    from knowledge.evaluation import percentile
    from knowledge.lexicon import lexicon_refresh
    from knowledge.search import search_entries

    asked = questions(count)
    product_search(bot=bot, text=asked[0])
    times, hits = [], 0
    for question in asked:
        started = time.perf_counter()
        found = product_search(bot=bot, text=question)
        times.append((time.perf_counter() - started) * 1000)
        hits += bool(found.offers)
    size = CatalogOffer.objects.filter(bot=bot).count()
    p95 = percentile(times, 95)
    searched = (f"| product search (k=3) at {size} offers{when} | {percentile(times, 50):.1f} | {p95:.1f} | "
                f"{hits} / {len(asked)} | {'met' if p95 <= SEARCH_TARGET_MS else 'not met'} |")
    if not baseline:
        return [searched]
    entries_bot = common.bench_bot("bench-catalog-entries", fresh=True)
    rng = np.random.default_rng(3)

    def unit() -> np.ndarray:
        vector = rng.standard_normal(search_speed.DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)

    rows = [(name, f"{name}. {description}", "[" + ",".join(f"{x:.5f}" for x in unit()) + "]")
            for name, description in CatalogOffer.objects.filter(bot=bot).values_list("name", "description")]
    search_speed.drop_hnsw()
    try:
        search_speed.copy_entries(entries_bot.pk, rows)
    finally:
        search_speed.rebuild_hnsw()
    lexicon_refresh(bot_id=entries_bot.pk)
    vectors = [unit() for _ in asked]
    search_entries(entries_bot, asked[0], query_vector=vectors[0], model_key=search_speed.MODEL)
    base = []
    for question, vector in zip(asked, vectors, strict=True):
        started = time.perf_counter()
        search_entries(entries_bot, question, k=5, query_vector=vector, model_key=search_speed.MODEL)
        base.append((time.perf_counter() - started) * 1000)
    common.drop_bot("bench-catalog-entries")
    return [
        f"| baseline: entries search (hybrid, k=5) at {size} entries | {percentile(base, 50):.1f} | "
        f"{percentile(base, 95):.1f} | — | — |",
        searched,
    ]


def timed(call: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()  # type: ignore[operator]
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=10000)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    common.setup_django()
    from lxml import etree

    from knowledge.catalog import catalog, feeds
    from knowledge.catalog.models import CatalogOffer

    bot = common.bench_bot(SLUG, fresh=True)
    folder = Path(tempfile.mkdtemp(prefix="spravka-catalog-"))
    # The same file name: a feed is one source by its name (an upload) or address, and the
    # re-import must update that source, not start a second catalog beside it.
    first, second = folder / "feed.xml", folder / "next" / "feed.xml"
    second.parent.mkdir()
    first.write_bytes(make_feed(args.offers))
    second.write_bytes(make_feed(args.offers, price_shift=0.10, replace=0.05))
    size_mb = first.stat().st_size / 1024 / 1024
    print(f"# Catalog import — {common.machine()}\n")
    print(f"{args.offers} offers, feed {size_mb:.1f} MB.\n")
    print("| step | time, s | added / changed / removed / skipped | target |")
    print("|---|---|---|---|")
    try:
        data = first.read_bytes()
        parse_s, _root = timed(lambda: etree.fromstring(data, etree.XMLParser(resolve_entities=False)))
        print(f"| baseline: lxml parse alone | {parse_s:.2f} | — | — |")
        ours_s, parsed = timed(lambda: feeds.parse_feed(data))
        print(f"| parse with checks (no database) | {ours_s:.2f} | {len(parsed.offers)} offers |"  # type: ignore[attr-defined]
              " — |")
        for label, path in (("first import", first), ("re-import unchanged", first),
                            ("re-import: 10 % prices, 5 % offers replaced", second)):
            seconds, imported = timed(lambda path=path: catalog.catalog_import_file(bot=bot, path=path))
            run = imported.run  # type: ignore[attr-defined]
            assert run.status == "done", run.message
            verdict = ("met" if seconds <= TARGET_S else "not met") if label == "first import" else "—"
            print(f"| {label} | {seconds:.2f} | {run.added} / {run.changed} / {run.removed} / {run.skipped} "
                  f"| {verdict} |")
        print(f"\n{CatalogOffer.objects.filter(bot=bot).count()} offers stored at the end.\n")
        print(f"{args.questions} questions; ms.\n")
        print("| search | p50 | p95 | questions with offers | target p95 ≤ 50 ms |")
        print("|---|---|---|---|---|")
        from knowledge.catalog.embedding import offers_statistics_refresh

        vectors = give_vectors(bot)
        stale = meaning_rows(bot, args.questions // 2, " — before the task's ANALYZE")
        started = time.perf_counter()
        offers_statistics_refresh()  # how the embedding task ends a pass that wrote vectors
        analyze_ms = (time.perf_counter() - started) * 1000
        # Right after the pass: no VACUUM, the old row versions still there; meaning first,
        # before the entries bot is made and dropped.
        meaning = meaning_rows(bot, args.questions // 2, " — right after the pass")
        for line in search_rows(bot, args.questions, when=" — right after the pass"):
            print(line)
        for line in meaning + stale:
            print(line)
        vacuum()
        for line in search_rows(bot, args.questions, baseline=False, when=" — after VACUUM ANALYZE"):
            print(line)
        for line in meaning_rows(bot, args.questions // 2, " — after VACUUM ANALYZE")[:1]:
            print(line)
        print(f"\n{vectors} offers carried random vectors during the searches; the task's ANALYZE took "
              f"{analyze_ms:.0f} ms. Load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}.")
    finally:
        CatalogOffer.objects.filter(bot=bot).delete()
        common.drop_bot(SLUG)
        for path in (first, second):
            path.unlink(missing_ok=True)
        second.parent.rmdir()
        folder.rmdir()


if __name__ == "__main__":
    main()
