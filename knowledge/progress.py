"""The three counts of a crawl the owner watches: pages fetched, pages searchable by their words
(indexed: stored, lexical and trigram search find them at once) and pages searchable by meaning
too (embedded: every active entry of the page has a vector of the current model).

Fetching and embedding run in different Celery tasks (the embed queue fills vectors in behind
the crawl), so the embedded count is recomputed from the database by whoever moves it, never
incremented: two writers cannot lose each other's updates and a redelivered task cannot count
twice. A run's pages are the pages of its source stored since the run started. This module only
counts; runs.py stores the counts on the run (`run_counts_refresh`, `live_runs_refresh`)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from knowledge.models import CrawlRun, Entry, Page

LIVE = (CrawlRun.Status.RUNNING, CrawlRun.Status.EMBEDDING)


def _pending(model_key: str) -> Q:
    return Q(active=True) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def run_pages(run: CrawlRun) -> Q:
    return Q(source_id=run.source_id, active=True, status=Page.Status.OK, fetched_at__gte=run.started_at)


def run_embedded_counts(*, run: CrawlRun, model_key: str) -> dict[str, int]:
    """The run's embedded pages and entries, counted now (three small indexed counts); runs.py
    stores them on the run."""
    pending = Entry.objects.filter(_pending(model_key), page=OuterRef("pk"))
    pages = Page.objects.filter(run_pages(run))
    entries = Entry.objects.filter(source_id=run.source_id, active=True, page__in=pages)
    return {
        "pages_embedded": pages.exclude(Exists(pending)).count(),
        "embeddings_total": entries.count(),
        "embeddings_done": entries.filter(embedding_model=model_key, embedding__isnull=False).count(),
    }


def source_pending(*, source_id: int, model_key: str) -> bool:
    return Entry.objects.filter(_pending(model_key), source_id=source_id).exists()

