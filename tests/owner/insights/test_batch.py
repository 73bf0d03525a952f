"""Runs of question sets on a real Celery worker: «Запустить» queues a run, the worker answers
question by question (the progress endpoint follows), a knowledge change re-runs the sets once,
and each run is compared with the one before."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from knowledge.services import entry_edit
from owner.insights import batch
from owner.insights.models import BatchResult, BatchRun
from owner.insights.sets import question_set_save
from tests.owner.insights.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db(transaction=True)

RETURN_QUESTION = "Можно ли вернуть товар?"
SET_TEXT = f"{DELIVERY_QUESTION} | https://shop.example/delivery | 300\n{RETURN_QUESTION}\n{UNKNOWN_QUESTION}\nПривет!"


def wait_for(condition: Callable[[], object], timeout: float = 90.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def finished_runs(question_set) -> list[BatchRun]:
    return list(question_set.runs.filter(status=BatchRun.Status.DONE).order_by("created_at"))


def test_a_run_answers_every_question_on_the_worker_and_shows_its_progress(
    celery_worker_thread, owner_client, shop, knowledge,
):
    question_set = question_set_save(bot=shop, name="Основное", text=SET_TEXT)
    response = owner_client.post(f"/b/demo/testing/sets/{question_set.pk}/")
    assert response.status_code == 302
    run = question_set.runs.get()
    wait_for(lambda: BatchRun.objects.get(pk=run.pk).status == BatchRun.Status.DONE)
    results = {r.question: r for r in BatchResult.objects.filter(run=run)}
    assert results[DELIVERY_QUESTION].route == "search"
    assert results[DELIVERY_QUESTION].cited_url == "https://shop.example/delivery"
    assert results[DELIVERY_QUESTION].passed is True
    assert results[RETURN_QUESTION].cited_url == "https://shop.example/return"
    assert results[UNKNOWN_QUESTION].route == "no_answer" and results[UNKNOWN_QUESTION].passed is None
    assert results["Привет!"].route == "rules"
    progress = owner_client.get(f"/b/demo/testing/runs/{run.pk}/progress/").json()
    assert progress | {"label": ""} == {"status": "done", "done": 4, "total": 4, "percent": 100, "label": ""}
    page = owner_client.get(f"/b/demo/testing/sets/{question_set.pk}/").content.decode()
    assert "Это первый прогон набора" in page and "как ожидалось" in page


def test_a_knowledge_change_re_runs_the_set_once_and_the_diff_shows_what_changed(
    celery_worker_thread, owner_client, shop, knowledge, settings,
):
    settings.INSIGHTS_RERUN_DELAY = 1
    question_set = question_set_save(bot=shop, name="Основное", text=SET_TEXT)
    batch.batch_run_start(question_set=question_set)
    wait_for(lambda: len(finished_runs(question_set)) == 1)

    # Two changes in a row: the delivery price changes, the return page is switched off.
    entry_edit(entry=knowledge["delivery"], changes={
        "text": "Доставка по Москве — на следующий день, стоимость 450 ₽. Бесплатно от 7000 ₽."})
    entry_edit(entry=knowledge["return"], changes={"active": False})
    wait_for(lambda: len(finished_runs(question_set)) == 2)
    time.sleep(2.5)  # a second re-run, if the two changes had queued two, would have started by now
    runs = list(question_set.runs.order_by("created_at"))
    assert [r.trigger for r in runs] == ["manual", "knowledge"]
    assert runs[1].reason == "изменена запись «Доставка»"

    previous, rows = batch.batch_run_diff(runs[1])
    assert previous == runs[0]
    changes = {row.result.question: row.change for row in rows}
    assert changes == {DELIVERY_QUESTION: batch.TEXT, RETURN_QUESTION: batch.UNANSWERED,
                       UNKNOWN_QUESTION: batch.SAME, "Привет!": batch.SAME}
    delivery = next(row.result for row in rows if row.result.question == DELIVERY_QUESTION)
    assert "450" in delivery.answer and delivery.passed is False  # the expected «300» is gone

    page = owner_client.get(f"/b/demo/testing/sets/{question_set.pk}/").content.decode()
    assert "Запущен сам после изменения знаний: изменена запись «Доставка»." in page
    assert 'data-change="unanswered"' in page and 'data-change="text"' in page
    assert "без ответа стало: 1" in page


def test_starting_a_set_that_is_running_returns_the_live_run(shop, knowledge):
    question_set = question_set_save(bot=shop, name="Основное", text="вопрос")
    first, created = batch.batch_run_start(question_set=question_set)
    again, created_again = batch.batch_run_start(question_set=question_set)
    assert created and not created_again and again == first


def test_a_run_executed_twice_answers_each_question_once(shop, knowledge):
    question_set = question_set_save(bot=shop, name="Основное", text=f"{DELIVERY_QUESTION}\n{UNKNOWN_QUESTION}")
    run, _ = batch.batch_run_start(question_set=question_set)
    batch.batch_run_execute(run_id=run.pk)
    batch.batch_run_execute(run_id=run.pk)  # a redelivered task
    run.refresh_from_db()
    assert run.status == "done" and run.done == 2
    assert BatchResult.objects.filter(run=run).count() == 2
    assert batch.batch_run_execute(run_id=10**9) is None  # a run that is gone: nothing to do


def test_a_knowledge_change_of_a_bot_without_sets_queues_nothing(shop, knowledge):
    from django.core.cache import cache

    batch.knowledge_changed(bot_id=shop.pk, reason="изменена запись")
    assert cache.get(batch._pending_key(shop.pk)) is None
    question_set_save(bot=shop, name="Основное", text="вопрос")  # sets exist now: the next change counts
    batch.knowledge_changed(bot_id=shop.pk, reason="изменена запись «Доставка»")
    assert cache.get(batch._pending_key(shop.pk)) == "изменена запись «Доставка»"


def test_another_bots_run_and_its_progress_are_404(owner_client, shop, other_bot):
    theirs = question_set_save(bot=other_bot, name="Чужой", text="вопрос")
    run, _ = batch.batch_run_start(question_set=theirs)
    assert owner_client.get(f"/b/demo/testing/runs/{run.pk}/").status_code == 404
    assert owner_client.get(f"/b/demo/testing/runs/{run.pk}/progress/").status_code == 404
    assert owner_client.post(f"/b/demo/testing/sets/{theirs.pk}/").status_code == 404
    assert theirs.runs.count() == 1


def test_the_pages_say_when_a_re_run_is_coming_and_why(owner_client, shop, knowledge):
    question_set = question_set_save(bot=shop, name="Основное", text="вопрос")
    entry_edit(entry=knowledge["payment"], changes={"text": "Оплата картой или через СБП."})  # committed
    for url in ("/b/demo/testing/", f"/b/demo/testing/sets/{question_set.pk}/"):
        page = owner_client.get(url).content.decode()
        assert "Знания изменились (изменена запись «Оплата»): наборы скоро перепроверятся сами." in page


def test_the_owner_deletes_a_set_with_its_runs(owner_client, shop):
    question_set = question_set_save(bot=shop, name="Старый", text="вопрос")
    batch.batch_run_start(question_set=question_set)
    response = owner_client.post(f"/b/demo/testing/sets/{question_set.pk}/edit/", {"action": "delete"}, follow=True)
    assert "Набор «Старый» удалён." in response.content.decode()
    assert not BatchRun.objects.exists()


def test_a_finished_crawl_queues_a_re_run_with_its_reason_a_failed_one_does_not(shop):
    from knowledge.models import CrawlRun, Source
    from knowledge.runs import run_finish

    question_set_save(bot=shop, name="Основное", text="вопрос")
    source = Source.objects.create(bot=shop, kind="site", url="https://shop.example/", title="Сайт магазина")
    failed = CrawlRun.objects.create(bot=shop, source=source, status="running")
    run_finish(run=failed, status=CrawlRun.Status.FAILED, message="сайт недоступен")
    assert batch.rerun_pending(bot_id=shop.pk) is None
    done = CrawlRun.objects.create(bot=shop, source=source, status="running")
    run_finish(run=done, status=CrawlRun.Status.DONE)
    assert batch.rerun_pending(bot_id=shop.pk) == "закончен обход «Сайт магазина»"


def test_an_imported_document_queues_a_re_run(shop):
    from knowledge.importing import document_import

    question_set_save(bot=shop, name="Основное", text="вопрос")
    document_import(bot=shop, filename="Доставка.md", data="# Доставка\n\nПо Москве — 300 ₽.".encode())
    assert batch.rerun_pending(bot_id=shop.pk) in {"добавлена запись «Доставка.md»", "загружен источник «Доставка.md»"}


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_runs_reason_and_error_are_shown_in_the_readers_language(owner_client, shop, lang):
    """Written by a worker or a request in whatever language was active, read in the reader's."""
    from datetime import timedelta

    from django.utils import timezone, translation
    from django.utils.translation import gettext_noop

    from core.texts import stored

    question_set = question_set_save(bot=shop, name="Основное", text="вопрос")
    with translation.override("en" if lang == "ru" else "ru"):  # the writer's language is not the reader's
        batch.knowledge_changed(bot_id=shop.pk, reason=stored(gettext_noop("знания бота изменились")))
        stale, _ = batch.batch_run_start(question_set=question_set, trigger=BatchRun.Trigger.KNOWLEDGE,
                                         reason=stored(gettext_noop("изменена запись «%(title)s»"),
                                                             title="Доставка"))
        BatchRun.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(hours=1))
        batch.batch_run_start(question_set=question_set)  # the stale run lost its worker: it fails
    stale.refresh_from_db()
    assert stale.status == "failed" and stale.error == "Прогон не закончился за 30 мин."  # the column keeps Russian
    assert stale.reason == "изменена запись «Доставка»"

    owner_client.cookies["django_language"] = lang
    page = owner_client.get(f"/b/demo/testing/runs/{stale.pk}/").content.decode()
    listing = owner_client.get(f"/b/demo/testing/sets/{question_set.pk}/").content.decode()
    if lang == "en":
        assert "The run did not finish within 30 min." in page
        assert "entry “Доставка” changed" in page and "entry “Доставка” changed" in listing
        assert "the bot&#x27;s knowledge changed" in listing  # the re-run still to come
    else:
        assert "Прогон не закончился за 30 мин." in page
        assert "изменена запись «Доставка»" in page and "изменена запись «Доставка»" in listing
        assert "знания бота изменились" in listing


def test_a_run_stored_before_its_texts_were_translatable_reads_as_it_was(owner_client, shop):
    question_set = question_set_save(bot=shop, name="Основное", text="вопрос")
    old = BatchRun.objects.create(bot=shop, question_set=question_set, status="failed", trigger="knowledge",
                                  reason="изменена запись «Оплата»", error="Прогон прерван ошибкой: OperationalError")
    owner_client.cookies["django_language"] = "en"
    page = owner_client.get(f"/b/demo/testing/runs/{old.pk}/").content.decode()
    assert "Прогон прерван ошибкой: OperationalError" in page and "изменена запись «Оплата»" in page
