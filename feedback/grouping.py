"""Grouping questions into topics («похожие склеиваются по основам слов, чтобы десять
вариантов одного вопроса не превращались в десять строк»), plus meaning for paraphrases that share
no words. Pure functions over stems and vectors, so the thresholds can be calibrated on data
(bench/gaps_grouping.py) and tested without a database.

A question joins the topic it is most like when either
- its content-word stems overlap a member's by Jaccard >= STEM_JOIN (Snowball, the chat's own
  `friction.stems`: question words and stop words left out), or
- its centred query vector is at least `Meaning.join` cosine-similar to the topic's centroid, or
- it has a noun or adjective the owner taught by merging rows that share it (feedback/gaps.py
  `gap_merge`; `merged_stems`), with a centred cosine of at least LEARNED_FLOOR;
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
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import pymorphy3

from chat.friction import stems as content_stems

STEM_JOIN: Final = 0.5
# Centred cosine with a topic's centroid (models with a background mean): calibrated on the shop
# calibration half and MASSIVE ru-RU for the fewest mixed topics (docs/benchmarks.md, Gaps grouping).
VECTOR_JOIN: Final = 0.65
# Raw cosine for a model without a background mean (the setting before centring).
RAW_VECTOR_JOIN: Final = 0.9
# «Похоже на одну тему»: two rows are suggested to the owner for a merge when the mean centred
# cosine of their questions (average linkage) is at least this; chosen on the calibration half for
# at least half of the suggestions right (docs/benchmarks.md, Gaps grouping).
SUGGEST_JOIN: Final = 0.45
# A merged row's shared stem is learned unless more of the bot's entries than this hold it.
COMMON_SHARE: Final = 0.02
# ... and joins on it only with at least this centred cosine with the row's centroid, so that a
# word two topics share («неделя» of the weather and of the date) does not carry a question alone.
LEARNED_FLOOR: Final = 0.3
MEANS_FILE: Final = Path(__file__).resolve().parent / "data" / "question_means.json"


def stems(text: str) -> frozenset[str]:
    return content_stems(text)


_LETTERS: Final = re.compile(r"[a-zа-яё0-9]+", re.IGNORECASE)
# Parts of speech that can name a topic (pymorphy3 tags); a Latin word (a brand) can too.
NAMING_PARTS: Final = frozenset({"NOUN", "ADJF"})


@cache
def _morph() -> pymorphy3.MorphAnalyzer:
    return pymorphy3.MorphAnalyzer()


def naming_stems(text: str) -> frozenset[str]:
    """Stems of the words of `text` that can name a topic: nouns and full adjectives (not pronouns:
    «мой», «ваш») by pymorphy3's first parse, and Latin words (brands). Verbs («закажи» a taxi or a
    pizza) frame a question and are shared across topics."""
    out: set[str] = set()
    for word in _LETTERS.findall(text):
        tag = _morph().parse(word.lower())[0].tag
        if (word.isascii() and word.isalpha()) or (tag.POS in NAMING_PARTS and "Apro" not in tag):
            out |= {stem for stem in content_stems(word) if len(stem) >= 3}  # not «мо» of «мой»
    return frozenset(out)


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
    vector (None: raw cosine), the cosine a question needs with a topic's centroid to join it, and
    the mean cosine two rows need to be suggested for a merge (None: no suggestions, as for a model
    without a background mean: its raw cosines say little about the topic)."""

    mean: np.ndarray | None
    join: float
    suggest: float | None = None

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
    return Meaning(mean=np.asarray(mean, dtype=np.float32), join=VECTOR_JOIN, suggest=SUGGEST_JOIN)


