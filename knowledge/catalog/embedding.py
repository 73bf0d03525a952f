"""Offer embeddings: vectors for a bot's catalog offers with knowledge's local embedding model, so
that product search also finds offers by meaning («что-нибудь для уборки» → the vacuums).

What must stay true:
- An import never waits for them: it queues one task per bot after its commit (at most one waits
  per bot, like the entries' pass) on the embed queue; search by words works at once.
- A vector is written only if the offer's content_hash is still the one that was embedded: an
  offer changed meanwhile keeps no stale vector (the import cleared it) and the next pass takes it.
- A task that wrote vectors ends with ANALYZE of the offers' table: until autovacuum
  comes round (a minute or more), the planner believes no offer carries the model's key, skips
  the partial HNSW index and sorts the bot's every offer by exact cosine (42 ms instead of 1.5 ms
  at 10,000 offers, docs/benchmarks.md). ANALYZE samples at most 30,000 rows: ~0.3 s, once a task.
"""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Q

from bots.models import Bot
from knowledge.catalog.models import CatalogOffer
from knowledge.embeddings import get_embedder
from knowledge.indexing import rows_embed

QUEUED_SECONDS = 3600
DESCRIPTION_CHARS = 600  # what the model reads of a description: the name, vendor and category say most


def offer_text(offer: CatalogOffer) -> str:
    head = " / ".join(part for part in (offer.name, offer.vendor, offer.category) if part)
    return f"{head}\n{offer.description[:DESCRIPTION_CHARS]}" if offer.description else head


def offers_needing_embedding(bot_id: int, model_key: str) -> Q:
    return Q(bot_id=bot_id) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def offers_embed_pending(*, bot_id: int, batch_size: int | None = None) -> int:
    """Embed the bot's offers that have no vector of the current model, batch by batch (each batch
    written as soon as it is done; knowledge's `rows_embed`). Returns how many were embedded."""
    embedder = get_embedder()
    pending = CatalogOffer.objects.filter(offers_needing_embedding(bot_id, embedder.key))

    def write(batch: list[CatalogOffer], vectors: list[str]) -> None:
        offer_vectors_write(model_key=embedder.key, rows=[
            (offer.pk, offer.content_hash, vector) for offer, vector in zip(batch, vectors, strict=True)
        ])

    return rows_embed(
        rows=pending.only("pk", "name", "vendor", "category", "description", "content_hash"),
        text=offer_text, write=write, embedder=embedder, batch_size=batch_size,
    )


def offer_vectors_write(*, model_key: str, rows: list[tuple[int, str, str]]) -> None:
    """Store (offer id, the content_hash that was embedded, vector literal) rows: an offer whose
    content changed since keeps no vector."""
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE commerce_catalogoffer SET embedding = %s::vector, embedding_model = %s "
            "WHERE id = %s AND content_hash = %s",
            [(vector, model_key, pk, content_hash) for pk, content_hash, vector in rows],
        )


def offers_statistics_refresh() -> None:
    """The planner's statistics of the offers after an embedding pass (see the module's note)."""
    with connection.cursor() as cursor:
        # The whole table, not only the vector columns: the bot's id matters as much (a new bot's
        # id is in no statistics yet, so the planner expects one row and sorts them all).
        cursor.execute("ANALYZE commerce_catalogoffer")


def _queued_key(bot_id: int) -> str:
    return f"commerce:embed-queued:{bot_id}"


def offers_embedding_request(*, bot_id: int) -> None:
    """Have the bot's offers embedded in the background, after the caller's commit."""
    transaction.on_commit(lambda: _send(bot_id))


def _send(bot_id: int) -> None:
    if cache.add(_queued_key(bot_id), 1, QUEUED_SECONDS):
        offers_embed.delay(bot_id)


def offers_embed_behind(*, bot_id: int) -> int:
    """The task's work: passes until one finds nothing (offers stored meanwhile are not left behind)."""
    cache.delete(_queued_key(bot_id))
    total = 0
    while done := offers_embed_pending(bot_id=bot_id):
        total += done
    if total:
        offers_statistics_refresh()
    return total


@shared_task
def offers_embed(bot_id: int) -> None:
    """Celery, on the embed queue (settings.CELERY_TASK_ROUTES), beside the entries' pass; imported by
    knowledge/catalog/tasks.py for the worker."""
    if Bot.objects.filter(pk=bot_id).exists():
        offers_embed_behind(bot_id=bot_id)
