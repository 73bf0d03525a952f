"""A run's counts are recounted while its vectors fill in, and a pass with nothing left finishes
the runs whose fetching is over, marking their source crawled (knowledge/runs.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.models import CrawlRun, Entry, Page, Source
from knowledge.runs import live_runs_refresh, run_counts_refresh

pytestmark = pytest.mark.django_db

MODEL = "e5-test"


@pytest.fixture
def source(bot):
    return Source.objects.create(bot=bot, kind=Source.Kind.SITE, url="https://shop.example/", title="Сайт")


def _row(run: CrawlRun) -> CrawlRun:
    return CrawlRun.objects.get(pk=run.pk)


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
