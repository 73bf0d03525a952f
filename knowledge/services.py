"""Writes to the knowledge base. Crawls, imports, the admin and commands all go through here, so
that a re-run updates the same rows (by `key`) and never creates twins. This is the one module that
writes an `Entry` (tests/test_writers.py): one by one, in bulk for passage files
(`entries_replace_in_bulk`), its versions' reverts (`entry_revert`) and the vectors of the
embedding pass (`entry_vectors_store`, called by knowledge/indexing.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from simple_history.utils import bulk_create_with_history, bulk_update_with_history

from bots.models import Bot
from core.texts import Text, stored_pair
from core.validators import validate_link, validate_web_url
from knowledge.drafts import (
    DEFAULT_WEIGHT,
    QA_SOURCE_TITLE,
    EntryDraft,
    Outcome,
    content_hash,
    passage_text,
    question_key,
)
from knowledge.lexicon import lexicon_adjust, lexicon_refresh
from knowledge.models import Entry, Page, Source, Wording
from knowledge.versions import REASON_REVERT, RESTORED_FIELDS, reason_written

T = TypeVar("T")


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
        question_wording_sync(entry=entry)
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
    question_wording_sync(entry=entry)
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


# --- entries in bulk: a passage file of 100k lines (knowledge/importing.py) ------------------------

BULK_BATCH = 1000


def entries_replace_in_bulk(*, bot: Bot, source: Source, drafts: list[EntryDraft]) -> dict[str, int]:
    """`entries_replace_for_page` for 100k rows, the source's whole content: one query reads what
    exists, new rows are inserted and changed rows updated in batches of BULK_BATCH, each with its
    history rows (simple_history's bulk helpers; plain bulk_create would leave entries without a first
    version to roll back to), and the source's entries no longer drafted are switched off. Inside
    the caller's transaction. Returns the counts: created, updated, unchanged, deactivated."""
    existing = {
        key: (pk, digest, active)
        for key, pk, digest, active in Entry.objects.filter(bot=bot, source=source).values_list(
            "key", "pk", "content_hash", "active"
        )
    }
    new: list[Entry] = []
    changed: dict[int, EntryDraft] = {}
    unchanged = 0
    for draft in drafts:
        known = existing.get(draft.key)
        if known is None:
            new.append(_new_entry(bot, source, draft))
        elif known[1] == _draft_hash(draft) and known[2]:
            unchanged += 1
        else:
            changed[known[0]] = draft
    for batch in _batches(new):
        bulk_create_with_history(batch, Entry, batch_size=BULK_BATCH)
    _bulk_update(changed)
    keep = {draft.key for draft in drafts}
    stale = [pk for key, (pk, _digest, active) in existing.items() if active and key not in keep]
    _bulk_deactivate(stale)
    return {"created": len(new), "updated": len(changed), "unchanged": unchanged, "deactivated": len(stale)}


def _draft_hash(draft: EntryDraft) -> str:
    """The same digest `entry_upsert` stores, so either writer recognises the other's rows."""
    weight = DEFAULT_WEIGHT[Entry.Kind(draft.kind)] if draft.weight is None else draft.weight
    return content_hash(draft.kind, draft.title, draft.heading_path, draft.text, draft.url, weight)


def _new_entry(bot: Bot, source: Source, draft: EntryDraft) -> Entry:
    return Entry(
        bot=bot, source=source, key=draft.key, kind=draft.kind, title=draft.title[:1000],
        heading_path=draft.heading_path[:1000], text=draft.text, url=draft.url[:2000],
        weight=DEFAULT_WEIGHT[Entry.Kind(draft.kind)], content_hash=_draft_hash(draft),
    )


def _bulk_update(changed: dict[int, EntryDraft]) -> None:
    """New text drops the stale vector; a row that was only switched off keeps it."""
    now = timezone.now()
    fields = ["title", "heading_path", "text", "url", "content_hash", "active", "embedding",
              "embedding_model", "updated_at"]
    for pks in _batches(list(changed)):
        entries = list(Entry.objects.filter(pk__in=pks).defer("search_vector"))
        for entry in entries:
            draft = changed[entry.pk]
            digest = _draft_hash(draft)
            if digest != entry.content_hash:
                entry.embedding, entry.embedding_model = None, ""
            entry.title, entry.heading_path = draft.title[:1000], draft.heading_path[:1000]
            entry.text, entry.url, entry.content_hash = draft.text, draft.url[:2000], digest
            entry.active, entry.updated_at = True, now
        bulk_update_with_history(entries, Entry, fields, batch_size=BULK_BATCH)


