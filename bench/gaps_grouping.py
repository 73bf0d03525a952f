"""Gaps grouping quality: unanswered questions from 8 topics x 4 wordings, grouped as feedback/grouping.py
does (in the order asked; 50 random orders per set).

    python bench/gaps_grouping.py

Sets: bench/data/gap_topics.jsonl (16 shop topics a bot typically lacks, ours: a calibration half
and a test half of 8 topics each) and MASSIVE ru-RU (../shared/eval-data/massive-ru-autointent/:
8 intents from 8 different scenarios, 4 utterances each, 50 draws). Target: every topic with
>= 0.9 of its questions in one group (with 4 wordings: all four), and no group mixing two topics.
Baseline in the same run: stems only (seed 004's method) beside stems + meaning at several
thresholds; and the ceiling any threshold on these vectors can reach: how often a question's
nearest other question (by cosine) is of its own topic.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TOPICS = common.REPO / "bench" / "data" / "gap_topics.jsonl"
MASSIVE = common.EVAL_DATA / "massive-ru-autointent" / "ru_massive.jsonl"
ORDERS = 50


def shop_sets() -> dict[str, list[tuple[str, str]]]:
    rows = common.read_jsonl(TOPICS)
    return {name: [(r["topic"], r["question"]) for r in rows if r["set"] == name] for name in ("calibration", "test")}


def massive_draws(rng: random.Random) -> list[list[tuple[str, str]]]:
    by_intent: dict[str, list[str]] = {}
    for row in common.read_jsonl(MASSIVE):
        by_intent.setdefault(row["intent"], []).append(row["utt"])
    scenarios: dict[str, list[str]] = {}
    for intent in by_intent:
        scenarios.setdefault(intent.split("_")[0], []).append(intent)
    draws = []
    for _ in range(ORDERS):
        intents = [rng.choice(scenarios[s]) for s in rng.sample(sorted(scenarios), 8)]
        draws.append([(i, u) for i in intents for u in rng.sample(by_intent[i], 4)])
    return draws


def score(
    runs: list[list[tuple[str, str]]], vectors: dict[str, Any], stem_join: float, vector_join: float
) -> tuple[float, float, float]:
    """(share of topics with >= 0.9 of its questions in one group, mean largest share, mixed groups per run)."""
    from feedback import grouping

    whole, shares, mixed = 0, [], 0
    for run in runs:
        labels = grouping.group([(grouping.stems(q), vectors[q]) for _t, q in run],
                                stem_join=stem_join, vector_join=vector_join)
        groups: dict[int, set[str]] = {}
        for (topic, _q), label in zip(run, labels, strict=True):
            groups.setdefault(label, set()).add(topic)
        mixed += sum(len(g) > 1 for g in groups.values())
        for topic in {t for t, _q in run}:
            counts: dict[int, int] = {}
            for (t, _q), label in zip(run, labels, strict=True):
                if t == topic:
                    counts[label] = counts.get(label, 0) + 1
            share = max(counts.values()) / sum(counts.values())
            shares.append(share)
            whole += share >= 0.9
    return whole / len(shares), sum(shares) / len(shares), mixed / len(runs)


def nearest_same_topic(questions: list[tuple[str, str]], vectors: dict[str, Any]) -> float:
    import numpy as np

    matrix = np.array([vectors[q] / np.linalg.norm(vectors[q]) for _t, q in questions])
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -9)
    nearest = sims.argmax(axis=1)
    return float(np.mean([questions[i][0] == questions[j][0] for i, j in enumerate(nearest)]))


def main() -> None:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
    import django

    django.setup()
    from feedback.grouping import STEM_JOIN, VECTOR_JOIN
    from knowledge.embeddings import get_embedder

    rng = random.Random(11)
    sets = shop_sets()
    runs = {"shop, calibration": [], "shop, test": [], "MASSIVE ru-RU": massive_draws(rng)}
    for label, name in (("shop, calibration", "calibration"), ("shop, test", "test")):
        for _ in range(ORDERS):
            order = list(sets[name])
            rng.shuffle(order)
            runs[label].append(order)
    embedder = get_embedder()
    texts = {q for group in runs.values() for run in group for _t, q in run}
    vectors = {text: embedder.query(text) for text in texts}
    rows = []
    settings = [("stems only (baseline)", STEM_JOIN, 2.0)] + [
        (f"stems + meaning, cosine >= {v}", STEM_JOIN, v) for v in (0.84, 0.86, 0.88, VECTOR_JOIN, 0.92)
    ]
    for label, stem_join, vector_join in settings:
        for name, group in runs.items():
            whole, mean_share, mixed = score(group, vectors, stem_join, vector_join)
            chosen = " (shipped)" if vector_join == VECTOR_JOIN else ""
            rows.append([label + chosen, name, f"{whole:.3f}", f"{mean_share:.3f}", f"{mixed:.2f}"])
    ceiling = [[name, f"{nearest_same_topic(group[0], vectors):.3f}"] for name, group in runs.items()]
    print(f"# Gaps grouping ({embedder.key}) — {common.machine()}\n")
    print(common.table(["grouping", "set", "topics with >= 0.9 in one group", "mean largest share",
                        "mixed groups per run"], rows))
    print("\nCeiling: a question's nearest other question (cosine) is of its own topic\n")
    print(common.table(["set", "share"], ceiling))


if __name__ == "__main__":
    main()
