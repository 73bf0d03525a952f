"""Importing a product feed into a bot's catalog: one source of kind `catalog` per feed (its URL,
or its file name for an upload), its offers replaced in one transaction.

What must stay true:
- A feed that cannot be read (not XML, not CSV, too large, entity declarations, no usable offer)
  changes nothing: the offers stored before stay as they were, and the import is recorded as
  failed with the reason in words (a stored text, core/texts.py: shown in the reader's language).
- Offers are matched by their feed id: added, changed (by content hash) and removed counts are
  exact; an unchanged offer is not written.
- The feed is read through the SSRF-safe client (core/http.py) and never past
  CATALOG_MAX_BYTES, whether downloaded or uploaded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import DurationField, ExpressionWrapper, F, OuterRef, Q, Subquery
from django.db.models.functions import Now
from django.utils.translation import gettext_noop

from bots.models import Bot
from core import http
from core.texts import Stored, Text, stored, stored_pair
from knowledge.catalog import feeds, products
from knowledge.catalog.embedding import offers_embedding_request
from knowledge.catalog.models import CatalogImport, CatalogOffer
from knowledge.exceptions import SourceInvalid
from knowledge.models import Source
from knowledge.services import source_get_or_create, source_schedule


@dataclass(frozen=True)
class Imported:
    run: CatalogImport
    source: Source


def catalog_import_bytes(*, bot: Bot, data: bytes, name: str, url: str = "", scheduled: bool = False) -> Imported:
    """Import a feed's bytes (an upload, a file, a download). Never raises for a bad feed: the
    returned run says FAILED and why."""
    started = time.perf_counter()
    source = _source(bot, url=url, name=name)
    if len(data) > settings.CATALOG_MAX_BYTES:
        return _failed(bot, source, started, _too_large(), scheduled)
    try:
        parsed = feeds.parse_feed(data, name=name or url)
    except feeds.FeedError as exc:
        return _failed(bot, source, started, exc.text, scheduled)
    added, changed, removed = _store(bot, source, parsed.offers)
    message, message_stored = stored_pair(stored(gettext_noop("товаров в фиде: %(n)s"), n=len(parsed.offers)), 500)
    run = CatalogImport.objects.create(
        bot=bot, source=source, status=CatalogImport.Status.DONE, added=added, changed=changed, removed=removed,
        skipped=parsed.skipped, problems=parsed.problems, duration_ms=_ms(started), scheduled=scheduled,
        message=message, message_stored=message_stored,
    )
    return Imported(run, source)


def catalog_import_url(*, bot: Bot, url: str, scheduled: bool = False) -> Imported:
    started = time.perf_counter()
    try:
        source = _source(bot, url=url, name="")
    except Exception as exc:  # an address the source row refuses: said, nothing stored
        raise feeds.FeedError(stored(gettext_noop("адрес фида не подходит: %(error)s"), error=_said(exc))) from exc
    try:
        with http.SafeClient(max_bytes=settings.CATALOG_MAX_BYTES) as client:
            response = client.get(url)
    except http.FetchError as exc:
        return _failed(bot, source, started, exc.text, scheduled)
    if response.status != 200:
        return _failed(bot, source, started, stored(gettext_noop("сервер ответил %(status)s"), status=response.status),
                       scheduled)
    return catalog_import_bytes(bot=bot, data=response.body, name=Path(url).name, url=url, scheduled=scheduled)


def catalog_schedule(*, source: Source, every_hours: int | None) -> Source:
    """Refresh a feed by its address every `every_hours` (None: only by hand). An uploaded file
    has no address to fetch again."""
    if every_hours is not None and not source.url:
        raise feeds.FeedError(stored(gettext_noop("обновлять по расписанию можно только фид по адресу, "
                                                  "не загруженный файл")))
    try:
        return source_schedule(source=source, recrawl_hours=every_hours)
    except SourceInvalid as exc:
        raise feeds.FeedError(str(exc)) from exc


def catalogs_due() -> list[Source]:
    """Catalog feeds with an address and a schedule whose last import is older than it."""
    period = ExpressionWrapper(F("recrawl_hours") * timedelta(hours=1), output_field=DurationField())
    last = CatalogImport.objects.filter(source=OuterRef("pk")).order_by("-created_at").values("created_at")[:1]
    return list(
        Source.objects.filter(kind=Source.Kind.CATALOG, recrawl_hours__isnull=False).exclude(url="")
        .annotate(last_import=Subquery(last)).filter(Q(last_import__isnull=True) | Q(last_import__lt=Now() - period))
        .select_related("bot")
    )


def catalog_import_file(*, bot: Bot, path: Path) -> Imported:
    size = path.stat().st_size
    if size > settings.CATALOG_MAX_BYTES:  # refused before reading a byte
        source = _source(bot, url="", name=path.name)
        return _failed(bot, source, time.perf_counter(), _too_large())
    return catalog_import_bytes(bot=bot, data=path.read_bytes(), name=path.name)


def _source(bot: Bot, *, url: str, name: str) -> Source:
    if url:
        return source_get_or_create(bot=bot, kind=Source.Kind.CATALOG, url=url, title=f"Каталог: {url[:200]}")
    return source_get_or_create(bot=bot, kind=Source.Kind.CATALOG, title=f"Каталог: {name[:200] or 'файл'}")


def _store(bot: Bot, source: Source, offers: list[feeds.OfferDraft]) -> tuple[int, int, int]:
    with transaction.atomic():
        Source.objects.select_for_update().filter(pk=source.pk).first()  # one import of a feed at a time
        known = {offer_id: (pk, digest) for offer_id, pk, digest in
                 CatalogOffer.objects.filter(source=source).values_list("offer_id", "pk", "content_hash")}
        fresh: list[CatalogOffer] = []
        updated: list[CatalogOffer] = []
        for draft in offers:
            digest = draft.content_hash()
            if draft.offer_id not in known:
                fresh.append(_row(bot, source, draft, digest))
            elif known[draft.offer_id][1] != digest:
                row = _row(bot, source, draft, digest)
                row.pk = known[draft.offer_id][0]
                updated.append(row)
        CatalogOffer.objects.bulk_create(fresh, batch_size=2000)
        if updated:
            CatalogOffer.objects.bulk_update(updated, _FIELDS, batch_size=1000)
        gone = set(known) - {d.offer_id for d in offers}
        if gone:
            CatalogOffer.objects.filter(source=source, offer_id__in=gone).delete()
        transaction.on_commit(lambda: cache.delete(products.facets_key(bot.pk)))
        if fresh or updated:
            offers_embedding_request(bot_id=bot.pk)  # queued after commit, never awaited
    return len(fresh), len(updated), len(gone)


_FIELDS = ["name", "price", "old_price", "currency", "available", "url", "picture", "category", "vendor",
           "description", "params", "content_hash", "embedding", "embedding_model"]  # a changed offer's vector goes


def _row(bot: Bot, source: Source, draft: feeds.OfferDraft, digest: str) -> CatalogOffer:
    return CatalogOffer(
        bot=bot, source=source, offer_id=draft.offer_id, name=draft.name, price=draft.price,
        old_price=draft.old_price, currency=draft.currency, available=draft.available, url=draft.url,
        picture=draft.picture, category=draft.category, vendor=draft.vendor, description=draft.description,
        params=draft.params, content_hash=digest,
    )


def _failed(bot: Bot, source: Source, started: float, reason: Text, scheduled: bool = False) -> Imported:
    message, message_stored = stored_pair(reason, 500)
    run = CatalogImport.objects.create(bot=bot, source=source, status=CatalogImport.Status.FAILED, message=message,
                                       message_stored=message_stored, duration_ms=_ms(started), scheduled=scheduled)
    return Imported(run, source)


def _too_large() -> Stored:
    return stored(gettext_noop("фид больше %(size)s"), size=http.size_text(settings.CATALOG_MAX_BYTES))


def _said(exc: Exception) -> Text:
    """What a refusal from below says: its stored text when it has one, else its words."""
    text = getattr(exc, "text", None)
    if text:
        return text
    messages = getattr(exc, "messages", None)  # a ValidationError
    return " ".join(messages) if messages else str(exc)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
