"""Grouping questions into topics (seed 004: «похожие склеиваются по основам слов, чтобы десять
вариантов одного вопроса не превращались в десять строк»), plus meaning for paraphrases that share
no words. Pure functions over stems and vectors, so the thresholds can be calibrated on data
(bench/gaps_grouping.py) and tested without a database.

A question joins the topic it is most like when either
- its content-word stems overlap a member's by Jaccard >= STEM_JOIN (Snowball, the chat's own
  `friction.stems`: question words and stop words left out), or
- its query vector is at least VECTOR_JOIN cosine-similar to the topic's centroid;
otherwise it starts a topic of its own. Comparing with the centroid, not with the nearest member,
keeps a chain of near neighbours from gluing two topics together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from assistant.chat.friction import stems as content_stems

STEM_JOIN: Final = 0.5
VECTOR_JOIN: Final = 0.9


def stems(text: str) -> frozenset[str]:
    return content_stems(text)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass
class Topic:
    """A topic while grouping: its members' stems and the sum of their unit vectors."""

    key: int | None  # the Gap id, None for a topic made in this pass
    member_stems: list[frozenset[str]] = field(default_factory=list)
    vector_sum: np.ndarray | None = None

    def centroid(self) -> np.ndarray | None:
        if self.vector_sum is None:
            return None
        norm = float(np.linalg.norm(self.vector_sum))
        return self.vector_sum / norm if norm else None

    def add(self, question_stems: frozenset[str], vector: np.ndarray | None) -> None:
        self.member_stems.append(question_stems)
        if vector is not None:
            unit = unit_vector(vector)
            self.vector_sum = unit.copy() if self.vector_sum is None else self.vector_sum + unit


def unit_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def similarity(topic: Topic, question_stems: frozenset[str], vector: np.ndarray | None) -> tuple[float, float]:
    """(best stem Jaccard with a member, cosine with the centroid)."""
    by_stems = max((jaccard(question_stems, member) for member in topic.member_stems), default=0.0)
    centroid = topic.centroid()
    by_meaning = float(np.dot(unit_vector(vector), centroid)) if vector is not None and centroid is not None else 0.0
    return by_stems, by_meaning


def best_topic(
    topics: Sequence[Topic], question_stems: frozenset[str], vector: np.ndarray | None,
    *, stem_join: float = STEM_JOIN, vector_join: float = VECTOR_JOIN,
) -> int | None:
    """Index of the topic the question joins, or None for a new topic."""
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
    questions: Sequence[tuple[frozenset[str], np.ndarray | None]], *, stem_join: float = STEM_JOIN,
    vector_join: float = VECTOR_JOIN,
) -> list[int]:
    """Topic number of each question, grouping in the given order (the order they were asked)."""
    topics: list[Topic] = []
    labels = []
    for question_stems, vector in questions:
        index = best_topic(topics, question_stems, vector, stem_join=stem_join, vector_join=vector_join)
        if index is None:
            topics.append(Topic(key=None))
            index = len(topics) - 1
        topics[index].add(question_stems, vector)
        labels.append(index)
    return labels