def _bulk_deactivate(pks: list[int]) -> None:
    now = timezone.now()
    for batch in _batches(pks):
        entries = list(Entry.objects.filter(pk__in=batch).defer("search_vector", "embedding"))
        for entry in entries:
            entry.active, entry.updated_at = False, now
        bulk_update_with_history(entries, Entry, ["active", "updated_at"], batch_size=BULK_BATCH)


def _batches(items: list[T]) -> list[list[T]]:
    return [items[start : start + BULK_BATCH] for start in range(0, len(items), BULK_BATCH)]


# --- vectors: the embedding pass's writes (knowledge/indexing.py) -----------------------------------


def entry_vectors_store(*, entries: Sequence[Entry], vectors: Sequence[str], model_key: str) -> None:
    """One batch of the embedding pass: each entry's vector (a pgvector literal) and the model's key,
    in one pipelined round trip instead of one UPDATE per entry through the ORM. No version: a
    vector is not content. Written only where the entry's content_hash is still the one that was
    embedded, so an entry edited meanwhile keeps no stale vector."""
    rows = [(vector, model_key, entry.pk, entry.content_hash) for entry, vector in zip(entries, vectors, strict=True)]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE knowledge_entry SET embedding = %s::vector, embedding_model = %s "
            "WHERE id = %s AND content_hash = %s",
            rows,
        )


def embeddings_reset(*, bot_id: int) -> int:
    """Forget a bot's vectors, so that the next pass re-embeds everything (`reembed --all`)."""
    return Entry.objects.filter(bot_id=bot_id).update(embedding=None, embedding_model="")


def page_deactivate(*, page: Page, reason: Text) -> int:
    """A page that disappeared from the site: mark it gone and switch its entries off. `reason`: a
    stored text (core/texts.py), kept untranslated beside its Russian."""
    with transaction.atomic():
        page.status, page.active = Page.Status.GONE, False
        page.reason, page.reason_stored = stored_pair(reason, 500)
        page.save(update_fields=["status", "active", "reason", "reason_stored"])
        return entries_deactivate(entries=Entry.objects.filter(page=page, active=True))


def document_delete(*, source: Source, reason: str = "") -> int:
    """Remove an uploaded document: each of its active entries is switched off as a new version
    (with `reason`; restorable from its history, as every removal here is), its words leave the
    bot's lexicon and search at once, and the source row goes with its import runs, so the document
    leaves the lists. Returns how many entries were switched off."""
    if source.kind != Source.Kind.DOCUMENT:
        raise ValueError(f"source {source.pk} is a {source.kind}, not a document")
    with transaction.atomic():
        locked = Source.objects.select_for_update().get(pk=source.pk)  # an upload of it waits, or went first
        count = 0
        for entry in Entry.objects.select_for_update().filter(source=locked, active=True).order_by("pk"):
            entry.active = False
            if reason:
                entry._change_reason = reason[:100]  # type: ignore[attr-defined]
            entry.save(update_fields=["active", "updated_at"])
            count += 1
        locked.delete()  # the entries stay, without a source (Entry.source is SET_NULL)
        if count:
            lexicon_refresh(bot_id=locked.bot_id)  # one rebuild, not one adjustment per chunk
    return count


def source_get_or_create(*, bot: Bot, kind: str, url: str = "", title: str = "") -> Source:
    """A source by its address, or by its title when it has none (typed pairs, API entries, owner
    answers and passage files are all address-less manual sources: by kind and address alone they
    would be one row, or several that a lookup cannot choose between)."""
    validate_web_url(url)
    if url:
        source, _created = Source.objects.get_or_create(bot=bot, kind=kind, url=url, defaults={"title": title or url})
    else:
        source, _created = Source.objects.get_or_create(bot=bot, kind=kind, url="", title=title[:300])
    return source


