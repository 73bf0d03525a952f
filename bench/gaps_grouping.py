"""Gaps grouping quality: unanswered questions from 8 topics x 4 wordings, grouped as feedback/grouping.py
does (in the order asked; 50 random orders per set), beside the variants tried.

    python bench/gaps_grouping.py                # the table (about a minute, one core)
    python bench/gaps_grouping.py --background   # rewrite feedback/data/question_means.json first

Sets: bench/data/gap_topics.jsonl (16 shop topics a bot typically lacks, ours: a calibration half
and a test half of 8 topics each) and MASSIVE ru-RU (../shared/eval-data/massive-ru-autointent/:
8 intents from 8 different scenarios, 4 utterances each, 50 draws). Target: every topic with
>= 0.9 of its questions in one group (with 4 wordings: all four), and no group mixing two topics.
Thresholds are chosen on the calibration half and MASSIVE; the test half only confirms.

Rows, all from the same vectors in the same run: stems only (seed 004's method, the baseline); raw
cosine (the setting before centring); centred cosine (the shipped one and its neighbours); pymorphy3
lemmas instead of Snowball stems; one combined score instead of either-or; regrouping all questions
at once with average linkage (scipy) instead of the online assignment. And the ceiling any threshold
on these vectors can reach: how often a question's nearest other question is of its own topic.

The background mean (--background): e5-small query vectors of the XQuAD-ru and VK Cloud FAQ
questions (1,340 Russian questions; neither set is graded here).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TOPICS = common.REPO / "bench" / "data" / "gap_topics.jsonl"
MASSIVE = common.EVAL_DATA / "massive-ru-autointent" / "ru_massive.jsonl"
ORDERS = 50
Run = list[tuple[str, str]]
Labeller = Callable[[Run], list[int]]


def shop_sets() -> dict[str, list[tuple[str, str]]]:
    rows = common.read_jsonl(TOPICS)
    return {name: [(r["topic"], r["question"]) for r in rows if r["set"] == name] for name in ("calibration", "test")}


def massive_draws(rng: random.Random) -> list[Run]:
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


def background_questions() -> list[str]:
    xquad = [r["question"] for r in common.read_jsonl(common.XQUAD / "cases.jsonl")]
    faq = [r["question"] for r in common.read_jsonl(common.VKCLOUD_FAQ)]
    return sorted(set(xquad + faq))


def write_background(embedder: Any) -> None:
    import numpy as np

    from feedback import grouping

    texts = background_questions()
    units = np.array([grouping.unit_vector(embedder.query(t)) for t in texts])
    data = json.loads(grouping.MEANS_FILE.read_text(encoding="utf-8")) if grouping.MEANS_FILE.exists() else {}
    data[embedder.key] = {
        "revision": embedder.revision, "questions": len(texts),
        "source": "XQuAD-ru cases.jsonl + VK Cloud FAQ faq_pairs.jsonl questions (CC BY-SA 4.0)",
        "mean": [round(float(x), 6) for x in units.mean(axis=0)],
    }
    grouping.MEANS_FILE.parent.mkdir(exist_ok=True)
    grouping.MEANS_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {grouping.MEANS_FILE} ({embedder.key}, {len(texts)} questions)")


def score(runs: list[Run], labeller: Labeller) -> tuple[float, float, float]:
    """(share of topics with >= 0.9 of its questions in one group, mean largest share, mixed groups per run)."""
    whole, shares, mixed = 0, [], 0
    for run in runs:
        labels = labeller(run)
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


class Variants:
    """Labellers for each way of grouping tried, over one set of model vectors."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        import pymorphy3

        from feedback import grouping

        self.vectors, self.g = vectors, grouping
        self.centred = grouping.meaning_for("e5-small")
        self._morph = pymorphy3.MorphAnalyzer()
        self._lemma: dict[str, str] = {}

    def lemmas(self, text: str) -> frozenset[str]:
        """Content-word lemmas (pymorphy3's first parse), the stop words of friction.stems left out."""
        from assistant.chat import friction

        out = set()
        for word in friction._WORD.findall(friction._yo(text).lower()):
            if word in friction._STOP:
                continue
            if word not in self._lemma:
                self._lemma[word] = self._morph.parse(word)[0].normal_form.replace("ё", "е")
            if self._lemma[word] not in friction._STOP:
                out.add(self._lemma[word])
        return frozenset(out)

    def online(self, meaning: Any, join: float, words: str = "stems") -> Labeller:
        words_of = self.g.stems if words == "stems" else self.lemmas
        return lambda run: self.g.group([(words_of(q), self.vectors[q]) for _t, q in run], meaning=meaning,
                                        vector_join=join)

    def combined(self, weight: float, join: float) -> Labeller:
        """One score: weight x best lemma Jaccard with a member + (1 - weight) x centred cosine with
        the centroid, joining at `join` (lemma Jaccard >= 0.5 still joins on its own)."""
        import numpy as np

        def label(run: Run) -> list[int]:
            sums: list[Any] = []
            members: list[list[frozenset[str]]] = []
            labels = []
            for _t, q in run:
                words, vector = self.lemmas(q), self.centred.prepare(self.vectors[q])
                best, best_score = None, -9.0
                for k, total in enumerate(sums):
                    by_words = max(self.g.jaccard(words, m) for m in members[k])
                    cosine = float(vector @ (total / np.linalg.norm(total)))
                    value = max(weight * by_words + (1 - weight) * cosine, join if by_words >= 0.5 else -9.0)
                    if value >= join and value > best_score:
                        best, best_score = k, value
                if best is None:
                    sums.append(vector.copy())
                    members.append([words])
                    labels.append(len(sums) - 1)
                else:
                    sums[best] = sums[best] + vector
                    members[best].append(words)
                    labels.append(best)
            return labels

        return label

    def regroup(self, join: float, own_mean: bool = False) -> Labeller:
        """All questions at once: average linkage on centred cosine (stem Jaccard >= 0.5 counts as
        similarity 1), cut at `join`; own_mean centres on the questions' own mean (the bot's)."""
        import numpy as np
        from scipy.cluster.hierarchy import fcluster, linkage
        from scipy.spatial.distance import squareform

        def label(run: Run) -> list[int]:
            units = np.array([self.g.unit_vector(self.vectors[q]) for _t, q in run])
            mean = units.mean(axis=0) if own_mean else self.centred.mean
            prepared = np.array([self.g.unit_vector(u - mean) for u in units])
            sims = prepared @ prepared.T
            words = [self.g.stems(q) for _t, q in run]
            for i, a in enumerate(words):
                for j, b in enumerate(words):
                    if i != j and self.g.jaccard(a, b) >= 0.5:
                        sims[i, j] = 1.0
            distances = np.clip(1 - (sims + sims.T) / 2, 0, None)
            np.fill_diagonal(distances, 0)
            tree = linkage(squareform(distances, checks=False), method="average")
            return [int(x) for x in fcluster(tree, 1 - join, criterion="distance")]

        return label


