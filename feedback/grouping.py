"""Grouping questions into topics (seed 004: «похожие склеиваются по основам слов, чтобы десять
вариантов одного вопроса не превращались в десять строк»), plus meaning for paraphrases that share
no words. Pure functions over stems and vectors, so the thresholds can be calibrated on data
(bench/gaps_grouping.py) and tested without a database.

A question joins the topic it is most like when either
- its content-word stems overlap a member's by Jaccard >= STEM_JOIN (Snowball, the chat's own
  `friction.stems`: question words and stop words left out), or
- its centred query vector is at least `Meaning.join` cosine-similar to the topic's centroid
  (to one of its facets' centroids, for a row the owner merged from several: feedback/gaps.py
  `gap_merge`);
otherwise it starts a topic of its own. Comparing with the centroid, not with the nearest member,
keeps a chain of near neighbours from gluing two topics together.

Centring: e5-small's query vectors all lie in a narrow cone (any two Russian questions have cosine
0.75..0.95), so a raw cosine says as much about "both are short Russian questions" as about the
topic. Subtracting the mean vector of many unrelated Russian questions (feedback/data/
question_means.json, made by `bench/gaps_grouping.py --background` from XQuAD-ru and VK Cloud FAQ
questions, none of them in the calibration sets) and renormalising removes that shared part; the
stored vectors stay the model's own (GapQuestion.vector), centring happens when comparing. A model
without a stored mean is compared on raw cosines with the old threshold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np

from assistant.chat.friction import stems as content_stems

STEM_JOIN: Final = 0.5
# Centred cosine with a topic's centroid (models with a background mean): calibrated on the shop
# calibration half and MASSIVE ru-RU for the fewest mixed topics (docs/benchmarks.md, Gaps grouping).
VECTOR_JOIN: Final = 0.65
# Raw cosine for a model without a background mean (the setting before centring).
RAW_VECTOR_JOIN: Final = 0.9
# A merged row's shared stem is learned unless more of the bot's entries than this hold it.
COMMON_SHARE: Final = 0.02
MEANS_FILE: Final = Path(__file__).resolve().parent / "data" / "question_means.json"


def stems(text: str) -> frozenset[str]:
    return content_stems(text)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def unit_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


@dataclass(frozen=True)
class Meaning:
    """How one model's query vectors are compared: the background mean subtracted from each unit
    vector (None: raw cosine) and the cosine a question needs with a topic's centroid to join it."""

    mean: np.ndarray | None
    join: float

    def prepare(self, vector: Sequence[float] | np.ndarray) -> np.ndarray:
        unit = unit_vector(vector)
        return unit if self.mean is None else unit_vector(unit - self.mean)


RAW: Final = Meaning(mean=None, join=RAW_VECTOR_JOIN)


@cache
def _means() -> dict[str, list[float]]:
    data = json.loads(MEANS_FILE.read_text(encoding="utf-8"))
    return {key: row["mean"] for key, row in data.items()}


def meaning_for(model_key: str) -> Meaning:
    """The comparison for vectors of `model_key`: centred when a background mean of that model is
    stored, raw otherwise."""
    mean = _means().get(model_key)
    if mean is None:
        return RAW
    return Meaning(mean=np.asarray(mean, dtype=np.float32), join=VECTOR_JOIN)


