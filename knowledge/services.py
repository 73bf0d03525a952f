"""Writes to the knowledge base. Crawls, imports, the admin and commands all go through here, so
that a re-run updates the same rows (by `key`) and never creates twins."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.db import transaction

from assistant.bots.models import Bot
from knowledge.models import Entry, Page, Source

Outcome = Literal["created", "updated", "unchanged"]

# Weights by kind when the caller gives none: owner-written knowledge outranks page text.
DEFAULT_WEIGHT = {
    Entry.Kind.CHUNK: 0.5,
    Entry.Kind.QA: 0.8,
    Entry.Kind.CORRECTION: 1.0,
    Entry.Kind.OPERATOR_ANSWER: 0.7,
}


@dataclass(frozen=True)
class EntryDraft:
    """What an importer or the crawler extracted, before it is stored."""

    key: str
    title: str
    text: str
    url: str = ""
    heading_path: str = ""
    kind: str = Entry.Kind.CHUNK
    weight: float | None = None


def content_hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()


def entry_upsert(
    *, bot: Bot, source: Source | None, draft: EntryDraft, page: Page | None = None
) -> tuple[Entry, Outcome]:
    """Create or update the entry with this key. A changed text drops the stale embedding so the
    next embedding pass re-computes it; an unchanged, active entry is not touched at all."""
    weight = DEFAULT_WEIGHT[Entry.Kind(draft.kind)] if draft.weight is None else draft.weight
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be between 0 and 1")
    digest = content_hash(draft.kind, draft.title, draft.heading_path, draft.text, draft.url, weight)
    entry = Entry.objects.filter(bot=bot, source=source, key=draft.key).first() if draft.key else None
    if entry is None:
        entry = Entry.objects.create(
            bot=bot, source=source, page=page, key=draft.key, kind=draft.kind, title=draft.title[:1000],
            heading_path=draft.heading_path[:1000], text=draft.text, url=draft.url[:2000], weight=weight,
            content_hash=digest,
        )
        return entry, "created"
    if entry.content_hash == digest and entry.active and entry.page_id == (page.pk if page else None):
        return entry, "unchanged"
    text_changed = entry.content_hash != digest
    entry.kind, entry.title, entry.heading_path = draft.kind, draft.title[:1000], draft.heading_path[:1000]
    entry.text, entry.url, entry.weight, entry.page = draft.text, draft.url[:2000], weight, page
    entry.content_hash, entry.active = digest, True
    fields = ["kind", "title", "heading_path", "text", "url", "weight", "page", "content_hash", "active", "updated_at"]
    if text_changed:
        entry.embedding, entry.embedding_model = None, ""
        fields += ["embedding", "embedding_model"]
    entry.save(update_fields=fields)
    return entry, "updated"


def entries_deactivate(*, entries: Iterable[Entry]) -> int:
    """Switch entries off (kept, versioned and restorable), e.g. when their page disappeared."""
    count = 0
    for entry in entries:
        if entry.active:
            entry.active = False
            entry.save(update_fields=["active", "updated_at"])
            count += 1
    return count


@transaction.atomic
def entries_replace_for_page(*, page: Page, drafts: list[EntryDraft]) -> dict[str, int]:
    """Store a page's chunks: upsert each, deactivate the page's chunks that are gone.
    Atomic per page, so a crawl that fails halfway keeps every page it already finished."""
    counts = {"created": 0, "updated": 0, "unchanged": 0, "deactivated": 0}
    keep: set[str] = set()
    for draft in drafts:
        _entry, outcome = entry_upsert(bot=page.bot, source=page.source, draft=draft, page=page)
        counts[outcome] += 1
        keep.add(draft.key)
    stale = Entry.objects.filter(page=page, active=True).exclude(key__in=keep)
    counts["deactivated"] = entries_deactivate(entries=stale)
    return counts


def page_deactivate(*, page: Page, reason: str) -> int:
    """A page that disappeared from the site: mark it gone and switch its entries off."""
    with transaction.atomic():
        page.status, page.active, page.reason = Page.Status.GONE, False, reason[:500]
        page.save(update_fields=["status", "active", "reason"])
        return entries_deactivate(entries=Entry.objects.filter(page=page, active=True))


def source_get_or_create(*, bot: Bot, kind: str, url: str = "", title: str = "") -> Source:
    source, _created = Source.objects.get_or_create(
        bot=bot, kind=kind, url=url, defaults={"title": title or url}
    )
    return source


def entry_save_from_admin(*, entry: Entry, changed_fields: list[str]) -> Entry:
    """Save an owner's edit. New text needs a new vector: drop the stale one and embed after commit,
    so the change takes effect on the next question."""
    if not entry.pk or {"title", "heading_path", "text"} & set(changed_fields):
        entry.embedding, entry.embedding_model = None, ""
    weight = entry.weight
    entry.content_hash = content_hash(entry.kind, entry.title, entry.heading_path, entry.text, entry.url, weight)
    entry.save()
    if not entry.embedding_model:
        from knowledge.indexing import embedding_request

        embedding_request(bot_id=entry.bot_id)  # on the embed queue, after commit
    return entry
