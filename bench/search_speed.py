"""Search speed at 1k, 10k and 100k entries: HNSW against exact vector search (latency and
recall@10), and the whole hybrid search, query embedding excluded.

    python bench/search_speed.py [--sizes 1000 10000 100000] [--queries 200] [--keep | --reuse]

Synthetic but real-looking data, in the bench database: texts are real Russian passages (xquad-ru
and the crawled demo / VK Cloud chunks when the quality bench has run) re-cut into new
chunks; vectors are the real e5 vectors of the originals plus Gaussian noise (cosine ~0.9 to the
original), normalised. Good for speed and recall, meaningless for quality.

Every size is one bot, and all of them sit in the model's one partial HNSW index together, as
tenants do in production: the 1k and 10k bots are small tenants beside a 100k one. Rows go in
with COPY while the index is dropped, and the index (as in migration 0005) is built once after
the load. The bench bots are deleted at the end unless --keep; --reuse measures the bots an
earlier --keep run left (a size whose bot holds the right number of rows is not loaded again),
which saves the ~150 s COPY and ~100 s index build of 100k rows while iterating.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

MODEL = "e5-small"
DIM = 384
NOISE = 0.018  # per-dimension sigma: cosine to the original vector ~0.9 at 384 dimensions


def source_passages() -> list[tuple[str, str, np.ndarray]]:
    """(title, text, vector) of every real passage with a cached e5 vector."""
    from knowledge.drafts import passage_text
    from knowledge.models import Entry

    cache = common.EmbeddingCache(MODEL)
    out = []
    for row in common.read_jsonl(common.XQUAD / "passages.jsonl"):
        vector = cache.get(f"{row['title']}\n{row['text']}")
        if vector is not None:
            out.append((row["title"], row["text"], vector))
    for entry in Entry.objects.filter(bot__slug__startswith="bench-", bot__slug__endswith=MODEL, active=True):
        vector = cache.get(passage_text(entry))
        if vector is not None and not entry.bot.slug.startswith("bench-speed"):
            out.append((entry.title, entry.text, vector))
    if not out:
        raise SystemExit("No cached e5 vectors: run bench/retrieval_quality.py first.")
    return out


def synthetic_rows(sources: list[tuple[str, str, np.ndarray]], count: int, seed: int) -> list[tuple[str, str, str]]:
    """`count` (title, text, vector literal): a source passage's sentences re-cut with one sentence
    of a random other passage, and its vector moved towards that passage's vector plus noise, so
    the 100k points spread between the real ones instead of piling up in tight clusters of copies
    (which would make 'recall@10' a lottery among near-ties)."""
    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        title, text, vector = sources[i % len(sources)]
        _other_title, other_text, other_vector = sources[rng.randrange(len(sources))]
        sentences = text.split(". ")
        rng.shuffle(sentences)
        mixed = ". ".join(sentences[: max(1, len(sentences) - 1)]) + ". " + other_text.split(". ")[0]
        share = rng.uniform(0.0, 0.5)
        moved = (1 - share) * vector + share * other_vector + noise.normal(0, NOISE, DIM).astype(np.float32)
        moved /= np.linalg.norm(moved)
        rows.append((f"{title} ({i})", mixed, "[" + ",".join(f"{x:.5f}" for x in moved) + "]"))
    return rows


def copy_entries(bot_id: int, rows: list[tuple[str, str, str]]) -> None:
    from django.db import connection
    from django.utils import timezone

    now = timezone.now()
    columns = (
        "bot_id, kind, key, title, heading_path, text, url, weight, review_needed, active, content_hash, "
        "embedding, embedding_model, created_at, updated_at"
    )
    connection.ensure_connection()
    raw = connection.connection
    assert raw is not None
    with raw.cursor() as cursor, cursor.copy(f"COPY knowledge_entry ({columns}) FROM STDIN") as copy:
        for i, (title, text, vector) in enumerate(rows):
            copy.write_row(
                (bot_id, "chunk", f"s{i}", title, "", text, f"/speed/{i}/", 0.5, False, True, "", vector, MODEL,
                 now, now)
            )
    raw.commit()


# The full-precision index migrations 0002/0005 built, kept beside the used one as the baseline
# (`--baseline`): same predicate, its own cast, so each query picks its own index.
FULL_INDEX = "bench_hnsw_e5_small_full"


def drop_hnsw() -> None:
    """Loading 100k rows into a live HNSW index costs minutes; building it afterwards, seconds."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS entry_hnsw_e5_small; DROP INDEX IF EXISTS {FULL_INDEX}")


