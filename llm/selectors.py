"""Reads of the run journal and the usage lines, for the pages and commands of higher apps
(they read these rows through here, never the tables themselves)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate

from llm.models import RunEvent, Usage


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


def usage_by_day(*, bot_id: int, since: Any, tzinfo: Any) -> list[dict[str, Any]]:
    """The bot's billing lines since `since`, summed per local day (in `tzinfo`), route and model:
    {day, route, model, calls, input_tokens, output_tokens, cost}, newest day first. One grouped
    query over the (bot, created_at) index."""
    rows = (
        Usage.objects.filter(bot_id=bot_id, created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=tzinfo))
        .values("day", "route", "model")
        .annotate(calls=Count("id"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
                  cost=Sum("cost_usd"))
        .order_by("-day", "route", "model")
    )
    return list(rows)