def source_schedule(*, source: Source, recrawl_hours: int | None) -> Source:
    """How often a source is fetched again by itself (None: only by hand); 1 h to a year."""
    from knowledge.exceptions import SourceInvalid

    if recrawl_hours is not None and not 1 <= recrawl_hours <= 24 * 365:
        raise SourceInvalid(_("Обновлять можно не чаще раза в час и не реже раза в год (от 1 до 8760 часов)."))
    source.recrawl_hours = recrawl_hours
    source.save(update_fields=["recrawl_hours"])
    return source


def entry_save_from_admin(*, entry: Entry, changed_fields: list[str], reason: str = "") -> Entry:
    """Save an owner's edit in the admin's form (or a new entry typed there): `entry` carries the
    form's values. Checked like any entry a person writes (`EntryInvalid`, nothing saved), then
    the same bookkeeping as `entry_edit`: new wording gets a new vector at once and answers a review
    flag (unless the flag was set in the same edit), the bot's lexicon counts the old words out and
    the new ones in (and the entry out or in when it is switched off or on, or created), and a Q/A
    pair's key follows its question. One version, with `reason`."""
    from knowledge.exceptions import EntryInvalid

    problems = entry_problems(kind=entry.kind, title=entry.title, text=entry.text, url=entry.url, weight=entry.weight)
    if problems:
        raise EntryInvalid(problems)
    with transaction.atomic():
        stored = Entry.objects.select_for_update().defer("embedding")
        before = stored.filter(pk=entry.pk).first() if entry.pk else None
        return _entry_store(entry=entry, before=before, fields=None,
                            keep_review="review_needed" in changed_fields, reason=reason)


# --- correction memory: owner answers that take effect on the next message ----------------------

OWNER_ANSWERS_TITLE = "Ответы владельца"
OWNER_ANSWERS_KINDS = frozenset({Entry.Kind.CORRECTION, Entry.Kind.QA, Entry.Kind.OPERATOR_ANSWER})


def entry_create_answer(
    *, bot: Bot, question: str, answer: str, kind: str, key: str, url: str = "", weight: float = 1.0,
    reason: str = "", wordings: Sequence[tuple[str, str]] = (), supersedes: Sequence[int] = (),
) -> Entry:
    """An owner's question/answer entry, searchable at once: its vector is computed here and stored
    with the row, and the bot's lexicon learns its words, so the very next message can find it by
    meaning and by words. `wordings`: more ways to ask the question, as (text, Wording.Origin);
    `supersedes`: a correction's culprits, ids of this bot's entries (lowered for its question only,
    knowledge/search.py). Call it inside the caller's transaction: nothing is visible before commit."""
    from knowledge.embeddings import get_embedder

    if kind not in OWNER_ANSWERS_KINDS:
        raise ValueError(f"not an owner answer kind: {kind}")
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be between 0 and 1")
    source = source_get_or_create(bot=bot, kind=Source.Kind.MANUAL, title=OWNER_ANSWERS_TITLE)
    entry = Entry(
        bot=bot, source=source, kind=kind, key=key[:500], title=question[:1000], text=answer, url=url[:2000],
        weight=weight, content_hash=content_hash(kind, question[:1000], "", answer, url[:2000], weight),
        supersedes=sorted({int(i) for i in supersedes}),
    )
    embedder = get_embedder()
    entry.embedding, entry.embedding_model = embedder.passages([passage_text(entry)])[0].tolist(), embedder.key
    if reason:
        entry._change_reason = reason[:100]  # type: ignore[attr-defined]
    entry.save()
    question_wording_sync(entry=entry)
    entry_wordings_add(entry=entry, wordings=wordings)
    lexicon_adjust(entry_id=entry.pk, delta=1)
    return entry


# --- wordings: the ways a visitor asks an owner answer's question --------------------------------

WORDING_MAX = 1000


def question_wording_sync(*, entry: Entry) -> None:
    """An owner answer's own question is its first wording: created with it, following its title
    when it changes (the vector is computed again by the next embedding pass, or here when the
    entry has its vector already). Other kinds of entries have no wordings."""
    if entry.kind not in OWNER_ANSWERS_KINDS or not entry.title.strip():
        return
    text = " ".join(entry.title.split())[:WORDING_MAX]
    own = Wording.objects.filter(entry=entry, origin=Wording.Origin.QUESTION).first()
    if own is not None and own.text == text:
        return
    Wording.objects.filter(entry=entry, text=text).exclude(origin=Wording.Origin.QUESTION).delete()
    if own is None:
        own = Wording(bot_id=entry.bot_id, entry=entry, origin=Wording.Origin.QUESTION)
    own.text = text
    _wording_embed(own, with_vector=bool(entry.embedding_model))
    own.save()


