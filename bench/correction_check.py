"""What the paraphrase rule of correction memory costs a search (knowledge/paraphrase.py).

    python bench/correction_check.py [--rounds 5]

The VK Cloud copy of bench/learning_curve.py (the whole crawled site), its 129 other FAQ questions
and 40 paraphrases asked in turn, query vectors computed once beforehand (the embedding is the same
in every row). Rows, measured in the same run, rounds interleaved: the bot with no correction (the
baseline: the statement evaluates no wording subquery), the same bot after 20 corrections under the
paraphrase rule, the same without the retriever of corrections by their wordings, and under the
old rule (every correction wins; the statement is the same, only the Python verdict is skipped).
Also: statements per search on the bot with no correction, and one verdict (`paraphrase.judge`)
alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def timings(bot: Any, questions: list[str], vectors: dict[str, Any]) -> list[float]:
    from knowledge.search import search_entries

    out = []
    for question in questions:
        started = time.perf_counter()
        search_entries(bot, question, query_vector=vectors[question])
        out.append((time.perf_counter() - started) * 1000)
    return out


def statements_per_search(bot: Any, question: str, vector: Any) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge.search import search_entries

    connection.queries_log.clear()  # a full log (9,000 under DEBUG) would count 0 new ones
    with CaptureQueriesContext(connection) as queries:
        search_entries(bot, question, query_vector=vector)
    return len(queries)


def judge_cost(words: Any, wordings: Any, question: str, repeat: int = 2000) -> float:
    from knowledge import paraphrase

    paraphrase.judge(question, words.lexemes, words.entries_total, wordings)  # dictionaries loaded
    started = time.perf_counter()
    for _ in range(repeat):
        paraphrase.judge(question, words.lexemes, words.entries_total, wordings)
    return (time.perf_counter() - started) * 1000 / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    common.setup_django()
    from bench import learning_curve as lc
    from knowledge.embeddings import get_embedder
    from knowledge.search import fetch_signals, search_entries
    from review.services import correction_apply

    chosen, others = lc.load_data()
    questions = [row["question"] for row in others] + [row["paraphrase"] for row in chosen]
    embedder = get_embedder()
    vectors = {q: embedder.query(" ".join(q.split())) for q in questions}
    bare = lc.copy_bot("bench-check-bare", without_faq=False)
    fixed = lc.copy_bot("bench-check-fixed", without_faq=False)
    for row in chosen[:20]:
        top = search_entries(fixed, row["question"], k=1)
        correction_apply(bot=fixed, question=row["question"], answer=row["answer"],
                         culprit_ids=[r.entry_id for r in top if r.score >= fixed.match_threshold])
    samples: dict[str, list[float]] = {"none": [], "rule": [], "entries": [], "old": []}
    for _ in range(args.rounds):
        samples["none"] += timings(bare, questions, vectors)
        samples["rule"] += timings(fixed, questions, vectors)
        with lc.no_wording_candidates():
            samples["entries"] += timings(fixed, questions, vectors)
        with lc.every_correction_wins():
            samples["old"] += timings(fixed, questions, vectors)
    base = statistics.median(samples["none"])
    rows = []
    for key, label in (("none", "no correction (baseline)"), ("rule", "20 corrections, paraphrase rule"),
                       ("entries", "20 corrections, paraphrase rule, no candidates by wordings"),
                       ("old", "20 corrections, every correction wins (old rule)")):
        values = sorted(samples[key])
        p50, p95 = statistics.median(values), values[int(0.95 * (len(values) - 1))]
        rows.append([label, f"{p50:.2f}", f"{p95:.2f}", f"{p50 - base:+.2f}", f"{p50 / base:.3f}"])
    print(f"# Correction check cost — {common.machine()}\n")
    print(common.table(["bot", "search p50, ms", "p95, ms", "p50 − baseline, ms", "ratio"], rows))
    question = chosen[0]["paraphrase"]
    signals, words = fetch_signals(fixed.pk, question, vectors[question], model_key=embedder.key)
    with_wordings = next((s for s in signals if s.wordings), None)
    print()
    print(f"statements per search, no correction: {statements_per_search(bare, question, vectors[question])}")
    print(f"statements per search, 20 corrections: {statements_per_search(fixed, question, vectors[question])}")
    if with_wordings is not None and words is not None:
        print(f"one verdict (paraphrase.judge) alone: {judge_cost(words, with_wordings.wordings, question):.3f} ms")
    for slug in ("bench-check-bare", "bench-check-fixed"):
        lc.drop(slug)


if __name__ == "__main__":
    main()
