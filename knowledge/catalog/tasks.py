"""Celery tasks of commerce: thin, by id. Catalog feeds with an address and a schedule are fetched
again when due (the beat runs `catalog_refresh_due` every few minutes, like the crawler's
recrawl); each refresh is a CatalogImport row with its added / changed / removed counts."""

from __future__ import annotations

from celery import shared_task

from knowledge.catalog import catalog
from knowledge.catalog.embedding import offers_embed  # noqa: F401  (registered with the worker from here)
from knowledge.models import Source


@shared_task
def catalog_refresh(source_id: int) -> None:
    source = Source.objects.select_related("bot").filter(pk=source_id, kind=Source.Kind.CATALOG).first()
    if source is None or not source.url:
        return
    catalog.catalog_import_url(bot=source.bot, url=source.url, scheduled=True)


@shared_task
def catalog_refresh_due() -> int:
    due = catalog.catalogs_due()
    for source in due:
        catalog_refresh.delay(source.pk)
    return len(due)
