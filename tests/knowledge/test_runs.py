"""A run's row is written in knowledge/runs.py only: made queued or done at once, claimed by one
worker, counted as the crawl goes, recounted while vectors fill in, finished with its source
marked crawled. Every write but the claim is heard by post_save receivers (the owner's tests)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models.signals import post_save
from django.utils import timezone

from knowledge.models import CrawlRun, Entry, Page, Source
from knowledge.runs import (
    COUNTERS,
    live_runs_refresh,
    run_claim,
    run_counts_refresh,
    run_crawling,
    run_embedding,
    run_finish,
    run_imported,
    run_progress,
    run_start,
)

pytestmark = pytest.mark.django_db

MODEL = "e5-test"


@pytest.fixture
def source(bot):
    return Source.objects.create(bot=bot, kind=Source.Kind.SITE, url="https://shop.example/", title="Сайт")


@pytest.fixture
def saved():
    """The statuses of the runs post_save was sent for, in order."""
    seen: list[str] = []

    def heard(sender, *, instance, **kwargs):
        seen.append(instance.status)

    post_save.connect(heard, sender=CrawlRun, dispatch_uid="tests.knowledge.test_runs")
    yield seen
    post_save.disconnect(sender=CrawlRun, dispatch_uid="tests.knowledge.test_runs")


def _row(run: CrawlRun) -> CrawlRun:
    return CrawlRun.objects.get(pk=run.pk)


def test_a_started_run_is_queued_for_its_source_and_one_worker_claims_it(source):
    run = run_start(source=source)
    assert (_row(run).status, run.bot_id, run.source_id) == (CrawlRun.Status.QUEUED, source.bot_id, source.pk)
    assert run_claim(run_id=run.pk) is True
    assert run_claim(run_id=run.pk) is False  # a second worker handed the same run
    assert _row(run).status == CrawlRun.Status.RUNNING
    assert run_claim(run_id=run.pk + 1000) is False


def test_a_run_crawled_again_counts_its_pages_from_zero_and_keeps_its_entry_counts(source):
    run = CrawlRun.objects.create(bot_id=source.bot_id, source=source, status=CrawlRun.Status.RUNNING,
                                  pages_total=40, pages_done=12, fetched=10, failed=2, entries_created=30)
    run_crawling(run=_row(run), again=True)
    row = _row(run)
    assert (row.status, row.pages_total, row.pages_done, row.fetched, row.failed, row.entries_created) == (
        CrawlRun.Status.RUNNING, 0, 0, 0, 0, 30)
    queued = run_start(source=source)
    run_crawling(run=queued)
    assert _row(queued).status == CrawlRun.Status.RUNNING


def test_the_crawls_tally_is_stored_all_at_once(source, saved):
    run = run_start(source=source)
    tally = {name: n for n, name in enumerate(COUNTERS, start=1)}
    run_progress(run=run, counts=tally)
    row = _row(run)
    assert {name: getattr(row, name) for name in COUNTERS} == tally
    assert saved == [CrawlRun.Status.QUEUED, CrawlRun.Status.QUEUED]
    with pytest.raises(ValueError, match="not a counter"):
        run_progress(run=run, counts={"embeddings_done": 1})


def test_embedding_keeps_the_summary_unless_given_and_finishing_marks_the_source_crawled(source, saved):
    run = run_start(source=source)
    run_embedding(run=run, message=["Пропущено:"])
    row = _row(run)
    assert (row.status, row.message, row.message_stored) == (CrawlRun.Status.EMBEDDING, "Пропущено:", ["Пропущено:"])
    run_embedding(run=run)
    assert _row(run).message == "Пропущено:"
    run_finish(run=run, status=CrawlRun.Status.DONE)
    row, source_row = _row(run), Source.objects.get(pk=source.pk)
    assert (row.status, row.message) == (CrawlRun.Status.DONE, "Пропущено:")
    assert row.finished_at is not None and source_row.last_crawled_at == row.finished_at
    assert saved[-1] == CrawlRun.Status.DONE  # the owner's test sets hear a finished crawl

    failed = run_start(source=source)
    run_finish(run=failed, status=CrawlRun.Status.FAILED, message="сайт недоступен")
    assert (_row(failed).status, _row(failed).message_shown) == (CrawlRun.Status.FAILED, "сайт недоступен")


def _page(source: Source, path: str, *, vectors: list[bool]) -> Page:
    page = Page.objects.create(bot_id=source.bot_id, source=source, url=f"https://shop.example{path}",
                               fetched_at=timezone.now())
    for n, embedded in enumerate(vectors):
        Entry.objects.create(bot_id=source.bot_id, source=source, page=page, text=f"{path} {n}",
                             embedding=[0.1, 0.2, 0.3] if embedded else None, embedding_model=MODEL if embedded else "")
    return page


def test_recounting_stores_the_embedded_pages_and_entries_of_the_runs_pages(source):
    run = CrawlRun.objects.create(bot_id=source.bot_id, source=source, status=CrawlRun.Status.RUNNING)
    CrawlRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(minutes=1))
    run = _row(run)
    _page(source, "/done/", vectors=[True, True])
    _page(source, "/half/", vectors=[True, False])
    run_counts_refresh(run=run, model_key=MODEL)
    row = _row(run)
    assert (row.pages_embedded, row.embeddings_total, row.embeddings_done) == (1, 4, 3)


def test_a_pass_with_nothing_left_finishes_the_runs_whose_fetching_is_over(source, bot):
    fetching = CrawlRun.objects.create(bot=bot, source=source, status=CrawlRun.Status.RUNNING)
    embedding = CrawlRun.objects.create(bot=bot, source=source, status=CrawlRun.Status.EMBEDDING)
    _page(source, "/done/", vectors=[True])
    assert {run.pk for run in live_runs_refresh(bot_id=bot.pk, model_key=MODEL)} == {fetching.pk, embedding.pk}
    assert _row(embedding).status == CrawlRun.Status.EMBEDDING
    live_runs_refresh(bot_id=bot.pk, model_key=MODEL, finish=True)
    assert (_row(fetching).status, _row(embedding).status) == (CrawlRun.Status.RUNNING, CrawlRun.Status.DONE)
    assert Source.objects.get(pk=source.pk).last_crawled_at == _row(embedding).finished_at


def test_an_import_is_recorded_as_a_done_run_of_one_page(source, saved):
    run = run_imported(source=source, created=3, updated=2, deactivated=1, unchanged=4, message="Документ «прайс»")
    row = _row(run)
    assert (row.status, row.pages_total, row.pages_done, row.fetched) == (CrawlRun.Status.DONE, 1, 1, 1)
    assert (row.entries_created, row.entries_updated, row.entries_deactivated, row.unchanged) == (3, 2, 1, 4)
    assert row.message == "Документ «прайс»" and row.finished_at is not None
    assert Source.objects.get(pk=source.pk).last_crawled_at == row.finished_at == source.last_crawled_at
    assert saved == [CrawlRun.Status.DONE]