def entry_wordings_add(*, entry: Entry, wordings: Iterable[tuple[str, str]]) -> list[Wording]:
    """More ways to ask an owner answer's question, each with its query vector at once; a wording the
    entry has already (spaces aside) is skipped. Returns the wordings added."""
    if entry.kind not in OWNER_ANSWERS_KINDS:
        raise ValueError(f"only owner answers have wordings, not {entry.kind}")
    known = set(Wording.objects.filter(entry=entry).values_list("text", flat=True))
    added: list[Wording] = []
    for raw, origin in wordings:
        text = " ".join(str(raw).split())[:WORDING_MAX]
        if not text or text in known:
            continue
        known.add(text)
        wording = Wording(bot_id=entry.bot_id, entry=entry, text=text, origin=Wording.Origin(origin))
        _wording_embed(wording, with_vector=True)
        wording.save()
        added.append(wording)
    return added


def entry_wordings_delete(*, entry: Entry, wording_ids: Iterable[int]) -> int:
    """Take wordings off an owner answer; its own question stays (it follows the title)."""
    deleted, _rows = Wording.objects.filter(entry=entry, pk__in=list(wording_ids)).exclude(
        origin=Wording.Origin.QUESTION).delete()
    return deleted


def _wording_embed(wording: Wording, *, with_vector: bool) -> None:
    """A wording's query vector (compared question to question), or none yet."""
    from knowledge.embeddings import get_embedder

    if not with_vector:
        wording.embedding, wording.embedding_model = None, ""
        return
    embedder = get_embedder()
    wording.embedding, wording.embedding_model = embedder.query(wording.text).tolist(), embedder.key


def entry_withdraw(*, entry: Entry, reason: str = "") -> bool:
    """Switch an owner answer off (an undo): kept and versioned, no longer found."""
    locked = Entry.objects.select_for_update().get(pk=entry.pk)
    if not locked.active:
        return False
    locked.active = False
    if reason:
        locked._change_reason = reason[:100]  # type: ignore[attr-defined]
    locked.save(update_fields=["active", "updated_at"])
    lexicon_adjust(entry_id=locked.pk, delta=-1)
    return True


def _review_flag_save(entry: Entry, flagged: bool, reason: str) -> None:
    """One version of `entry` with its review flag set to `flagged` (the caller holds its row lock)."""
    entry.review_needed = flagged
    if reason:
        entry._change_reason = reason[:100]  # type: ignore[attr-defined]
    entry.save(update_fields=["review_needed", "updated_at"])


def entries_flag_for_review(*, bot: Bot, entry_ids: Iterable[int], reason: str = "") -> list[tuple[int, bool]]:
    """Mark the bot's entries `review_needed` (search scores them lower until the owner edits them or
    clears the flag). Returns (entry id, flag before) for each entry of this bot, so that an undo
    can put back exactly what was there; ids of other bots are ignored."""
    flagged: list[tuple[int, bool]] = []
    for entry in Entry.objects.select_for_update().filter(bot=bot, pk__in=list(entry_ids)).order_by("pk"):
        flagged.append((entry.pk, entry.review_needed))
        if not entry.review_needed:
            _review_flag_save(entry, True, reason)
    return flagged


def entries_review_restore(*, bot: Bot, flags: Iterable[tuple[int, bool]], reason: str = "") -> int:
    """Undo `entries_flag_for_review`: each entry gets back the flag it had before. An entry whose
    flag the owner has changed since (edited, cleared) is left as the owner left it."""
    before = dict(flags)
    restored = 0
    for entry in Entry.objects.select_for_update().filter(bot=bot, pk__in=list(before)).order_by("pk"):
        if entry.review_needed and not before[entry.pk]:
            _review_flag_save(entry, False, reason)
            restored += 1
    return restored


