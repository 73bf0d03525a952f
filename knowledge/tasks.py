"""Celery tasks of the Knowledge layer: thin, by ID, idempotent. Each re-fetches its row, returns
quietly when it is gone, and calls one service. The worker finds them through this module (Celery
autodiscovers `knowledge.tasks`); a task that lives beside what it runs is imported here: the
crawl's `crawl_run` (crawler.py) and the embedding pass's `embed_bot` (indexing.py)."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.db.models import DurationField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.db.models.functions import Now
from django.utils import timezone

from knowledge.crawler import (
    ACTIVE_STATUSES,
    crawl_run,  # noqa: F401  (registered with the worker from here)
    crawl_start,
)
from knowledge.indexing import embed_bot  # noqa: F401  (registered with the worker from here)
from knowledge.models import CrawlRun, Source

# A run still "in progress" after this long belongs to a worker that died; it no longer blocks
# the schedule (acks_late redelivers the task, but the run's claim in crawler.crawl_run refuses to run it twice).
STALE_RUN = timedelta(hours=6)


def sources_due() -> list[Source]:
    """Crawlable sources with a schedule whose last crawl is older than it, and no live run."""
    period = ExpressionWrapper(F("recrawl_hours") * timedelta(hours=1), output_field=DurationField())
    live = CrawlRun.objects.filter(
        source=OuterRef("pk"), status__in=ACTIVE_STATUSES, started_at__gt=timezone.now() - STALE_RUN
    )
    return list(
        Source.objects.filter(kind__in=[Source.Kind.SITE, Source.Kind.SITEMAP], recrawl_hours__isnull=False)
        .filter(Q(last_crawled_at__isnull=True) | Q(last_crawled_at__lt=Now() - period))
        .exclude(Exists(live))
    )


@shared_task
def recrawl_due_sources() -> int:
    sources = sources_due()
    for source in sources:
        crawl_start(source=source)
    return len(sources)