@dataclass
class Topic:
    """A topic while grouping: its members' stems, per facet, and the sum of their prepared unit
    vectors. A facet is the row a question was in when the owner merged it (GapQuestion.facet;
    None: never part of a merge): a merged row has one facet per row merged, and the nouns they
    share are learned (`merged_stems`).
    The vectors are pooled into one centroid: per-facet centroids joined more questions of other
    topics on the calibration half (docs/benchmarks.md, Gaps grouping)."""

    key: int | None  # the Gap id, None for a topic made in this pass
    member_stems: list[frozenset[str]] = field(default_factory=list)
    vector_sum: np.ndarray | None = None
    facet_stems: dict[int | None, set[str]] = field(default_factory=dict)
    # Stems the owner vouched for by merging (`merged_stems`, less the bot's common words): a later
    # question with one of them joins this topic as if its stems matched a member's.
    learned_stems: frozenset[str] = frozenset()

    def centroid(self) -> np.ndarray | None:
        if self.vector_sum is None:
            return None
        norm = float(np.linalg.norm(self.vector_sum))
        return self.vector_sum / norm if norm else None

    def add(self, question_stems: frozenset[str], vector: np.ndarray | None, facet: int | None = None) -> None:
        """Add a member; `vector` is already prepared (Meaning.prepare) or None; `facet` is the row
        it was in when the owner merged it (None: never merged)."""
        self.member_stems.append(question_stems)
        self.facet_stems.setdefault(facet, set()).update(question_stems)
        if vector is not None:
            unit = unit_vector(vector)
            self.vector_sum = unit.copy() if self.vector_sum is None else self.vector_sum + unit


def owner_facets(topic: Topic) -> int:
    """How many rows the owner merged into this one (facets other than None: a question the bot
    added later has no facet and teaches nothing)."""
    return sum(facet is not None for facet in topic.facet_stems)


def merged_stems(topic: Topic) -> frozenset[str]:
    """Stems found in two or more of the owner's facets of a merged row: words the owner's merge
    says the rows' questions share (e.g. «счёт» of «оплатить по счёту» and «выставляете счета»);
    only those that can name a topic (`naming_stems` of the members' texts) are learned."""
    seen: dict[str, int] = {}
    for facet, words in topic.facet_stems.items():
        if facet is None:
            continue
        for word in words:
            seen[word] = seen.get(word, 0) + 1
    return frozenset(w for w, n in seen.items() if n >= 2)


def is_common(df: int, entries: int) -> bool:
    """A word too common in the bot's own knowledge to name a topic (in 2+ entries and more than
    COMMON_SHARE of them: «заказ», «доставка» in a shop)."""
    return df >= 2 and df > COMMON_SHARE * entries


def similarity(topic: Topic, question_stems: frozenset[str], vector: np.ndarray | None) -> tuple[float, float]:
    """(best stem Jaccard with a member, 1.0 when a stem the owner vouched for is shared; cosine of
    the prepared vector with the centroid)."""
    by_stems = max((jaccard(question_stems, member) for member in topic.member_stems), default=0.0)
    centroid = topic.centroid()
    by_meaning = float(np.dot(unit_vector(vector), centroid)) if vector is not None and centroid is not None else 0.0
    if question_stems & topic.learned_stems and (vector is None or by_meaning >= LEARNED_FLOOR):
        by_stems = 1.0
    return by_stems, by_meaning


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


def merge_suggestions(
    rows: dict[int, list[np.ndarray]], kept_apart: set[frozenset[int]], *, join: float = SUGGEST_JOIN,
) -> list[tuple[int, int, float]]:
    """Pairs of rows (keys) that look like one topic, best first, each row in one pair at most:
    average linkage, the mean cosine of every question of one row with every question of the other,
    which is the dot product of the rows' mean prepared vectors. The owner decides; nothing merges
    by itself (a wrong merge makes the owner answer the wrong question)."""
    keys = [key for key, vectors in rows.items() if vectors]
    if len(keys) < 2:
        return []
    means = np.array([np.mean([unit_vector(v) for v in rows[key]], axis=0) for key in keys])
    sims = means @ means.T
    pairs = sorted(
        ((float(sims[i, j]), keys[i], keys[j]) for i in range(len(keys)) for j in range(i + 1, len(keys))
         if sims[i, j] >= join and frozenset((keys[i], keys[j])) not in kept_apart),
        reverse=True,
    )
    used: set[int] = set()
    out = []
    for score, a, b in pairs:
        if a not in used and b not in used:
            used.update((a, b))
            out.append((a, b, score))
    return out