def rebuild_hnsw() -> float:
    """Build the model's partial HNSW index once, after the load, with the migrations' statement."""
    import importlib

    from django.db import connection

    migration = importlib.import_module("knowledge.migrations.0006_hnsw_half_precision")
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(migration.hnsw_index(MODEL, DIM))
        cursor.execute("ANALYZE knowledge_entry")
    return time.perf_counter() - started


def build_full_index() -> float:
    """The baseline index, built only when missing (it survives --keep like the bots)."""
    import importlib

    from django.db import connection

    migration = importlib.import_module("knowledge.migrations.0006_hnsw_half_precision")
    statement = migration.hnsw_index(MODEL, DIM, half=False).split("; ", 1)[1]
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(statement.replace("entry_hnsw_e5_small", f"IF NOT EXISTS {FULL_INDEX}", 1))
    return time.perf_counter() - started


def drop_full_index() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {FULL_INDEX}")


def vector_sql(mode: str) -> str:
    """'used': the search's own vector retriever; 'full': the same over the full-precision
    baseline index; 'exact': full-precision distances of every row of the bot (the truth)."""
    from knowledge.search import _distance, vector_candidates_sql

    if mode == "used":
        return vector_candidates_sql(MODEL)
    order = _distance(MODEL) if mode == "full" else f"{_distance(MODEL)} + 0"  # + 0: no index matches
    return (
        f"SELECT e.id FROM knowledge_entry e WHERE e.bot_id = %(bot)s AND e.active "  # noqa: S608
        f"AND e.embedding_model = '{MODEL}' ORDER BY {order} LIMIT %(n_vector)s"
    )


def vector_top(bot_id: int, vector: np.ndarray, *, mode: str, ef: int, k: int = 20) -> tuple[list[int], float]:
    from django.db import connection, transaction

    from knowledge.search import _vector_literal

    settings = "SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;" if mode == "exact" else (
        f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL jit = off;"
    )
    params: dict[str, int | str] = {"bot": bot_id, "vec": _vector_literal(vector), "n_vector": k}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings)
        started = time.perf_counter()
        cursor.execute(vector_sql(mode), params)
        ids = [row[0] for row in cursor.fetchall()]
        elapsed = (time.perf_counter() - started) * 1000
    return ids, elapsed


def vector_rows(size: int, bot_id: int, vectors: list[np.ndarray], *, baseline: bool) -> list[list[Any]]:
    from knowledge.evaluation import percentile
    from knowledge.search import EF_SEARCH

    exact_ids, exact_ms = [], []
    for vector in vectors:
        ids, ms = vector_top(bot_id, vector, mode="exact", ef=0)
        exact_ids.append(set(ids[:10]))
        exact_ms.append(ms)
    rows = [[size, "vector top-20, exact scan (baseline)", percentile(exact_ms, 50), percentile(exact_ms, 95), 1.0]]
    runs = [("full", EF_SEARCH)] if baseline else []
    runs += [("used", ef) for ef in sorted({40, EF_SEARCH})]
    for mode, ef in runs:
        times, recall = [], []
        for vector, truth in zip(vectors, exact_ids, strict=True):
            ids, ms = vector_top(bot_id, vector, mode=mode, ef=ef)
            times.append(ms)
            recall.append(len(set(ids[:10]) & truth) / max(1, len(truth)))
        label = f"vector top-20, HNSW {'full precision (baseline)' if mode == 'full' else 'halfvec'} ef_search={ef}"
        label += " (used)" if mode == "used" and ef == EF_SEARCH else ""
        rows.append([size, label, percentile(times, 50), percentile(times, 95), float(np.mean(recall))])
    return rows


