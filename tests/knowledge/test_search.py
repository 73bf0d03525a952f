"""Hybrid search on real PostgreSQL + pgvector + pg_trgm, with the real local embedding model."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import connection, transaction

from knowledge.drafts import EntryDraft
from knowledge.indexing import embed_pending
from knowledge.models import Entry
from knowledge.search import (
    fuse,
    is_confident,
    is_match,
    search_entries,
    vector_candidates_sql,
)
from knowledge.services import entry_upsert, source_get_or_create

pytestmark = pytest.mark.django_db

DELIVERY = (
    "Доставка по Москве курьером стоит 390 рублей, при заказе от 5000 рублей — бесплатно. "
    "Курьер привозит заказ на следующий день с 10 до 22 часов."
)
RETURNS = (
    "Вернуть товар надлежащего качества можно в течение 14 дней, если сохранены упаковка и чек. "
    "Деньги возвращаем на карту за 3–10 рабочих дней."
)
WARRANTY = "Гарантия на пылесосы и кофемашины — 12 месяцев, на кондиционеры — 3 года."


def add(bot, key, title, text, *, url="", kind=Entry.Kind.CHUNK, weight=None):
    source = source_get_or_create(bot=bot, kind="manual", title="тест")
    draft = EntryDraft(key=key, title=title, text=text, url=url or f"/{key}/", kind=kind, weight=weight)
    entry, _outcome = entry_upsert(bot=bot, source=source, draft=draft)
    return entry


@pytest.fixture
def shop(bot):
    """The demo bot with three pages' worth of chunks, embedded and in the lexicon."""
    add(bot, "delivery", "Доставка по Москве", DELIVERY)
    add(bot, "returns", "Возврат товара", RETURNS)
    add(bot, "warranty", "Гарантия", WARRANTY)
    embed_pending(bot_id=bot.pk)
    return bot


def test_it_finds_the_passage_that_answers_the_question(shop) -> None:
    results = search_entries(shop, "Сколько стоит доставка по Москве?")
    assert results[0].url == "/delivery/"
    assert is_match(shop, results), results[0].components


def test_scores_are_between_0_and_1_best_first_with_their_components(shop) -> None:
    results = search_entries(shop, "какая гарантия на кофемашину", k=3)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    for result in results:
        assert 0.0 <= result.score <= 1.0
        assert {"vector", "cosine", "lexical", "trigram", "entry_factor", "fix_bonus", "review_penalty"} <= set(
            result.components
        )
    assert results[0].url == "/warranty/"


def test_it_never_returns_another_bots_entries(shop, other_bot) -> None:
    add(other_bot, "other-delivery", "Доставка по Москве", DELIVERY, url="/other/delivery/")
    embed_pending(bot_id=other_bot.pk)
    mine = search_entries(shop, "Сколько стоит доставка по Москве?", k=10)
    theirs = search_entries(other_bot, "Сколько стоит доставка по Москве?", k=10)
    assert mine and all(not r.url.startswith("/other/") for r in mine)
    assert [r.url for r in theirs] == ["/other/delivery/"]


def test_a_qa_pair_outranks_the_page_chunk_it_corrects(shop) -> None:
    add(shop, "qa-delivery", "Сколько стоит доставка по Москве?",
        "Доставка по Москве — 390 ₽, от 5000 ₽ бесплатно.", url="/delivery/", kind=Entry.Kind.QA)
    embed_pending(bot_id=shop.pk)
    results = search_entries(shop, "Сколько стоит доставка по Москве?")
    assert results[0].kind == Entry.Kind.QA
    assert results[1].kind == Entry.Kind.CHUNK and results[1].url == "/delivery/"


def test_a_correction_carries_the_fix_bonus(shop) -> None:
    add(shop, "fix-delivery", "Сколько стоит доставка по Москве?",
        "С 1 марта доставка по Москве стоит 450 ₽.", kind=Entry.Kind.CORRECTION)
    embed_pending(bot_id=shop.pk)
    top = search_entries(shop, "сколько стоит доставка по москве")[0]
    assert top.kind == Entry.Kind.CORRECTION
    assert top.components["fix_bonus"] == pytest.approx(shop.fix_bonus)


def test_an_entry_under_review_counts_less(shop) -> None:
    before = search_entries(shop, "Сколько стоит доставка по Москве?")[0]
    Entry.objects.filter(pk=before.entry_id).update(review_needed=True)
    after = search_entries(shop, "Сколько стоит доставка по Москве?")[0]
    assert after.entry_id == before.entry_id
    assert after.score < before.score
    assert after.components["review_penalty"] > 0


def test_inactive_entries_are_never_found(shop) -> None:
    Entry.objects.filter(bot=shop, key="delivery").update(active=False)
    assert all(r.url != "/delivery/" for r in search_entries(shop, "доставка по Москве", k=10))


def test_a_misspelt_word_is_read_as_the_nearest_word_of_the_site(shop) -> None:
    results = search_entries(shop, "вазврат денег на карту")
    assert results[0].url == "/returns/"
    assert results[0].components["lexical"] > 0


