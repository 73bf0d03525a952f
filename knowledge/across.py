"""A question in another language than the bot's pages («How much is delivery to Moscow?» to a
Russian shop), read by meaning alone: the words of one language say nothing of the other's, and a
single small model ranks the right page first for too few such questions.

The candidates search found are read a second time by a model trained to match sentences across
languages (use-m3, Universal Sentence Encoder multilingual, shipped beside e5-small), and the two
cosines are blended: e5-small alone puts the right page first for 0.747 of the English VK Cloud
paraphrases, use-m3 alone for 0.767, the blend for 0.820 (bench/english_ceiling.py). The second
model's passage vectors are computed when a page is first asked about across languages and kept
(embeddings.passage_cache: in the process and in Redis), so a bot pays nothing for them until an
English visitor comes, and the Russian questions never do. knowledge/search.py applies it;
docs/search.md explains it to an owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

import numpy as np

from knowledge.drafts import passage_text_of
from knowledge.embeddings import COSINE_RANGE, get_embedder, passage_cache

# The bot's model -> the second model that reads its candidates across languages.
SECOND_MODEL: Final = {"e5-small": "use-m3"}
# The blend: each cosine rescaled by its model's window, then weighted half and half (0.3 ranks as
# well by cosine alone, bench/english_ceiling.py; through the whole chain 0.5 answers 120 of the 150
# English VK Cloud paraphrases right and 0.3 119, with the same refusals: bench/english.py).
SECOND_WEIGHT: Final = 0.5
SECOND_RANGE: Final = {"use-m3": (0.0, 0.5)}  # use-m3's cross-language cosines: 0.15..0.55 (bench)
# The blend's floor and ceiling, as search reads a cosine: the default match threshold (0.485, a
# page chunk's weight) falls at a blend of 0.57, where 1 of the 26 English out-of-scope questions
# gets an answer on the demo and none on the VK Cloud docs (as with e5-small alone); a window as
# wide as the blend's own span, so that close pages stay apart (a narrower one clamped many to 1.0).
# Chosen on the bench's English sets (bench/english.py, docs/benchmarks.md).
BLEND_RANGE: Final = {"e5-small": (0.031, 1.031)}


class Candidate(Protocol):
    """What is read of a search candidate (knowledge/search.py's Signals)."""

    @property
    def entry_id(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def heading_path(self) -> str: ...
    @property
    def text(self) -> str: ...


def second_cosines(model_key: str, query: str, candidates: Sequence[Candidate]) -> dict[int, float]:
    """entry id -> the second model's cosine between `query` and that candidate's passage; empty
    when the bot's model has no second reader."""
    second = SECOND_MODEL.get(model_key)
    if second is None or not candidates:
        return {}
    model = get_embedder(second)
    texts = [passage_text_of(c.title, c.heading_path, c.text) for c in candidates]
    passages = np.stack(passage_cache.vectors(model, texts))
    question = np.asarray(model.query(query), dtype=np.float32)
    cosines = passages @ question / (np.linalg.norm(passages, axis=1) * float(np.linalg.norm(question)) + 1e-12)
    return {c.entry_id: float(cosine) for c, cosine in zip(candidates, cosines, strict=True)}


def blend(cosine: float, second: float, model_key: str) -> float:
    """Both readings on one 0..1 scale: each cosine through its model's window, then weighted."""
    low, high = COSINE_RANGE[model_key]
    second_low, second_high = SECOND_RANGE[SECOND_MODEL[model_key]]
    own = (cosine - low) / (high - low)
    other = (second - second_low) / (second_high - second_low)
    return (1 - SECOND_WEIGHT) * own + SECOND_WEIGHT * other