def nearest_same_topic(questions: Run, vectors: dict[str, Any], mean: Any = None) -> float:
    import numpy as np

    from feedback.grouping import unit_vector

    matrix = np.array([unit_vector(vectors[q]) for _t, q in questions])
    if mean is not None:
        matrix = np.array([unit_vector(row - mean) for row in matrix])
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -9)
    nearest = sims.argmax(axis=1)
    return float(np.mean([questions[i][0] == questions[j][0] for i, j in enumerate(nearest)]))


def main() -> None:
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--background", action="store_true", help="recompute feedback/data/question_means.json")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
    import django

    django.setup()
    from feedback import grouping
    from knowledge.embeddings import get_embedder

    embedder = get_embedder()
    if args.background:
        write_background(embedder)
        grouping._means.cache_clear()
    rng = random.Random(11)
    sets = shop_sets()
    runs: dict[str, list[Run]] = {"shop, calibration": [], "shop, test": [], "MASSIVE ru-RU": massive_draws(rng)}
    for label, name in (("shop, calibration", "calibration"), ("shop, test", "test")):
        for _ in range(ORDERS):
            order = list(sets[name])
            rng.shuffle(order)
            runs[label].append(order)
    texts = {q for group in runs.values() for run in group for _t, q in run}
    vectors = {text: embedder.query(text) for text in texts}
    v = Variants(vectors)
    shipped = grouping.meaning_for(embedder.key)
    variants: list[tuple[str, Labeller]] = [
        ("stems only (baseline)", v.online(grouping.RAW, 2.0)),
        ("stems + raw cosine >= 0.84", v.online(grouping.RAW, 0.84)),
        ("stems + raw cosine >= 0.90 (before)", v.online(grouping.RAW, 0.90)),
        ("stems + raw cosine >= 0.92", v.online(grouping.RAW, 0.92)),
        ("stems + centred cosine >= 0.50", v.online(shipped, 0.50)),
        ("stems + centred cosine >= 0.60", v.online(shipped, 0.60)),
        (f"stems + centred cosine >= {grouping.VECTOR_JOIN} (shipped)", v.online(shipped, grouping.VECTOR_JOIN)),
        ("stems + centred cosine >= 0.70", v.online(shipped, 0.70)),
        ("lemmas only", v.online(grouping.RAW, 2.0, words="lemmas")),
        ("lemmas + centred cosine >= 0.65", v.online(shipped, 0.65, words="lemmas")),
        ("combined 0.3 x lemma Jaccard + 0.7 x centred cosine >= 0.50", v.combined(0.3, 0.50)),
        ("combined 0.3 x lemma Jaccard + 0.7 x centred cosine >= 0.55", v.combined(0.3, 0.55)),
        ("regroup, average linkage, centred >= 0.30", v.regroup(0.30)),
        ("regroup, average linkage, centred >= 0.40", v.regroup(0.40)),
        ("regroup, average linkage, own-mean centred >= 0.40", v.regroup(0.40, own_mean=True)),
    ]
    rows = []
    for label, labeller in variants:
        for name, group in runs.items():
            whole, mean_share, mixed = score(group, labeller)
            rows.append([label, name, f"{whole:.3f}", f"{mean_share:.3f}", f"{mixed:.2f}"])
    ceiling = [[name, f"{nearest_same_topic(group[0], vectors):.3f}",
                f"{nearest_same_topic(group[0], vectors, shipped.mean):.3f}"] for name, group in runs.items()]
    print(f"# Gaps grouping ({embedder.key}) — {common.machine()}\n")
    print(common.table(["grouping", "set", "topics with >= 0.9 in one group", "mean largest share",
                        "mixed groups per run"], rows))
    print("\nCeiling: a question's nearest other question (cosine) is of its own topic\n")
    print(common.table(["set", "raw", "centred"], ceiling))


if __name__ == "__main__":
    main()