def test_a_latin_name_spelt_in_russian_letters_finds_the_page_that_writes_it_in_latin(shop) -> None:
    """«телеграм» is stemmed 'телегр'; letter for letter that is 'telegr', which begins the site's
    'telegram': the word counts in full and is not an unknown word that shrinks the score."""
    entry = add(shop, "contacts", "Контакты", "Пишите нам в Telegram: @shop_help — отвечаем с 9 до 21.")
    embed_pending(bot_id=shop.pk)
    results = search_entries(shop, "Какой у вас телеграм?", k=5)
    assert results[0].entry_id == entry.pk
    assert results[0].components["lexical"] == 1.0
    assert results[0].components["unknown"] == 0.0
    assert is_match(shop, results), results[0].components


def test_a_russian_word_is_not_read_as_a_loosely_similar_latin_one(shop) -> None:
    add(shop, "receipt", "Receipt", "Receipt and invoice are sent by e-mail.")
    embed_pending(bot_id=shop.pk)
    results = search_entries(shop, "рецепт борща", k=5)
    assert all(r.components["lexical"] == 0.0 for r in results)  # 'recept' is not 'receipt'
    assert not is_match(shop, results)


def test_an_entry_without_a_vector_is_still_found_by_its_words(shop) -> None:
    entry = add(shop, "pickup", "Самовывоз", "Самовывоз из пункта выдачи на Савёловской бесплатно.")
    results = search_entries(shop, "самовывоз с Савёловской", k=5)
    assert results[0].entry_id == entry.pk
    assert results[0].components["vector"] == 0.0


def test_a_question_the_site_does_not_answer_is_not_a_match(shop) -> None:
    results = search_entries(shop, "Подскажи рецепт борща")
    assert not is_match(shop, results)
    assert not is_confident(shop, results)


def test_an_empty_question_finds_nothing(shop) -> None:
    assert search_entries(shop, "   ") == []


def test_search_is_one_query_when_the_vector_is_given(shop, django_assert_num_queries) -> None:
    from knowledge.embeddings import get_embedder

    vector = get_embedder().query("доставка по Москве")
    with django_assert_num_queries(1):
        search_entries(shop, "доставка по Москве", query_vector=vector)


def test_the_vector_retriever_can_use_the_models_partial_hnsw_index(shop) -> None:
    """Same cast and predicate as migration 0002, or PostgreSQL silently scans every row."""
    from knowledge.embeddings import get_embedder

    embedder = get_embedder()
    literal = "[" + ",".join("0.01" for _ in range(embedder.dim)) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off")
        params = {"bot": shop.pk, "vec": literal, "n_vector": 5}
        cursor.execute("EXPLAIN " + vector_candidates_sql(embedder.key), params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "entry_hnsw_" + embedder.key.replace("-", "_") in plan


def test_fusion_is_capped_at_one() -> None:
    from knowledge.search import Signals

    signals = Signals(
        entry_id=1, kind=Entry.Kind.CORRECTION, url="", title="", text="", weight=1.0, review_needed=False,
        cosine=1.0, lexical=1.0, trigram=1.0,
    )
    result = fuse(signals, model_key="e5-small", fix_bonus=0.5)
    assert result.score == 1.0


def test_an_english_question_finds_the_russian_page_by_its_meaning(shop) -> None:
    """Its words meet none of the site's: the lexical side adds nothing and takes nothing away."""
    results = search_entries(shop, "How much does courier delivery in Moscow cost?")
    assert results[0].url == "/delivery/"
    assert results[0].components["across"] == 1.0 and results[0].components["lexical"] == 0.0
    assert is_match(shop, results), results[0].components


def test_an_english_question_the_site_does_not_answer_is_not_a_match(shop) -> None:
    assert not is_match(shop, search_entries(shop, "Who wrote War and Peace?"))


def test_a_russian_question_is_read_as_before(shop) -> None:
    results = search_entries(shop, "Сколько стоит доставка по Москве?")
    assert results[0].components["across"] == 0.0


def test_across_languages_the_score_is_the_cross_language_cosine_unless_the_words_say_more() -> None:
    from knowledge.search import Signals, cross_language_relevance

    plain = Signals(entry_id=1, kind=Entry.Kind.CHUNK, url="", title="", text="", weight=0.5, review_needed=False,
                    cosine=0.85, lexical=0.0, trigram=0.0, unknown=1.0)
    english = fuse(replace(plain, across=True), model_key="e5-small", fix_bonus=0.0)
    russian = fuse(plain, model_key="e5-small", fix_bonus=0.0)
    factor = english.components["entry_factor"]
    assert english.score == round(cross_language_relevance(0.85, "e5-small") * factor, 4)
    assert english.score > russian.score  # no penalty for words unknown because of their language
    named = fuse(replace(plain, across=True, lexical=1.0, cosine=0.80), model_key="e5-small", fix_bonus=0.0)
    assert named.score > 0  # a Latin name the site writes still counts when the vector says little
