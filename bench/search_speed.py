"""Search speed at 1k, 10k and 100k entries: HNSW against exact vector search (latency and
recall@10), and the whole hybrid search, query embedding excluded.

    python bench/search_speed.py [--sizes 1000 10000 100000] [--queries 200] [--keep]

Synthetic but real-looking data, in the bench database: texts are real Russian passages (xquad-ru
and the crawled demo / VK Cloud chunks when the quality bench has run) re-cut into new
chunks; vectors are the real e5 vectors of the originals plus Gaussian noise (cosine ~0.9 to the
original), normalised. Good for speed and recall, meaningless for quality. Rows go in with COPY,
the model's partial HNSW index (as in migration 0002) is built once after the load, and the
bench bots are deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
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
    from knowledge.indexing import passage_text
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


def drop_hnsw() -> None:
    """Loading 100k rows into a live HNSW index costs minutes; building it afterwards, seconds."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS entry_hnsw_e5_small")


def rebuild_hnsw() -> float:
    """Build the model's partial HNSW index once, after the load, with the migrations' statement."""
    import importlib

    from django.db import connection

    migration = importlib.import_module("knowledge.migrations.0005_hnsw_build_quality")
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(migration.hnsw_index(MODEL, DIM))
        cursor.execute("ANALYZE knowledge_entry")
    return time.perf_counter() - started


def vector_top(bot_id: int, vector: np.ndarray, *, exact: bool, ef: int, k: int = 20) -> tuple[list[int], float]:
    from django.db import connection, transaction

    from knowledge.search import _vector_literal, vector_candidates_sql

    settings = "SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;" if exact else (
        f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order;"
    )
    params: dict[str, int | str] = {"bot": bot_id, "vec": _vector_literal(vector), "n_vector": k}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings)
        started = time.perf_counter()
        cursor.execute(vector_candidates_sql(MODEL), params)
        ids = [row[0] for row in cursor.fetchall()]
        elapsed = (time.perf_counter() - started) * 1000
    return ids, elapsed


def vector_rows(size: int, bot_id: int, vectors: list[np.ndarray]) -> list[list[Any]]:
    from knowledge.evaluation import percentile
    from knowledge.search import EF_SEARCH

    exact_ids, exact_ms = [], []
    for vector in vectors:
        ids, ms = vector_top(bot_id, vector, exact=True, ef=0)
        exact_ids.append(set(ids[:10]))
        exact_ms.append(ms)
    rows = [[size, "vector top-20, exact scan", percentile(exact_ms, 50), percentile(exact_ms, 95), 1.0]]
    for ef in sorted({40, EF_SEARCH, 200}):
        times, recall = [], []
        for vector, truth in zip(vectors, exact_ids, strict=True):
            ids, ms = vector_top(bot_id, vector, exact=False, ef=ef)
            times.append(ms)
            recall.append(len(set(ids[:10]) & truth) / max(1, len(truth)))
        label = f"vector top-20, HNSW ef_search={ef}" + (" (used)" if ef == EF_SEARCH else "")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the largest bench bot afterwards")
    args = parser.parse_args()
    common.setup_django()
    from knowledge.indexing import lexicon_refresh

    sources = source_passages()
    cases = common.read_jsonl(common.XQUAD / "cases.jsonl")[:: max(1, 1190 // args.queries)][: args.queries]
    questions = [c["question"] for c in cases]
    query_vectors = common.embed_queries(questions, MODEL)
    vectors = [query_vectors[q] for q in questions]
    rows: list[list[Any]] = []
    setup: list[list[Any]] = []
    for size in args.sizes:  # one size at a time: the index holds that bot only, as for a lone tenant
        bot = common.bench_bot(f"bench-speed-{size}", fresh=True)
        drop_hnsw()
        try:
            started = time.perf_counter()
            copy_entries(bot.pk, synthetic_rows(sources, size, seed=size))
            setup.append([size, "COPY rows (+ stored tsvector)", time.perf_counter() - started])
        finally:  # the bench database gets its index back even when the load fails
            setup.append([size, "build the HNSW index", rebuild_hnsw()])
        started = time.perf_counter()
        lexicon_refresh(bot_id=bot.pk)
        setup.append([size, "lexicon refresh", time.perf_counter() - started])
        rows += vector_rows(size, bot.pk, vectors)
        rows += hybrid_rows(size, bot, questions, vectors)
        if not (args.keep and size == args.sizes[-1]):
            common.drop_bot(bot.slug)
    print(f"# Search speed — {common.machine()}; {len(questions)} queries, query embedding excluded\n")
    print(common.table(["entries", "what", "p50 ms", "p95 ms", "recall@10 vs exact"], rows))
    print("\n## Set-up\n")
    print(common.table(["entries", "step", "seconds"], setup))


if __name__ == "__main__":
    main()
