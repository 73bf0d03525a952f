"""Reads of the run journal and the usage lines, for the pages and commands of higher apps
(they read these rows through here, never the tables themselves)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from assistant.llm.models import RunEvent, Usage


def run_events(*, bot_id: int, run_ids: Iterable[int] | None = None) -> QuerySet[RunEvent]:
    """The journal rows of a bot's route runs (all of them, or those of `run_ids`), in the order
    they happened."""
    rows = RunEvent.objects.filter(bot_id=bot_id, run_id__isnull=False)
    if run_ids is not None:
        rows = rows.filter(run_id__in=list(run_ids))
    return rows.order_by("run_id", "created_at", "id")


def run_usage(*, bot_id: int, run_id: int) -> QuerySet[Usage]:
    """The billing lines of one run, one per model call, in call order."""
    return Usage.objects.filter(bot_id=bot_id, run_id=run_id).order_by("created_at", "id")
