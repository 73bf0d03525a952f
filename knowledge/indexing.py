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

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model, Q, QuerySet

from bots.models import Bot
from knowledge.embeddings import Embedder, get_embedder
from knowledge.models import Entry, Lexeme, Wording

R = TypeVar("R", bound=Model)


def passage_text(entry: Entry) -> str:
    """What the model reads for an entry: the title and heading path carry the topic of a chunk."""
    head = " / ".join(part for part in (entry.title, entry.heading_path) if part)
    return f"{head}\n{entry.text}" if head else entry.text


def entries_needing_embedding(bot_id: int, model_key: str) -> Q:
    return Q(bot_id=bot_id, active=True) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def embed_pending(
    *, bot_id: int, model_key: str | None = None, batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None, refresh_lexicon: bool = True,
) -> int:
    """Embed the bot's pending entries (`rows_embed`). Writes bypass history: a vector is not a
    content change. A vector is written only if the entry's content_hash is still the one that
    was embedded: an entry edited meanwhile keeps no stale vector and is picked up by the next pass."""
    embedder = get_embedder(model_key)
    pending = Entry.objects.filter(entries_needing_embedding(bot_id, embedder.key))
    done = rows_embed(
        rows=pending.only("pk", "title", "heading_path", "text", "content_hash"), text=passage_text,
        write=lambda batch, vectors: _write_vectors(batch, vectors, embedder.key),
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


class LexiconRefresher:
    """Keeps the bot's lexicon current while a crawl stores pages, without paying for a rebuild per
    page: at most every `every` seconds, and never more than a tenth of the time (a big bot's
    rebuild takes seconds)."""

    def __init__(self, bot_id: int, every: float = 3.0) -> None:
        self.bot_id, self.every = bot_id, every
        self._next = 0.0
        self.dirty = False

    def changed(self) -> None:
        self.dirty = True
        if time.monotonic() >= self._next:
            self.flush()

    def flush(self) -> None:
        if not self.dirty:
            return
        started = time.monotonic()
        lexicon_refresh(bot_id=self.bot_id)
        took = time.monotonic() - started
        self._next = time.monotonic() + max(self.every, 10 * took)
        self.dirty = False


def _write_vectors(batch: list[Entry], vectors: list[str], model_key: str) -> None:
    """One pipelined round trip per batch instead of one UPDATE per entry through the ORM."""
    rows = [(vector, model_key, entry.pk, entry.content_hash) for entry, vector in zip(batch, vectors, strict=True)]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE knowledge_entry SET embedding = %s::vector, embedding_model = %s "
            "WHERE id = %s AND content_hash = %s",
            rows,
        )


def embeddings_reset(*, bot_id: int) -> int:
    """Forget a bot's vectors, so that the next pass re-embeds everything (`reembed --all`)."""
    return Entry.objects.filter(bot_id=bot_id).update(embedding=None, embedding_model="")


# What the lexicon of a bot is (parameters: the bot's id twice): each lexeme of its active entries with
# the number of entries holding it, and lexeme '' with the number of active entries.
_LEXICON_WORDS = (
    "SELECT %s, word, ndoc FROM ts_stat(format("
    "'SELECT search_vector FROM knowledge_entry WHERE bot_id = %%s AND active', %s::bigint))"
)
_LEXICON_SIZE = "SELECT %s, '', count(*) FROM knowledge_entry WHERE bot_id = %s AND active"

LEXICON_LOCK = 7311  # pg_advisory_xact_lock(LEXICON_LOCK, bot_id): one lexicon writer per bot at a time


def lexicon_refresh(*, bot_id: int) -> int:
    """Rebuild the bot's lexicon (lexeme -> number of active entries containing it) that search
    uses for IDF weights and typo correction; returns the number of lexemes. One statement over
    the stored tsvectors, so it costs seconds even at 100k entries; it runs after each embedding
    pass because every content change ends with one. A stale lexicon only shifts weights a little.

    Rebuilds of one bot are serialised (a transaction-level advisory lock, also taken by
    `lexicon_adjust`): a crawl refreshes the lexicon while the embed queue's pass refreshes it too,
    and two delete-then-insert rebuilds side by side would insert the same lexeme twice."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [LEXICON_LOCK, bot_id])
        cursor.execute("DELETE FROM knowledge_lexeme WHERE bot_id = %s", [bot_id])
        cursor.execute(f"INSERT INTO knowledge_lexeme (bot_id, lexeme, df) {_LEXICON_WORDS}", [bot_id, bot_id])
        count = cursor.rowcount
        cursor.execute(f"INSERT INTO knowledge_lexeme (bot_id, lexeme, df) {_LEXICON_SIZE}", [bot_id, bot_id])
        # Fresh statistics at once: until autovacuum comes round, a new bot's thousands of lexemes
        # are planned as one row, and every word of a question then scans them all (7 ms at 16k).
        cursor.execute("ANALYZE knowledge_lexeme")
    return count


def lexicon_adjust(*, entry_id: int, delta: int) -> None:
    """Count one entry's lexemes in (+1) or out (-1) of its bot's lexicon at once, without the full
    rebuild: an owner's answer must be found by its words on the next message, and a rebuild costs
    seconds at 100k entries. The next `lexicon_refresh` recomputes the exact figures anyway."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, bot_id::int) FROM knowledge_entry WHERE id = %s",
                       [LEXICON_LOCK, entry_id])
        cursor.execute(
            "INSERT INTO knowledge_lexeme (bot_id, lexeme, df) "
            "SELECT e.bot_id, w.word, greatest(%s, 0) FROM knowledge_entry e, "
            "unnest(tsvector_to_array(e.search_vector)) AS w(word) WHERE e.id = %s "
            "UNION ALL SELECT e.bot_id, '', greatest(%s, 0) FROM knowledge_entry e WHERE e.id = %s "
            "ON CONFLICT (bot_id, lexeme) DO UPDATE SET df = greatest(knowledge_lexeme.df + %s, 0)",
            [delta, entry_id, delta, entry_id, delta],
        )
        cursor.execute(
            "DELETE FROM knowledge_lexeme l USING knowledge_entry e "
            "WHERE e.id = %s AND l.bot_id = e.bot_id AND l.df <= 0 AND l.lexeme <> ''",
            [entry_id],
        )


def lexicon_fresh(*, bot_id: int) -> dict[str, int]:
    """The bot's lexicon as a rebuild (`lexicon_refresh`) would write it now, computed without writing
    it: lexeme -> number of active entries holding it ('' -> number of active entries). What the
    stored one (`lexicon_stored`) must equal after every write that adjusts it."""
    with connection.cursor() as cursor:
        cursor.execute(f"{_LEXICON_WORDS} UNION ALL {_LEXICON_SIZE}", [bot_id, bot_id, bot_id, bot_id])
        return {lexeme: df for _bot, lexeme, df in cursor.fetchall()}


def lexicon_stored(*, bot_id: int) -> dict[str, int]:
    """The bot's lexicon as search reads it (lexeme -> document frequency)."""
    return dict(Lexeme.objects.filter(bot_id=bot_id).values_list("lexeme", "df"))
