"""Gaps grouping quality: unanswered questions from 8 topics x 4 wordings, grouped as feedback/grouping.py
does (in the order asked; 50 random orders per set), beside the variants tried.

    python bench/gaps_grouping.py                # the tables (about a minute, one core)
    python bench/gaps_grouping.py --background   # rewrite feedback/data/question_means.json first

Sets: bench/data/gap_topics.jsonl (16 shop topics a bot typically lacks, ours: a calibration half
and a test half of 8 topics each) and MASSIVE ru-RU (../shared/eval-data/massive-ru-autointent/:
8 intents from 8 different scenarios, 4 utterances each, 50 draws). Target: every topic with
>= 0.9 of its questions in one group (with 4 wordings: all four), and no group mixing two topics.
The centred threshold was chosen on the calibration half and MASSIVE (issue 8); everything added
for issue 20 is chosen on the calibration half only, and the test half and MASSIVE confirm.

Table 1, all from the same vectors in the same run: stems only (the shared-stem rule); raw cosine;
centred cosine (the old rule, still shipped, and its neighbours); the issue's rule on top of it (a
question sharing a stem rare in the bot's lexicon with a member joins with a lower meaning floor;
nouns / adjectives only by pymorphy3); pymorphy3 lemmas instead of Snowball stems; one combined
score; regrouping all questions at once with average linkage (scipy). Rows per run is what the
owner reads (8 at best). The bot's lexicon is the demo shop's (`demo_lexicon`: demo/site's
paragraphs as entries), as if the bot had crawled it.

Table 2, «Похоже на одну тему»: after the old rule, the owner goes through the merge suggestions
(grouping.merge_suggestions: rows whose questions' mean centred cosine is >= the threshold) and
merges a pair of one topic or keeps it apart, until none is left. Table 3, learning from merges:
the owner tidies the rows of each topic's first two wordings, then the other two arrive.

And the ceiling any threshold on these vectors can reach: how often a question's nearest other
question is of its own topic.

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


def score(runs: list[Run], labeller: Labeller) -> tuple[float, float, float, float]:
    """(share of topics with >= 0.9 of its questions in one group, mean largest share, mixed groups
    per run, rows per run: what the owner reads, 8 at best)."""
    whole, shares, mixed, rows = 0, [], 0, 0
    for run in runs:
        labels = labeller(run)
        rows += len(set(labels))
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
    return whole / len(shares), sum(shares) / len(shares), mixed / len(runs), rows / len(runs)


def demo_lexicon() -> tuple[dict[str, int], int]:
    """The demo shop's knowledge as a bot's lexicon (knowledge.models.Lexeme): each distinct
    paragraph, list item or cell of demo/site (header, footer and navigation left out) is an entry,
    counted by its Snowball stems (Postgres's 'russian' configuration is the same stemmer)."""
    import html
    import re

    from feedback import grouping

    entries: set[str] = set()
    for page in sorted((common.REPO / "demo" / "site").rglob("index.html")):
        text = re.sub(r"<(script|style|header|footer|nav)[^>]*>.*?</\1>", " ", page.read_text(encoding="utf-8"),
                      flags=re.S)
        for part in re.split(r"</(?:p|li|h\d|td|tr|div)>", text):
            plain = html.unescape(re.sub(r"<[^>]+>", " ", part)).strip()
            if len(plain) > 20:
                entries.add(plain)
    df: dict[str, int] = {}
    for entry in entries:
        for stem in grouping.stems(entry):
            df[stem] = df.get(stem, 0) + 1
    return df, len(entries)


class Variants:
    """Labellers for each way of grouping tried, over one set of model vectors."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        import pymorphy3

        from feedback import grouping

        self.vectors, self.g = vectors, grouping
        self.centred = grouping.meaning_for("e5-small")
        self.lexicon = demo_lexicon()
        self._morph = pymorphy3.MorphAnalyzer()
        self._lemma: dict[str, str] = {}

    def content_stems(self, text: str, parts: frozenset[str]) -> frozenset[str]:
        """Stems of the words whose first pymorphy3 parse is one of `parts` (empty: every word)."""
        from chat import friction

        if not parts:
            return self.g.stems(text)
        out = set()
        for word in friction._WORD.findall(friction._yo(text).lower()):
            if word not in friction._STOP and self._morph.parse(word)[0].tag.POS in parts:
                out.add(friction._stemmer("english" if word.isascii() else "russian").stemWord(word))
        return frozenset(out)

    def rare_words(self, share: float, floor: float, parts: frozenset[str] = frozenset()) -> Labeller:
        """The rule the issue asks for, on top of the shipped one: a question sharing with a member a
        stem rare in the bot's lexicon (in <= `share` of the demo shop's entries, and in fewer than
        max(3, 10 %) of the questions asked so far) joins that topic when its centred cosine with
        the topic is >= `floor`; `parts` keeps only nouns / adjectives as topic words."""
        df, entries = self.lexicon

        def label(run: Run) -> list[int]:
            topics: list[Any] = []
            rare_of: list[list[frozenset[str]]] = []
            seen: dict[str, int] = {}
            labels = []
            for number, (_t, q) in enumerate(run, start=1):
                words, vector = self.g.stems(q), self.centred.prepare(self.vectors[q])
                for w in words:
                    seen[w] = seen.get(w, 0) + 1
                rare = frozenset(w for w in self.content_stems(q, parts)
                                 if df.get(w, 0) <= share * entries and seen.get(w, 0) < max(3, 0.1 * number))
                best, best_score = None, 0.0
                for k, topic in enumerate(topics):
                    by_stems, by_meaning = self.g.similarity(topic, words, vector)
                    shared = any(rare & r for r in rare_of[k]) and by_meaning >= floor
                    if by_stems < self.g.STEM_JOIN and by_meaning < self.centred.join and not shared:
                        continue
                    value = max(by_stems - self.g.STEM_JOIN, by_meaning - self.centred.join) + 1.0 + shared
                    if value > best_score:
                        best, best_score = k, value
                if best is None:
                    topics.append(self.g.Topic(key=None))
                    rare_of.append([])
                    best = len(topics) - 1
                topics[best].add(words, vector)
                rare_of[best].append(rare)
                labels.append(best)
            return labels

        return label

    def owner_session(self, runs: list[Run], mode: str) -> tuple[float, float, float]:
        """The owner tidies the rows of the first two wordings of each topic (splits out what does not
        belong, merges each topic's rows into one), then the other two wordings arrive. Returns
        (share of those that join their topic's tidied row, new rows they open per run, mixed rows
        per run at the end). `mode`: "none" (the owner does nothing; a question counts as joining
        when its row's earlier members are all of its topic); "one centroid" (a merge pools the
        rows' vectors, nothing learned); "one centroid + words" (and the nouns and adjectives the
        merged rows share, less those common in the lexicon, are learned: shipped); "a centroid per
        merged row" (each merged row keeps its own centroid, the best one counts; tried)."""
        import numpy as np

        joined = opened = mixed = total = 0
        df, entries = self.lexicon
        for run in runs:
            position: dict[str, int] = {}
            first: list[tuple[str, str]] = []
            later: list[tuple[str, str]] = []
            for t, q in run:
                position[t] = position.get(t, 0) + 1
                (first if position[t] <= 2 else later).append((t, q))
            prepared = {q: self.centred.prepare(self.vectors[q]) for _t, q in run}
            rows = self.g.group([(self.g.stems(q), self.vectors[q]) for _t, q in first], meaning=self.centred)
            topics: list[Any] = []
            owner: list[str | None] = []  # the topic a tidied row is of (None: a row the bot made)
            members: list[set[str]] = []
            per_row: list[dict[int, Any]] = []  # "a centroid per merged row": row -> sum of vectors
            groups = ({r: [(t, q) for (t, q), x in zip(first, rows, strict=True) if x == r] for r in set(rows)}
                      if mode == "none" else
                      {t: [(tt, q) for tt, q in first if tt == t] for t in sorted({t for t, _q in first})})
            for questions in groups.values():
                topic = self.g.Topic(key=None)
                sums: dict[int, Any] = {}
                for t, q in questions:
                    row = rows[first.index((t, q))]
                    topic.add(self.g.stems(q), prepared[q], facet=row)
                    sums[row] = sums.get(row, 0) + prepared[q]
                if mode == "one centroid + words":
                    naming = frozenset().union(*(self.g.naming_stems(q) for _t, q in questions))
                    words = self.g.merged_stems(topic) & naming
                    topic.learned_stems = frozenset(w for w in words if not self.g.is_common(df.get(w, 0), entries))
                kinds = {t for t, _q in questions}
                topics.append(topic)
                owner.append(next(iter(kinds)) if len(kinds) == 1 else None)
                members.append(kinds)
                per_row.append(sums)
            for t, q in later:
                words, vector = self.g.stems(q), prepared[q]
                if mode == "a centroid per merged row":
                    best, best_score = None, 0.0
                    for k, topic in enumerate(topics):
                        by_stems = max(self.g.jaccard(words, m) for m in topic.member_stems)
                        by_meaning = max(float(vector @ (x / np.linalg.norm(x))) for x in per_row[k].values())
                        if by_stems >= self.g.STEM_JOIN or by_meaning >= self.centred.join:
                            value = max(by_stems - self.g.STEM_JOIN, by_meaning - self.centred.join) + 1.0
                            if value > best_score:
                                best, best_score = k, value
                    index = best
                else:
                    index = self.g.best_topic(topics, words, vector, vector_join=self.centred.join)
                if index is None:
                    topics.append(self.g.Topic(key=None))
                    owner.append(None)
                    members.append(set())
                    per_row.append({})
                    index = len(topics) - 1
                    opened += 1
                topics[index].add(words, vector)
                per_row[index][-1] = per_row[index].get(-1, 0) + vector
                members[index].add(t)
                joined += owner[index] == t
                total += 1
            mixed += sum(len(kinds) > 1 for kinds in members)
        return joined / total, opened / len(runs), mixed / len(runs)

    def suggestions(self, runs: list[Run], join: float) -> tuple[float, float, float, float, float]:
        """The shipped grouping, then the owner goes through «Похоже на одну тему»
        (grouping.merge_suggestions) until none is left: merges a pair when both rows are of one
        topic, keeps it apart otherwise. Returns per run (rows after, merges, suggestions kept apart,
        share of topics with >= 0.9 in one row after, mixed rows after)."""
        after = merges = apart_n = whole = mixed = topics_n = 0.0
        for run in runs:
            labels = self.g.group([(self.g.stems(q), self.vectors[q]) for _t, q in run], meaning=self.centred)
            rows: dict[int, list[tuple[str, str]]] = {}
            for (t, q), label in zip(run, labels, strict=True):
                rows.setdefault(label, []).append((t, q))
            apart: set[frozenset[int]] = set()
            while True:
                vectors = {k: [self.centred.prepare(self.vectors[q]) for _t, q in r] for k, r in rows.items()}
                pairs = self.g.merge_suggestions(vectors, apart, join=join)
                if not pairs:
                    break
                for a, b, _score in pairs:
                    kinds = {t for t, _q in rows[a] + rows[b]}
                    if len(kinds) == 1:
                        rows[a] += rows.pop(b)
                        merges += 1
                    else:
                        apart.add(frozenset((a, b)))
                        apart_n += 1
            after += len(rows)
            mixed += sum(len({t for t, _q in r}) > 1 for r in rows.values())
            for topic in {t for t, _q in run}:
                counts = [sum(t == topic for t, _q in r) for r in rows.values()]
                whole += max(counts) / sum(counts) >= 0.9
                topics_n += 1
        n = len(runs)
        return after / n, merges / n, apart_n / n, whole / topics_n, mixed / n

    def lemmas(self, text: str) -> frozenset[str]:
        """Content-word lemmas (pymorphy3's first parse), the stop words of friction.stems left out."""
        from chat import friction

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
    nouns = frozenset({"NOUN"})
    variants: list[tuple[str, Labeller]] = [
        ("stems only (the shared-stem rule)", v.online(grouping.RAW, 2.0)),
        ("stems + raw cosine >= 0.84", v.online(grouping.RAW, 0.84)),
        ("stems + raw cosine >= 0.90", v.online(grouping.RAW, 0.90)),
        ("stems + raw cosine >= 0.92", v.online(grouping.RAW, 0.92)),
        ("stems + centred cosine >= 0.50", v.online(shipped, 0.50)),
        ("stems + centred cosine >= 0.60", v.online(shipped, 0.60)),
        (f"stems + centred cosine >= {grouping.VECTOR_JOIN} (old rule, shipped)",
         v.online(shipped, grouping.VECTOR_JOIN)),
        ("stems + centred cosine >= 0.70", v.online(shipped, 0.70)),
        ("+ shared rare stem (lexicon <= 0.01, centred >= 0.45)", v.rare_words(0.01, 0.45)),
        ("+ shared rare stem (lexicon <= 0.03, centred >= 0.35)", v.rare_words(0.03, 0.35)),
        ("+ shared rare stem (lexicon <= 0.03, centred >= 0.45)", v.rare_words(0.03, 0.45)),
        ("+ shared rare noun (lexicon <= 0.01, centred >= 0.45)", v.rare_words(0.01, 0.45, nouns)),
        ("+ shared rare noun/adjective (lexicon <= 0.01, centred >= 0.45)",
         v.rare_words(0.01, 0.45, nouns | {"ADJF"})),
        ("+ shared rare noun/adjective (lexicon <= 0.03, centred >= 0.45)",
         v.rare_words(0.03, 0.45, nouns | {"ADJF"})),
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
            whole, mean_share, mixed, per_run = score(group, labeller)
            rows.append([label, name, f"{whole:.3f}", f"{mean_share:.3f}", f"{mixed:.2f}", f"{per_run:.1f}"])
    suggested = []
    for join in (0.30, 0.40, grouping.SUGGEST_JOIN, 0.50, 0.55):
        for name, group in runs.items():
            after, merged, apart, whole, mixed = v.suggestions(group, join)
            label = f">= {join:.2f}" + (" (shipped)" if join == grouping.SUGGEST_JOIN else "")
            suggested.append([label, name, f"{after:.1f}", f"{merged:.1f}", f"{apart:.1f}", f"{whole:.3f}",
                              f"{mixed:.2f}"])
    sessions = []
    for mode in ("none", "one centroid", "a centroid per merged row", "one centroid + words"):
        for name, group in runs.items():
            joined, opened, mixed = v.owner_session(group, mode)
            sessions.append([mode, name, f"{joined:.3f}", f"{opened:.2f}", f"{mixed:.2f}"])
    ceiling = [[name, f"{nearest_same_topic(group[0], vectors):.3f}",
                f"{nearest_same_topic(group[0], vectors, shipped.mean):.3f}"] for name, group in runs.items()]
    print(f"# Gaps grouping ({embedder.key}) — {common.machine()}\n")
    print(common.table(["grouping", "set", "topics with >= 0.9 in one group", "mean largest share",
                        "mixed groups per run", "rows per run"], rows))
    print("\nThe owner goes through «Похоже на одну тему» (merge suggestions) once the 32 questions are grouped\n")
    print(common.table(["suggested at mean centred cosine", "set", "rows after", "merges", "kept apart",
                        "topics with >= 0.9 in one row", "mixed rows"], suggested))
    print("\nThe owner tidies the first two wordings of each topic (split, merge); the other two arrive\n")
    print(common.table(["after the owner's merges", "set", "later wordings in their topic's row",
                        "new rows per run", "mixed rows per run"], sessions))
    print("\nCeiling: a question's nearest other question (cosine) is of its own topic\n")
    print(common.table(["set", "raw", "centred"], ceiling))


if __name__ == "__main__":
    main()