def entries_review_clear(*, bot: Bot, entry_ids: Iterable[int], reason: str = "") -> int:
    """The owner has checked these entries of the bot: their review flags are cleared (search no
    longer scores them lower), one version each with `reason`. Ids of other bots and entries not
    flagged are left alone. Returns how many flags were cleared."""
    cleared = 0
    with transaction.atomic():
        flagged = Entry.objects.select_for_update().filter(bot=bot, pk__in=list(entry_ids), review_needed=True)
        for entry in flagged.defer("embedding").order_by("pk"):
            _review_flag_save(entry, False, reason)
            cleared += 1
    return cleared


# --- entries written one by one: the REST API (and any form that edits a single entry) --------------

API_SOURCE_TITLE = "Записи через API"
CREATABLE_KINDS = frozenset({Entry.Kind.QA, Entry.Kind.CHUNK})
EDITABLE_FIELDS = ("title", "text", "url", "weight", "active")
TITLE_MAX = 1000
TEXT_MAX = 20000


def entry_problems(*, kind: str, title: str, text: str, url: str, weight: float) -> dict[str, str]:
    """What is wrong with an entry's content, by field, in words for the owner; empty when nothing."""
    from django.core.exceptions import ValidationError

    problems: dict[str, str] = {}
    if kind == Entry.Kind.QA and not title.strip():
        problems["title"] = _("у пары «вопрос — ответ» нужен вопрос (title)")
    elif len(title) > TITLE_MAX:
        problems["title"] = _("заголовок длиннее %(max)s символов") % {"max": TITLE_MAX}
    limit = 5000 if kind == Entry.Kind.QA else TEXT_MAX
    if not text.strip():
        problems["text"] = _("пустой текст")
    elif len(text) > limit:
        problems["text"] = _("текст длиннее %(max)s символов (сейчас %(n)s)") % {"max": limit, "n": len(text)}
    if not 0.0 <= weight <= 1.0:
        problems["weight"] = _("вес должен быть от 0 до 1")
    try:
        validate_link(url)
    except ValidationError as exc:
        problems["url"] = " ".join(exc.messages)
    for name, value in (("title", title), ("text", text), ("url", url)):
        if "\x00" in value or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
            problems[name] = _("недопустимые символы (NUL или половина суррогатной пары)")
    return problems


def _embed_into(entry: Entry) -> None:
    """Put the entry's vector on the row before it is saved: searchable by meaning at once."""
    from knowledge.embeddings import get_embedder

    embedder = get_embedder()
    entry.embedding, entry.embedding_model = embedder.passages([passage_text(entry)])[0].tolist(), embedder.key


def _qa_key_free(*, entry: Entry) -> None:
    from knowledge.exceptions import EntryConflict

    twin = Entry.objects.filter(bot_id=entry.bot_id, source=entry.source, key=entry.key).exclude(pk=entry.pk)
    twin_id = twin.values_list("pk", flat=True).first()
    if twin_id is not None:
        raise EntryConflict(twin_id)


def entry_create(
    *, bot: Bot, kind: str, title: str, text: str, url: str = "", weight: float | None = None,
    active: bool = True, reason: str = "",
) -> Entry:
    """One entry from a person or another system, searchable at once (vector and lexicon written with
    it). A Q/A pair joins the bot's typed pairs, keyed by its question: the same question again is
    an `EntryConflict` naming the existing entry, never a twin. Anything wrong: `EntryInvalid`,
    nothing saved."""
    from knowledge.exceptions import EntryInvalid

    if kind not in CREATABLE_KINDS:
        raise EntryInvalid({"kind": _("через API создаются записи вида qa (вопрос-ответ) или chunk (фрагмент)")})
    weight = DEFAULT_WEIGHT[Entry.Kind(kind)] if weight is None else weight
    problems = entry_problems(kind=kind, title=title, text=text, url=url, weight=weight)
    if problems:
        raise EntryInvalid(problems)
    with transaction.atomic():
        source_title = QA_SOURCE_TITLE if kind == Entry.Kind.QA else API_SOURCE_TITLE
        source, _created = Source.objects.get_or_create(bot=bot, kind=Source.Kind.MANUAL, title=source_title)
        entry = Entry(
            bot=bot, source=source, kind=kind, key=question_key(title) if kind == Entry.Kind.QA else "",
            title=title, text=text, url=url, weight=weight, active=active,
            content_hash=content_hash(kind, title, "", text, url, weight),
        )
        if entry.key:
            _qa_key_free(entry=entry)
        _embed_into(entry)
        if reason:
            entry._change_reason = reason[:100]  # type: ignore[attr-defined]
        entry.save()
        if entry.active:
            lexicon_adjust(entry_id=entry.pk, delta=1)
    return entry


