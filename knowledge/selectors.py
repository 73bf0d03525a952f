"""Reads of the knowledge base for the apps above it (review, feedback): they see entries through
these functions, never through the tables. Every read is scoped to one bot."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from assistant.bots.models import Bot
from knowledge.models import CrawlRun, Entry, Lexeme, Source
from knowledge.services import OWNER_ANSWERS_KINDS


@dataclass(frozen=True)
class EntryCard:
    """What a reviewer sees of a source: enough to judge it and open it."""

    entry_id: int
    kind: str
    title: str
    text: str
    url: str
    review_needed: bool
    active: bool


def entry_cards(*, bot: Bot, entry_ids: Iterable[int]) -> dict[int, EntryCard]:
    ids = [int(i) for i in entry_ids]
    if not ids:
        return {}
    rows = Entry.objects.filter(bot=bot, pk__in=ids).select_related("page").only(
        "pk", "kind", "title", "text", "url", "review_needed", "active", "page__review_needed"
    )
    return {
        e.pk: EntryCard(
            entry_id=e.pk, kind=e.kind, title=e.title, text=e.text, url=e.url, active=e.active,
            review_needed=e.review_needed or bool(e.page and e.page.review_needed),
        )
        for e in rows
    }


def lexicon_counts(*, bot: Bot, lexemes: Iterable[str]) -> tuple[dict[str, int], int]:
    """How many of the bot's active entries hold each of `lexemes` (Snowball 'russian' stems; absent:
    0), and how many entries there are: the lexicon search weighs words by."""
    wanted = {w for w in lexemes if w}
    rows = dict(Lexeme.objects.filter(bot=bot, lexeme__in=[*wanted, ""]).values_list("lexeme", "df"))
    return {w: rows.get(w, 0) for w in wanted}, rows.get("", 0)


def owner_answer(*, bot: Bot, key: str) -> Entry | None:
    """An active owner answer (correction, Q/A) of this bot by its key: the public answer page."""
    if not key or len(key) > 500:
        return None
    return Entry.objects.filter(bot=bot, key=key, active=True, kind__in=OWNER_ANSWERS_KINDS).first()


# --- for the REST API: querysets it pages through, always of one bot ------------------------------

ENTRY_API_FIELDS = ("pk", "bot_id", "kind", "title", "text", "url", "weight", "active", "review_needed",
                    "created_at", "updated_at")


def entries_of(*, bot: Bot) -> QuerySet[Entry]:
    """The bot's entries without their vectors (a vector is 1.5 KB a row, and no reader shows it)."""
    return Entry.objects.filter(bot=bot).only(*ENTRY_API_FIELDS)


def entry_versions(*, entry: Entry) -> QuerySet[Any]:
    """Every version of one entry, newest first (django-simple-history's rows)."""
    return entry.history.all().order_by("-history_id")


def sources_of(*, bot: Bot) -> QuerySet[Source]:
    return Source.objects.filter(bot=bot)


def crawl_runs(*, bot: Bot, run_ids: Iterable[int]) -> dict[int, CrawlRun]:
    return {run.pk: run for run in CrawlRun.objects.filter(bot=bot, pk__in=list(run_ids))}


def latest_run_ids(*, sources: Iterable[Source]) -> dict[int, int]:
    """{source id: its newest crawl run's id}, in one query."""
    rows = (CrawlRun.objects.filter(source__in=list(sources)).order_by("source_id", "-started_at", "-id")
            .distinct("source_id").values_list("source_id", "pk"))
    return dict(rows)