@dataclass
class Topic:
    """A topic while grouping: its members' stems and, per facet, the sum of their prepared unit
    vectors. A facet is the row a question was first grouped into; a row the owner merged from
    several keeps one facet per merged row, so a later question like any one of them joins it
    (one centroid of all would sit between them and match none)."""

    key: int | None  # the Gap id, None for a topic made in this pass
    member_stems: list[frozenset[str]] = field(default_factory=list)
    facet_sums: dict[int | None, np.ndarray] = field(default_factory=dict)
    facet_stems: dict[int | None, set[str]] = field(default_factory=dict)
    # Stems the owner vouched for by merging (`merged_stems`, less the bot's common words): a later
    # question with one of them joins this topic as if its stems matched a member's.
    learned_stems: frozenset[str] = frozenset()

    def centroids(self) -> list[np.ndarray]:
        out = []
        for total in self.facet_sums.values():
            norm = float(np.linalg.norm(total))
            if norm:
                out.append(total / norm)
        return out

    def nearest_facet(self, vector: np.ndarray | None) -> int | None:
        """The facet whose centroid is closest to a prepared vector (None: the topic's own)."""
        best, best_cosine = None, -2.0
        for facet, total in self.facet_sums.items():
            norm = float(np.linalg.norm(total))
            cosine = float(np.dot(unit_vector(vector), total / norm)) if vector is not None and norm else -1.0
            if cosine > best_cosine:
                best, best_cosine = facet, cosine
        return best

    def add(self, question_stems: frozenset[str], vector: np.ndarray | None, facet: int | None = None) -> None:
        """Add a member; `vector` is already prepared (Meaning.prepare) or None; `facet` is the row
        it was first grouped into (None: this topic's own)."""
        self.member_stems.append(question_stems)
        self.facet_stems.setdefault(facet, set()).update(question_stems)
        if vector is not None:
            unit = unit_vector(vector)
            total = self.facet_sums.get(facet)
            self.facet_sums[facet] = unit.copy() if total is None else total + unit


def merged_stems(topic: Topic) -> frozenset[str]:
    """Stems found in two or more facets of a merged row: words the owner's merge says the rows'
    questions share (e.g. «счёт» of «оплатить по счёту» and «выставляете счета»)."""
    seen: dict[str, int] = {}
    for words in topic.facet_stems.values():
        for word in words:
            seen[word] = seen.get(word, 0) + 1
    return frozenset(w for w, n in seen.items() if n >= 2)


def is_common(df: int, entries: int) -> bool:
    """A word too common in the bot's own knowledge to name a topic (in 2+ entries and more than
    COMMON_SHARE of them: «заказ», «доставка» in a shop)."""
    return df >= 2 and df > COMMON_SHARE * entries


def similarity(topic: Topic, question_stems: frozenset[str], vector: np.ndarray | None) -> tuple[float, float]:
    """(best stem Jaccard with a member, 1.0 when a stem the owner vouched for is shared; best
    cosine of the prepared vector with a facet's centroid)."""
    by_stems = max((jaccard(question_stems, member) for member in topic.member_stems), default=0.0)
    if question_stems & topic.learned_stems:
        by_stems = 1.0
    if vector is None:
        return by_stems, 0.0
    unit = unit_vector(vector)
    return by_stems, max((float(np.dot(unit, centroid)) for centroid in topic.centroids()), default=0.0)


def best_topic(
    topics: Sequence[Topic], question_stems: frozenset[str], vector: np.ndarray | None,
    *, stem_join: float = STEM_JOIN, vector_join: float = VECTOR_JOIN,
) -> int | None:
    """Index of the topic the question joins, or None for a new topic (`vector` prepared)."""
    best, best_score = None, 0.0
    for index, topic in enumerate(topics):
        by_stems, by_meaning = similarity(topic, question_stems, vector)
        if by_stems < stem_join and by_meaning < vector_join:
            continue
        # Rank the qualifying topics on one scale: how far past its own threshold each signal is.
        score = max(by_stems - stem_join, by_meaning - vector_join) + 1.0
        if score > best_score:
            best, best_score = index, score
    return best


def group(
    questions: Sequence[tuple[frozenset[str], np.ndarray | None]], *, meaning: Meaning = RAW,
    stem_join: float = STEM_JOIN, vector_join: float | None = None,
) -> list[int]:
    """Topic number of each question (its stems and the model's own vector), grouping in the given
    order (the order they were asked); vectors are compared as `meaning` says."""
    join = meaning.join if vector_join is None else vector_join
    topics: list[Topic] = []
    labels = []
    for question_stems, vector in questions:
        prepared = meaning.prepare(vector) if vector is not None else None
        index = best_topic(topics, question_stems, prepared, stem_join=stem_join, vector_join=join)
        if index is None:
            topics.append(Topic(key=None))
            index = len(topics) - 1
        topics[index].add(question_stems, prepared)
        labels.append(index)
    return labels
