"""The three counts of a crawl the owner watches: pages fetched, pages searchable by their words
(indexed: stored, lexical and trigram search find them at once) and pages searchable by meaning
too (embedded: every active entry of the page has a vector of the current model).

Fetching and embedding run in different Celery tasks (the embed queue fills vectors in behind
the crawl), so the embedded count is recomputed from the database by whoever moves it, never
incremented: two writers cannot lose each other's updates and a redelivered task cannot count
twice. A run's pages are the pages of its source stored since the run started."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from core.texts import Text, stored_pair
from knowledge.models import CrawlRun, Entry, Page, Source

LIVE = (CrawlRun.Status.RUNNING, CrawlRun.Status.EMBEDDING)


def _pending(model_key: str) -> Q:
    return Q(active=True) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def run_pages(run: CrawlRun) -> Q:
    return Q(source_id=run.source_id, active=True, status=Page.Status.OK, fetched_at__gte=run.started_at)


def run_counts_refresh(*, run: CrawlRun, model_key: str) -> CrawlRun:
    """Recount the run's embedded pages and entries and save them (three small indexed counts)."""
    pending = Entry.objects.filter(_pending(model_key), page=OuterRef("pk"))
    pages = Page.objects.filter(run_pages(run))
    run.pages_embedded = pages.exclude(Exists(pending)).count()
    entries = Entry.objects.filter(source_id=run.source_id, active=True, page__in=pages)
    run.embeddings_total = entries.count()
    run.embeddings_done = entries.filter(embedding_model=model_key, embedding__isnull=False).count()
    run.save(update_fields=["pages_embedded", "embeddings_total", "embeddings_done"])
    return run


def source_pending(*, source_id: int, model_key: str) -> bool:
    return Entry.objects.filter(_pending(model_key), source_id=source_id).exists()


def live_runs_refresh(*, bot_id: int, model_key: str, finish: bool = False) -> list[CrawlRun]:
    """Recount every live run of the bot. With `finish` (an embedding pass found nothing left),
    a run whose fetching is over and whose source has no entry waiting is done."""
    runs = list(CrawlRun.objects.filter(bot_id=bot_id, status__in=LIVE).select_related("source"))
    for run in runs:
        run_counts_refresh(run=run, model_key=model_key)
        if finish and run.status == CrawlRun.Status.EMBEDDING and not source_pending(
                source_id=run.source_id, model_key=model_key):
            run_finish(run=run, status=CrawlRun.Status.DONE)
    return runs


def run_finish(*, run: CrawlRun, status: str, message: Text = "") -> None:
    """`message` (a stored text, core/texts.py) replaces the run's; empty keeps it."""
    run.status, run.finished_at = status, timezone.now()
    if message:
        run.message, run.message_stored = stored_pair(message, 5000)
    run.save(update_fields=["status", "finished_at", "message", "message_stored"])
    Source.objects.filter(pk=run.source_id).update(last_crawled_at=run.finished_at)
