"""A crawl's or an import's run (`CrawlRun`): the one module that writes its row.

A run is made queued (`run_start`), or done at once for an import (`run_imported`). A worker
claims a queued run (`run_claim`); its pages are fetched (`run_crawling`, the crawl's counters
stored as they move: `run_progress`), its vectors computed (`run_embedding`, `run_counts_refresh`)
and it ends done or failed (`run_finish`). The owner's pages (owner/dashboard) and the admin's
progress bars poll these rows; what the embedded counts mean is in progress.py.

What must stay true: every write but the claim is a `Model.save()` of the fields it changes, so
post_save receivers hear a finished run (owner/insights/receivers.py); the claim is one UPDATE, so
of two workers handed the same run exactly one crawls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from django.utils import timezone

from core.texts import Text, stored_pair
from knowledge.models import CrawlRun, Source
from knowledge.progress import LIVE, run_embedded_counts, source_pending

PAGE_COUNTERS: Final = ["pages_total", "pages_done", "fetched", "unchanged", "skipped", "failed"]
COUNTERS: Final = [*PAGE_COUNTERS, "entries_created", "entries_updated", "entries_deactivated"]
MESSAGE_MAX: Final = 5000


def run_start(*, source: Source) -> CrawlRun:
    """A new run of `source`, queued; the caller sends its task after commit (or crawls it here)."""
    return CrawlRun.objects.create(bot_id=source.bot_id, source=source)


def run_claim(*, run_id: int) -> bool:
    """Queued -> running in one UPDATE: True for exactly one of the workers handed the run."""
    claimed = CrawlRun.objects.filter(pk=run_id, status=CrawlRun.Status.QUEUED).update(status=CrawlRun.Status.RUNNING)
    return bool(claimed)


def run_crawling(*, run: CrawlRun, again: bool = False) -> CrawlRun:
    """The run's pages are being fetched. `again`: its worker died mid-crawl and it is crawled from
    the start, its page counters back to zero (its entry counters count writes that were made)."""
    run.status = CrawlRun.Status.RUNNING
    if again:
        for name in PAGE_COUNTERS:
            setattr(run, name, 0)
    run.save(update_fields=["status", *PAGE_COUNTERS])
    return run


def run_progress(*, run: CrawlRun, counts: Mapping[str, int]) -> CrawlRun:
    """Store the crawl's tally (`COUNTERS`: pages found, done and by outcome; entries created,
    updated and deactivated) on the run, all at once."""
    unknown = set(counts) - set(COUNTERS)
    if unknown:
        raise ValueError(f"not a counter of a crawl run: {sorted(unknown)}")
    for name, value in counts.items():
        setattr(run, name, value)
    run.save(update_fields=COUNTERS)
    return run


def run_embedding(*, run: CrawlRun, message: Text = "") -> CrawlRun:
    """Fetching is over; the run stays live («векторизация») while vectors are computed.
    `message` (a stored text, core/texts.py: the crawl's summary) replaces the run's; empty keeps it."""
    run.status = CrawlRun.Status.EMBEDDING
    _message_set(run, message)
    run.save(update_fields=["status", "message", "message_stored"])
    return run


def run_counts_refresh(*, run: CrawlRun, model_key: str) -> CrawlRun:
    """Recount the run's embedded pages and entries (progress.py) and store them."""
    for name, value in run_embedded_counts(run=run, model_key=model_key).items():
        setattr(run, name, value)
    run.save(update_fields=["pages_embedded", "embeddings_total", "embeddings_done"])
    return run


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
    """The run is over (done or failed) and its source counts as crawled now. `message` (a stored
    text, core/texts.py) replaces the run's; empty keeps it."""
    run.status, run.finished_at = status, timezone.now()
    _message_set(run, message)
    run.save(update_fields=["status", "finished_at", "message", "message_stored"])
    Source.objects.filter(pk=run.source_id).update(last_crawled_at=run.finished_at)


def run_imported(
    *, source: Source, created: int, updated: int, deactivated: int, unchanged: int, message: Text
) -> CrawlRun:
    """A finished run for an import into `source` (a document, Q/A pairs, fragments: one "page"),
    so the sources page shows imports beside crawls; the source counts as crawled now."""
    now = timezone.now()
    text, message_stored = stored_pair(message, MESSAGE_MAX)
    run = CrawlRun.objects.create(
        bot_id=source.bot_id, source=source, status=CrawlRun.Status.DONE, pages_total=1, pages_done=1, fetched=1,
        entries_created=created, entries_updated=updated, entries_deactivated=deactivated, unchanged=unchanged,
        message=text, message_stored=message_stored, finished_at=now,
    )
    source.last_crawled_at = now
    source.save(update_fields=["last_crawled_at"])
    return run


def _message_set(run: CrawlRun, message: Text) -> None:
    if message:
        run.message, run.message_stored = stored_pair(message, MESSAGE_MAX)
