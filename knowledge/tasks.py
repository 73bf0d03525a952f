"""Celery tasks of the Knowledge layer: thin, by ID, idempotent. Each re-fetches its row, returns
quietly when it is gone, and calls one service. The worker finds them through this module (Celery
autodiscovers `knowledge.tasks`); a task that lives beside what it runs is imported here: the
embedding pass's `embed_bot` (indexing.py)."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.db.models import DurationField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.db.models.functions import Now
from django.utils import timezone

from knowledge.crawler import ACTIVE_STATUSES, crawl_source, crawl_start
from knowledge.indexing import embed_bot  # noqa: F401  (registered with the worker from here)
from knowledge.models import CrawlRun, Source
from knowledge.runclaims import run_heartbeat, run_take

# A run still "in progress" after this long belongs to a worker that died; it no longer blocks
# the schedule (acks_late redelivers the task, but the claim below refuses to run it twice).
STALE_RUN = timedelta(hours=6)


@shared_task
def crawl_run(run_id: int) -> None:
    """Take the run's key (knowledge/runclaims.py: a redelivered or duplicate message returns while
    a live worker crawls it), then claim the queued run (queued -> running), or resume a running one
    whose worker died (redelivered by acks_late)."""
    token = run_take(run_id=run_id)
    if token is None:
        return
    with run_heartbeat(run_id=run_id, token=token):
        claimed = CrawlRun.objects.filter(pk=run_id, status=CrawlRun.Status.QUEUED).update(
            status=CrawlRun.Status.RUNNING
        )
        resumed = not claimed and CrawlRun.objects.filter(pk=run_id, status=CrawlRun.Status.RUNNING).exists()
        if not claimed and not resumed:
            return
        run = CrawlRun.objects.select_related("source", "bot").get(pk=run_id)
        crawl_source(run=run, embed=False, embed_behind=True, resumed=resumed)


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
