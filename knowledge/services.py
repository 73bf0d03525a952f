"""Writes to the knowledge base. Crawls, imports, the admin and commands all go through here, so
that a re-run updates the same rows (by `key`) and never creates twins."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.db import transaction

from assistant.bots.models import Bot
from assistant.validators import validate_link, validate_web_url
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
    validate_link(draft.url)
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
        # New content answers for itself: a review flag raised against the old text is dropped.
        entry.embedding, entry.embedding_model, entry.review_needed = None, "", False
        fields += ["embedding", "embedding_model", "review_needed"]
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
    validate_web_url(url)
    source, _created = Source.objects.get_or_create(
        bot=bot, kind=kind, url=url, defaults={"title": title or url}
    )
    return source


def entry_save_from_admin(*, entry: Entry, changed_fields: list[str]) -> Entry:
    """Save an owner's edit. New text needs a new vector: drop the stale one and embed after commit,
    so the change takes effect on the next question. Editing the text of an entry flagged for
    review is the owner's answer to the flag, so the flag is cleared (unless set in the same edit)."""
    validate_link(entry.url)
    if not entry.pk or {"title", "heading_path", "text"} & set(changed_fields):
        entry.embedding, entry.embedding_model = None, ""
        if entry.pk and "review_needed" not in changed_fields:
            entry.review_needed = False
    weight = entry.weight
    entry.content_hash = content_hash(entry.kind, entry.title, entry.heading_path, entry.text, entry.url, weight)
    entry.save()
    if not entry.embedding_model:
        from knowledge.indexing import embedding_request

        embedding_request(bot_id=entry.bot_id)  # on the embed queue, after commit
    return entry


# --- correction memory: owner answers that take effect on the next message ----------------------

OWNER_ANSWERS_TITLE = "Ответы владельца"
OWNER_ANSWERS_KINDS = frozenset({Entry.Kind.CORRECTION, Entry.Kind.QA, Entry.Kind.OPERATOR_ANSWER})


def entry_create_answer(
    *, bot: Bot, question: str, answer: str, kind: str, key: str, url: str = "", weight: float = 1.0,
    reason: str = "",
) -> Entry:
    """An owner's question/answer entry, searchable at once: its vector is computed here and stored
    with the row, and the bot's lexicon learns its words, so the very next message can find it by
    meaning and by words. Call it inside the caller's transaction: nothing is visible before commit."""
    from knowledge.embeddings import get_embedder
    from knowledge.indexing import lexicon_adjust, passage_text

    if kind not in OWNER_ANSWERS_KINDS:
        raise ValueError(f"not an owner answer kind: {kind}")
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be between 0 and 1")
    source = source_get_or_create(bot=bot, kind=Source.Kind.MANUAL, title=OWNER_ANSWERS_TITLE)
    entry = Entry(
        bot=bot, source=source, kind=kind, key=key[:500], title=question[:1000], text=answer, url=url[:2000],
        weight=weight, content_hash=content_hash(kind, question[:1000], "", answer, url[:2000], weight),
    )
    embedder = get_embedder()
    entry.embedding, entry.embedding_model = embedder.passages([passage_text(entry)])[0].tolist(), embedder.key
    if reason:
        entry._change_reason = reason[:100]  # type: ignore[attr-defined]
    entry.save()
    lexicon_adjust(entry_id=entry.pk, delta=1)
    return entry


def entry_withdraw(*, entry: Entry, reason: str = "") -> bool:
    """Switch an owner answer off (an undo): kept and versioned, no longer found."""
    from knowledge.indexing import lexicon_adjust

    locked = Entry.objects.select_for_update().get(pk=entry.pk)
    if not locked.active:
        return False
    locked.active = False
    if reason:
        locked._change_reason = reason[:100]  # type: ignore[attr-defined]
    locked.save(update_fields=["active", "updated_at"])
    lexicon_adjust(entry_id=locked.pk, delta=-1)
    return True


def entries_flag_for_review(*, bot: Bot, entry_ids: Iterable[int], reason: str = "") -> list[tuple[int, bool]]:
    """Mark the bot's entries `review_needed` (search scores them lower until the owner edits them or
    clears the flag). Returns (entry id, flag before) for each entry of this bot, so that an undo
    can put back exactly what was there; ids of other bots are ignored."""
    flagged: list[tuple[int, bool]] = []
    for entry in Entry.objects.select_for_update().filter(bot=bot, pk__in=list(entry_ids)).order_by("pk"):
        flagged.append((entry.pk, entry.review_needed))
        if not entry.review_needed:
            entry.review_needed = True
            if reason:
                entry._change_reason = reason[:100]  # type: ignore[attr-defined]
            entry.save(update_fields=["review_needed", "updated_at"])
    return flagged


def entries_review_restore(*, bot: Bot, flags: Iterable[tuple[int, bool]], reason: str = "") -> int:
    """Undo `entries_flag_for_review`: each entry gets back the flag it had before. An entry whose
    flag the owner has changed since (edited, cleared) is left as the owner left it."""
    before = dict(flags)
    restored = 0
    for entry in Entry.objects.select_for_update().filter(bot=bot, pk__in=list(before)).order_by("pk"):
        if entry.review_needed and not before[entry.pk]:
            entry.review_needed = False
            if reason:
                entry._change_reason = reason[:100]  # type: ignore[attr-defined]
            entry.save(update_fields=["review_needed", "updated_at"])
            restored += 1
    return restored
