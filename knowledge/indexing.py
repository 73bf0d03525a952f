"""The embedding pass: vectors for every active entry that has none (or one from another model).

Entries are searchable by their words the moment they are stored; vectors fill in behind, on
the embed queue (`embedding_request` -> the `embed_bot` task -> `embed_behind`), while
the crawl goes on fetching. What must stay true:
- at most one task waits per bot (a flag in the cache, cleared when a task starts), so a crawl
  storing a page a second does not flood the queue, and nothing stored after a pass began is
  left behind: the pass runs again until it finds nothing;
- one pass per bot at a time (a lock in the cache); a task that finds the lock taken retries
  later instead of returning, so a request arriving as the holder finishes is not lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Model, Q, QuerySet

from bots.models import Bot
from knowledge.drafts import passage_text
from knowledge.embeddings import Embedder, get_embedder
from knowledge.lexicon import lexicon_refresh
from knowledge.models import Entry, Wording
from knowledge.services import entry_vectors_store

R = TypeVar("R", bound=Model)


def entries_needing_embedding(bot_id: int, model_key: str) -> Q:
    return Q(bot_id=bot_id, active=True) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def embed_pending(
    *, bot_id: int, model_key: str | None = None, batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None, refresh_lexicon: bool = True,
) -> int:
    """Embed the bot's pending entries (`rows_embed`), storing each batch through
    `services.entry_vectors_store`: no version (a vector is not a content change), and only where
    the entry's content_hash is still the one that was embedded, so an entry edited meanwhile keeps
    no stale vector and is picked up by the next pass."""
    embedder = get_embedder(model_key)
    pending = Entry.objects.filter(entries_needing_embedding(bot_id, embedder.key))
    done = rows_embed(
        rows=pending.only("pk", "title", "heading_path", "text", "content_hash"), text=passage_text,
        write=lambda batch, vectors: entry_vectors_store(entries=batch, vectors=vectors, model_key=embedder.key),
        embedder=embedder, batch_size=batch_size, progress=progress,
    )
    wordings_embed_pending(bot_id=bot_id, embedder=embedder)
    if done and refresh_lexicon:
        lexicon_refresh(bot_id=bot_id)
    return done


def wordings_embed_pending(*, bot_id: int, embedder: Embedder) -> int:
    """Query vectors for the bot's question wordings that have none from this model (owner answers
    imported or stored before their vectors, or a model change). Few rows: one by one."""
    pending = Wording.objects.filter(bot_id=bot_id).exclude(embedding_model=embedder.key).only("pk", "text")
    done = 0
    for wording in pending.order_by("pk"):
        vector = embedder.query(wording.text)
        Wording.objects.filter(pk=wording.pk, text=wording.text).update(embedding=vector, embedding_model=embedder.key)
        done += 1
    return done


def rows_embed(
    *, rows: QuerySet[R], text: Callable[[R], str], write: Callable[[list[R], list[str]], None],
    embedder: Embedder, batch_size: int | None = None, progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed `rows` (a queryset of the rows still needing a vector, with the fields `text` reads)
    batch by batch, in primary-key order; `write(batch, vectors)` stores each batch as soon as it
    is done (vectors as pgvector literals, one per row), so an interrupted pass keeps its work and
    the next pass continues. `progress(done, total)` after every batch. Returns how many rows
    were embedded. Entries (`embed_pending`) and catalog offers (knowledge/catalog/embedding.py)
    share it."""
    size = batch_size or settings.EMBEDDING_BATCH
    pending = rows.order_by("pk")
    total = pending.count() if progress else 0
    done, last_pk = 0, 0
    while True:
        # Keyset pagination: a row whose write was skipped is not fetched again in this pass.
        batch = list(pending.filter(pk__gt=last_pk)[:size])
        if not batch:
            return done
        last_pk = batch[-1].pk
        vectors = embedder.passages([text(row) for row in batch])
        write(batch, [vector_literal(vector.tolist()) for vector in vectors])
        done += len(batch)
        if progress:
            progress(done, total)


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, for `%s::vector` in a pipelined UPDATE."""
    return "[" + ",".join(map(repr, vector)) + "]"


QUEUED_SECONDS = 3600  # a waiting flag outlives no lost task by more than this
# The pass's lock: refreshed after every batch; a dead worker's frees itself (settings.EMBED_LOCK_SECONDS).


def _queued_key(bot_id: int) -> str:
    return f"embed:queued:{bot_id}"


def _lock_key(bot_id: int) -> str:
    return f"embed:lock:{bot_id}"


def embedding_request(*, bot_id: int) -> None:
    """Have the bot's pending entries embedded in the background, after the caller's commit."""
    transaction.on_commit(lambda: _send(bot_id))


def _send(bot_id: int) -> None:
    from django.core.cache import cache

    if cache.add(_queued_key(bot_id), 1, QUEUED_SECONDS):
        embed_bot.delay(bot_id)


def embed_behind(*, bot_id: int) -> bool:
    """Embed everything pending for the bot, pass after pass until a pass finds nothing, keeping
    the live crawl runs' counts current; False when another pass holds the bot's lock."""
    from django.core.cache import cache

    from knowledge.runs import live_runs_refresh

    cache.delete(_queued_key(bot_id))  # from here on, a newly stored page queues a new task
    token = uuid.uuid4().hex
    if not cache.add(_lock_key(bot_id), token, settings.EMBED_LOCK_SECONDS):
        return False
    model_key = get_embedder().key
    try:
        def on_batch(_done: int, _total: int) -> None:
            cache.touch(_lock_key(bot_id), settings.EMBED_LOCK_SECONDS)
            live_runs_refresh(bot_id=bot_id, model_key=model_key)

        while embed_pending(bot_id=bot_id, progress=on_batch, refresh_lexicon=False):
            lexicon_refresh(bot_id=bot_id)
        live_runs_refresh(bot_id=bot_id, model_key=model_key, finish=True)
    finally:
        if cache.get(_lock_key(bot_id)) == token:
            cache.delete(_lock_key(bot_id))
    return True


@shared_task(bind=True, max_retries=None)
def embed_bot(self: Any, bot_id: int) -> None:
    """Runs on the embed queue (settings.CELERY_EMBED_QUEUE), beside the crawl: CPU-bound model work
    must not wait behind a politeness-bound crawl, nor the crawl behind it."""
    if Bot.objects.filter(pk=bot_id).exists() and not embed_behind(bot_id=bot_id):
        raise self.retry(countdown=2)  # another pass holds the bot; it may be finishing right now
