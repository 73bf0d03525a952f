"""A question in another language, read a second time by the cross-language model (knowledge/across.py):
real e5-small and use-m3 vectors, the passage vectors kept in the process and in the real Redis."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from django.core.cache import cache

from knowledge import across
from knowledge.drafts import passage_text_of
from knowledge.embeddings import QueryVectorCache, get_embedder, passage_cache
from knowledge.models import Entry
from knowledge.search import Signals, cross_language_relevance, fuse, search_entries
from tests.knowledge.test_search import shop  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Candidate:
    entry_id: int
    title: str
    heading_path: str
    text: str


def candidates(bot) -> list[Candidate]:
    return [Candidate(e.pk, e.title, e.heading_path, e.text) for e in Entry.objects.filter(bot=bot).order_by("pk")]


def test_an_english_question_is_read_by_both_models_and_finds_the_russian_page(shop) -> None:  # noqa: F811
    results = search_entries(shop, "How long do I have to return an item?")

    assert results[0].url == "/returns/"
    assert all("across_cosine" in r.components for r in results)
    assert results[0].components["across_cosine"] == max(r.components["across_cosine"] for r in results)


def test_a_russian_question_to_a_russian_site_is_not_read_twice(shop) -> None:  # noqa: F811
    results = search_entries(shop, "Как вернуть товар?")

    assert results and not any("across_cosine" in r.components for r in results)


def test_the_second_models_passage_vectors_are_kept_and_shared(shop) -> None:  # noqa: F811
    entries = candidates(shop)
    first = across.second_cosines("e5-small", "Is there a warranty on vacuum cleaners?", entries)
    model = get_embedder("use-m3")
    texts = [passage_text_of(e.title, e.heading_path, e.text) for e in entries]
    reader_key = QueryVectorCache.shared_key(
        type("Reader", (), {"key": "use-m3-passage", "revision": model.revision})(), texts[0])

    assert set(first) == {e.entry_id for e in entries}
    assert max(first, key=lambda pk: first[pk]) == Entry.objects.get(bot=shop, title="Гарантия").pk
    assert isinstance(cache.get(reader_key), bytes)  # in Redis for the other processes
    passage_cache.clear_local()
    again = across.second_cosines("e5-small", "Is there a warranty on vacuum cleaners?", entries)
    assert again == first  # from Redis: the same vectors, bit for bit
    stored = passage_cache.vectors(model, texts[:1])[0]  # the model's own (a batch of one differs in the 7th digit)
    assert np.allclose(stored, np.asarray(model.passages(texts[:1])[0], dtype=np.float32), atol=1e-5)


def test_a_bots_model_without_a_second_reader_is_read_as_before(shop) -> None:  # noqa: F811
    assert across.second_cosines("use-m3", "How long do I have to return an item?", []) == {}
    assert across.second_cosines("use-m3", "How long?", candidates(shop)) == {}


def test_the_blend_decides_the_score_across_languages() -> None:
    plain = Signals(entry_id=1, kind=Entry.Kind.CHUNK, url="", title="", text="", weight=0.5, review_needed=False,
                    cosine=0.83, lexical=0.0, trigram=0.0, unknown=1.0, across=True)
    close = fuse(replace(plain, across_cosine=0.45), model_key="e5-small", fix_bonus=0.0)
    far = fuse(replace(plain, across_cosine=0.10), model_key="e5-small", fix_bonus=0.0)
    alone = fuse(plain, model_key="e5-small", fix_bonus=0.0)

    assert close.score > far.score  # the same e5 cosine, told apart by the second reading
    assert close.components["across_cosine"] == 0.45 and "across_cosine" not in alone.components
    assert alone.score == round(cross_language_relevance(0.83, "e5-small") * alone.components["entry_factor"], 4)
    low, high = across.BLEND_RANGE["e5-small"]
    assert cross_language_relevance(0.83, "e5-small", 0.45) == pytest.approx(
        (across.blend(0.83, 0.45, "e5-small") - low) / (high - low))