def entry_edit(*, entry: Entry, changes: dict[str, object], reason: str = "") -> Entry:
    """Change some of EDITABLE_FIELDS of one entry, as one new version. New wording gets a new vector
    at once and answers a review flag (as an edit in the admin does); switching it off or on counts
    its words out of or into the bot's lexicon. `active: False` is how an entry is removed: kept,
    versioned, restorable."""
    from knowledge.exceptions import EntryInvalid

    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise EntryInvalid({name: _("поле %(name)s не меняется") % {"name": name} for name in sorted(unknown)})
    with transaction.atomic():
        current = Entry.objects.select_for_update().get(pk=entry.pk)
        before = Entry(pk=current.pk, bot_id=current.bot_id, kind=current.kind, title=current.title,
                       heading_path=current.heading_path, text=current.text, active=current.active)
        for name, value in changes.items():
            setattr(current, name, value)
        problems = entry_problems(
            kind=current.kind, title=current.title, text=current.text, url=current.url, weight=current.weight
        )
        if problems:
            raise EntryInvalid(problems)
        return _entry_store(entry=current, before=before, fields=[*EDITABLE_FIELDS, "content_hash", "updated_at"],
                            reason=reason)


def entry_title_twin(*, entry_id: int | None, kind: str, title: str) -> int | None:
    """The id of the bot's other entry that a Q/A pair would collide with if its question became
    `title` (its key follows its question, see `_entry_store`); None when there is none, or when
    the key would not change. For forms, to say so before saving."""
    stored = Entry.objects.select_related("source").filter(pk=entry_id).first() if entry_id else None
    if stored is None or kind != Entry.Kind.QA or not stored.key or stored.key != question_key(stored.title):
        return None
    twin = Entry.objects.filter(bot_id=stored.bot_id, source=stored.source, key=question_key(title))
    return twin.exclude(pk=stored.pk).values_list("pk", flat=True).first()


def _entry_store(
    *, entry: Entry, before: Entry | None, fields: list[str] | None, keep_review: bool = False, reason: str = "",
) -> Entry:
    """What every write of one entry by a person shares (`entry_edit`, `entry_save_from_admin`), inside
    the caller's transaction. `entry` carries the new values; `before` is the stored row as it was
    (locked by the caller; None: a new entry). A Q/A pair's key follows its question; new wording
    (or another bot) gets a new vector at once and answers a review flag unless `keep_review`; the
    lexicon counts the stored words out (before the save: they are read from the row) and the new
    ones in (after it), whenever the wording changed or the entry was switched off or on; one
    version with `reason`. `fields`: the update_fields of the save, None to save every field."""
    fields = None if fields is None else list(fields)
    was_active = before is not None and before.active
    reworded = before is None or before.bot_id != entry.bot_id or passage_text(entry) != passage_text(before)
    if (before is not None and entry.kind == Entry.Kind.QA and entry.key
            and entry.key == question_key(before.title)):
        entry.key = question_key(entry.title)
        _qa_key_free(entry=entry)
        if fields is not None:
            fields.append("key")
    if was_active and (reworded or not entry.active):
        lexicon_adjust(entry_id=entry.pk, delta=-1)  # counts the stored (old) words out
    if reworded or (entry.active and not entry.embedding_model):
        _embed_into(entry)
        if fields is not None:
            fields += ["embedding", "embedding_model"]
    if reworded and before is not None and not keep_review:
        entry.review_needed = False
        if fields is not None:
            fields.append("review_needed")
    entry.content_hash = content_hash(entry.kind, entry.title, entry.heading_path, entry.text, entry.url, entry.weight)
    if reason:
        entry._change_reason = reason[:100]  # type: ignore[attr-defined]
    entry.save(update_fields=fields)
    question_wording_sync(entry=entry)
    if entry.active and (reworded or not was_active):
        lexicon_adjust(entry_id=entry.pk, delta=1)
    return entry