def hybrid_rows(size: int, bot: Any, questions: list[str], vectors: list[np.ndarray]) -> list[list[Any]]:
    from knowledge.evaluation import percentile
    from knowledge.search import search_entries

    search_entries(bot, questions[0], query_vector=vectors[0], model_key=MODEL)
    times = []
    for question, vector in zip(questions, vectors, strict=True):
        started = time.perf_counter()
        search_entries(bot, question, k=5, query_vector=vector, model_key=MODEL)
        times.append((time.perf_counter() - started) * 1000)
    return [[size, "hybrid search_entries (k=5)", percentile(times, 50), percentile(times, 95), ""]]


def load_bots(sizes: list[int], *, reuse: bool) -> tuple[dict[int, Any], list[list[Any]]]:
    """One bench bot per size, loaded unless --reuse finds it complete; the HNSW index is rebuilt
    once if anything was loaded. Returns the bots and the set-up timings."""
    from knowledge.lexicon import lexicon_refresh
    from knowledge.models import Entry

    bots: dict[int, Any] = {}
    setup: list[list[Any]] = []
    missing: list[int] = []
    for size in sizes:
        bot = common.bench_bot(f"bench-speed-{size}")
        if reuse and Entry.objects.filter(bot=bot, active=True).count() == size:
            bots[size] = bot
        else:
            missing.append(size)
    if not missing:
        return bots, setup
    sources = source_passages()
    drop_hnsw()
    try:
        for size in missing:
            bot = bots[size] = common.bench_bot(f"bench-speed-{size}", fresh=True)
            started = time.perf_counter()
            copy_entries(bot.pk, synthetic_rows(sources, size, seed=size))
            setup.append([size, "COPY rows (+ stored tsvector)", time.perf_counter() - started])
    finally:  # the bench database gets its index back even when the load fails
        setup.append([sum(missing), "build the HNSW index (every row of the model)", rebuild_hnsw()])
    for size in missing:
        started = time.perf_counter()
        lexicon_refresh(bot_id=bots[size].pk)
        setup.append([size, "lexicon refresh", time.perf_counter() - started])
    return bots, setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench bots afterwards")
    parser.add_argument("--reuse", action="store_true", help="reuse the bots of an earlier --keep run (implies --keep)")
    parser.add_argument(
        "--baseline", action="store_true",
        help="also time the full-precision HNSW index of migrations 0002/0005 (built once, ~75 s at 111k rows)",
    )
    args = parser.parse_args()
    common.setup_django()

    cases = common.read_jsonl(common.XQUAD / "cases.jsonl")[:: max(1, 1190 // args.queries)][: args.queries]
    questions = [c["question"] for c in cases]
    query_vectors = common.embed_queries(questions, MODEL)
    vectors = [query_vectors[q] for q in questions]
    bots, setup = load_bots(args.sizes, reuse=args.reuse)
    if args.baseline:
        setup.append([sum(args.sizes), "full-precision baseline index (0 if kept)", build_full_index()])
    load_before = os.getloadavg()
    rows: list[list[Any]] = []
    for size in args.sizes:
        rows += vector_rows(size, bots[size].pk, vectors, baseline=args.baseline)
        rows += hybrid_rows(size, bots[size], questions, vectors)
    load_after = os.getloadavg()
    if not (args.keep or args.reuse):
        for bot in bots.values():
            common.drop_bot(bot.slug)
        drop_full_index()
    print(f"# Search speed — {common.machine()}; {len(questions)} queries, query embedding excluded\n")
    print(f"Load average (1/5/15 min) before the timings: {_load(load_before)}; after: {_load(load_after)}.\n")
    print(common.table(["entries", "what", "p50 ms", "p95 ms", "recall@10 vs exact"], rows))
    if setup:
        print("\n## Set-up\n")
        print(common.table(["entries", "step", "seconds"], setup))


def _load(averages: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in averages)


if __name__ == "__main__":
    main()
