"""A crawl's or an import's run (`CrawlRun`): the writes of its row. Its vectors are recounted
while they fill in (`run_counts_refresh`, `live_runs_refresh`) and it ends done or failed
(`run_finish`); what the embedded counts mean is in progress.py.

What must stay true: every write is a `Model.save()` of the fields it changes, so post_save
receivers hear a finished run (owner/insights/receivers.py).
"""

from __future__ import annotations

from typing import Final

from django.utils import timezone

from core.texts import Text, stored_pair
from knowledge.models import CrawlRun, Source
from knowledge.progress import LIVE, run_embedded_counts, source_pending

MESSAGE_MAX: Final = 5000


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


def _message_set(run: CrawlRun, message: Text) -> None:
    if message:
        run.message, run.message_stored = stored_pair(message, MESSAGE_MAX)