def entry_revert(*, entry: Entry, history_id: int) -> Entry:
    """Restore the content of version `history_id` of this entry (knowledge/versions.py: what a
    version restores, and why it was made), as one more version.

    A changed text drops the vector (it described the newer text), so the next embedding pass
    re-embeds it; scheduling that pass after commit is the caller's job, as for any edit. The
    entry row is locked so a concurrent edit cannot interleave with the revert.
    """
    from knowledge.exceptions import EntryVersionNotFound

    with transaction.atomic():
        current = Entry.objects.select_for_update().get(pk=entry.pk)
        record = current.history.filter(history_id=history_id).first()
        if record is None:
            raise EntryVersionNotFound(entry.pk, history_id)
        old = record.instance
        text_before = passage_text(current)
        for name in RESTORED_FIELDS:
            setattr(current, name, getattr(old, name))
        fields = [*RESTORED_FIELDS, "updated_at"]
        if passage_text(current) != text_before:
            current.embedding, current.embedding_model = None, ""
            fields += ["embedding", "embedding_model"]
        current._change_reason = reason_written(REASON_REVERT, n=history_id)  # type: ignore[attr-defined]
        current.save(update_fields=fields)
    return current


def entry_restore_version(*, entry: Entry, history_id: int) -> Entry:
    """Revert to an old version (`entry_revert`, itself a new version) and make the result
    searchable at once: its vector and its words in the lexicon."""
    with transaction.atomic():
        was_active = Entry.objects.select_for_update().filter(pk=entry.pk).values_list("active", flat=True).get()
        if was_active:
            lexicon_adjust(entry_id=entry.pk, delta=-1)
        current = entry_revert(entry=entry, history_id=history_id)
        if not current.embedding_model and current.active:
            _embed_into(current)
            # A plain UPDATE: the vector is not content, and must not make a version of its own.
            Entry.objects.filter(pk=current.pk).update(
                embedding=current.embedding, embedding_model=current.embedding_model
            )
        if current.active:
            lexicon_adjust(entry_id=current.pk, delta=1)
    return current


# --- sources added by a person or another system -------------------------------------------------

CRAWLABLE_KINDS = frozenset({Source.Kind.SITE, Source.Kind.SITEMAP})


def source_create(
    *, bot: Bot, kind: str, url: str, title: str = "", max_pages: int | None = None,
    recrawl_hours: int | None = None,
) -> Source:
    """A site or a sitemap to crawl. The same address twice is refused (naming the existing
    source); the crawl itself starts with `source_crawl` (crawler.py)."""
    from django.conf import settings
    from django.core.exceptions import ValidationError

    from knowledge.exceptions import SourceInvalid

    if kind not in CRAWLABLE_KINDS:
        raise SourceInvalid(
            _("Добавить можно сайт (site) или карту сайта (sitemap); документы — через загрузку файла."))
    try:
        validate_web_url(url)
    except ValidationError as exc:
        raise SourceInvalid(" ".join(exc.messages)) from exc
    if not url:
        raise SourceInvalid(_("Укажите адрес сайта или карты сайта: https://…"))
    limit = settings.CRAWL_MAX_PAGES
    if max_pages is not None and not 1 <= max_pages <= limit:
        raise SourceInvalid(_("Предел страниц — от 1 до %(max)s.") % {"max": limit})
    if recrawl_hours is not None and not 1 <= recrawl_hours <= 24 * 365:
        raise SourceInvalid(_("Обходить можно не чаще раза в час и не реже раза в год (recrawl_hours от 1 до 8760)."))
    with transaction.atomic():
        existing = Source.objects.filter(bot=bot, kind=kind, url=url).values_list("pk", flat=True).first()
        if existing is not None:
            raise SourceInvalid(_("Этот адрес уже есть в источниках бота: источник №%(id)s.") % {"id": existing})
        return Source.objects.create(
            bot=bot, kind=kind, url=url, title=title.strip()[:300] or url[:300],
            max_pages=max_pages if max_pages is not None else min(500, limit), recrawl_hours=recrawl_hours,
        )
