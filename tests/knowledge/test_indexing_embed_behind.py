"""A page answers by its words the moment it is stored; vectors fill in behind on the embed queue,
one waiting task and one pass per bot at a time; search blends what exists."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache

from knowledge import indexing, lexicon
from knowledge.models import Entry
from knowledge.search import W_LEXICAL, W_TRIGRAM, Signals, fuse, is_match, relevance_of, search_entries
from tests.knowledge.sites import fill_shop


def _signals(cosine: float | None, lexical: float, trigram: float) -> Signals:
    return Signals(entry_id=1, kind="chunk", url="", title="", text="", weight=0.5, review_needed=False,
                   cosine=cosine, lexical=lexical, trigram=trigram)


def test_an_entry_without_a_vector_is_scored_on_its_other_signals_not_as_a_zero_cosine():
    missing = _signals(None, 0.8, 0.4)
    assert relevance_of(missing, 0.0) == pytest.approx((W_LEXICAL * 0.8 + W_TRIGRAM * 0.4) / (W_LEXICAL + W_TRIGRAM))
    assert fuse(missing, model_key="e5-small", fix_bonus=0.06).components["embedded"] == 0.0
    present = _signals(0.81, 0.8, 0.4)
    assert relevance_of(present, 0.5) == pytest.approx(0.6 * 0.5 + 0.3 * 0.8 + 0.1 * 0.4)
    assert fuse(present, model_key="e5-small", fix_bonus=0.06).components["embedded"] == 1.0


@pytest.mark.django_db
def test_a_stored_page_answers_by_its_words_before_it_has_a_vector(shop_site, run_crawl, bot):
    fill_shop(shop_site)
    run_crawl()  # embed=False: no vector at all
    assert not Entry.objects.filter(bot=bot, embedding__isnull=False).exists()
    results = search_entries(bot, "Стоимость доставки курьером по Москве")
    assert results and results[0].url.startswith(shop_site.url("/delivery/"))
    assert results[0].components["embedded"] == 0.0
    assert is_match(bot, results), results[0].components


def _queued(queue: str) -> int:
    from assistant.celery import app

    with app.connection_for_write() as connection:
        channel: Any = connection.default_channel
        return int(channel.queue_declare(queue=queue, durable=True, auto_delete=False).message_count)


@pytest.mark.django_db
def test_requests_while_a_task_waits_queue_nothing_more_and_go_to_the_embed_queue(bot):
    from assistant.celery import app

    cache.delete(indexing._queued_key(bot.pk))
    before_embed, before_default = _queued(settings.CELERY_EMBED_QUEUE), _queued(settings.CELERY_TASK_DEFAULT_QUEUE)
    try:
        for _ in range(3):
            indexing._send(bot.pk)  # what embedding_request runs after commit
        assert _queued(settings.CELERY_EMBED_QUEUE) == before_embed + 1
        assert _queued(settings.CELERY_TASK_DEFAULT_QUEUE) == before_default
    finally:
        cache.delete(indexing._queued_key(bot.pk))
        with app.connection_for_write() as connection:
            channel: Any = connection.default_channel
            channel.queue_purge(settings.CELERY_EMBED_QUEUE)


@pytest.mark.django_db
def test_a_pass_gives_way_while_another_holds_the_bot_then_embeds_everything(shop_site, run_crawl, bot):
    fill_shop(shop_site)
    run_crawl()
    cache.add(indexing._lock_key(bot.pk), "another worker", 60)
    try:
        assert indexing.embed_behind(bot_id=bot.pk) is False
        assert Entry.objects.filter(bot=bot, active=True, embedding__isnull=True).exists()
    finally:
        cache.delete(indexing._lock_key(bot.pk))
    assert indexing.embed_behind(bot_id=bot.pk) is True
    assert not Entry.objects.filter(bot=bot, active=True, embedding__isnull=True).exists()
    assert cache.get(indexing._lock_key(bot.pk)) is None
    results = search_entries(bot, "Сколько стоит доставка курьером по Москве?")
    assert results[0].components["embedded"] == 1.0


@pytest.mark.django_db(transaction=True)
def test_lexicon_rebuilds_side_by_side_do_not_collide(shop_site, run_crawl, bot):
    """A crawl refreshes the lexicon while the embed queue's pass does too: one waits for the other."""
    import threading

    from django.db import connection

    from knowledge.models import Lexeme

    fill_shop(shop_site)
    run_crawl()
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def rebuild() -> None:
        try:
            start.wait()
            for _ in range(5):
                lexicon.lexicon_refresh(bot_id=bot.pk)
        except BaseException as exc:  # the test reports any failure
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=rebuild) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Lexeme.objects.filter(bot=bot, lexeme="доставк").exists()
