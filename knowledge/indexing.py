"""The embedding pass: vectors for every active entry that has none (or one from another model)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from knowledge.embeddings import get_embedder
from knowledge.models import Entry


def passage_text(entry: Entry) -> str:
    """What the model reads for an entry: the title and heading path carry the topic of a chunk."""
    head = " / ".join(part for part in (entry.title, entry.heading_path) if part)
    return f"{head}\n{entry.text}" if head else entry.text


def entries_needing_embedding(bot_id: int, model_key: str) -> Q:
    return Q(bot_id=bot_id, active=True) & (Q(embedding__isnull=True) | ~Q(embedding_model=model_key))


def embed_pending(
    *, bot_id: int, model_key: str | None = None, batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed in batches; each batch is written as soon as it is done, so an interrupted pass keeps
    its work and the next pass continues. Writes bypass history: a vector is not a content change.

    A vector is written only if the entry's content_hash is still the one that was embedded: an
    entry edited meanwhile keeps no stale vector and is picked up by the next pass."""
    embedder = get_embedder(model_key)
    size = batch_size or settings.EMBEDDING_BATCH
    pending = Entry.objects.filter(entries_needing_embedding(bot_id, embedder.key)).order_by("pk")
    total = pending.count()
    done, last_pk = 0, 0
    while True:
        # Keyset pagination: an entry whose write was skipped is not fetched again in this pass.
        batch = list(pending.filter(pk__gt=last_pk).only("pk", "title", "heading_path", "text", "content_hash")[:size])
        if not batch:
            break
        last_pk = batch[-1].pk
        vectors = embedder.passages([passage_text(e) for e in batch])
        _write_vectors(batch, [v.tolist() for v in vectors], embedder.key)
        done += len(batch)
        if progress:
            progress(done, total)
    if done:
        lexicon_refresh(bot_id=bot_id)
    return done


def _write_vectors(batch: list[Entry], vectors: list[list[float]], model_key: str) -> None:
    """One pipelined round trip per batch instead of one UPDATE per entry through the ORM."""
    rows = [
        ("[" + ",".join(map(repr, vector)) + "]", model_key, entry.pk, entry.content_hash)
        for entry, vector in zip(batch, vectors, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE knowledge_entry SET embedding = %s::vector, embedding_model = %s "
            "WHERE id = %s AND content_hash = %s",
            rows,
        )


def embeddings_reset(*, bot_id: int) -> int:
    """Forget a bot's vectors, so that the next pass re-embeds everything (`reembed --all`)."""
    return Entry.objects.filter(bot_id=bot_id).update(embedding=None, embedding_model="")


def lexicon_refresh(*, bot_id: int) -> int:
    """Rebuild the bot's lexicon (lexeme -> number of active entries containing it) that search
    uses for IDF weights and typo correction; returns the number of lexemes. One statement over
    the stored tsvectors, so it costs seconds even at 100k entries; it runs after each embedding
    pass because every content change ends with one. A stale lexicon only shifts weights a little."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_lexeme WHERE bot_id = %s", [bot_id])
        cursor.execute(
            "INSERT INTO knowledge_lexeme (bot_id, lexeme, df) "
            "SELECT %s, word, ndoc FROM ts_stat(format("
            "'SELECT search_vector FROM knowledge_entry WHERE bot_id = %%s AND active', %s::bigint))",
            [bot_id, bot_id],
        )
        count = cursor.rowcount
        cursor.execute(
            "INSERT INTO knowledge_lexeme (bot_id, lexeme, df) "
            "SELECT %s, '', count(*) FROM knowledge_entry WHERE bot_id = %s AND active",
            [bot_id, bot_id],
        )
        # Fresh statistics at once: until autovacuum comes round, a new bot's thousands of lexemes
        # are planned as one row, and every word of a question then scans them all (7 ms at 16k).
        cursor.execute("ANALYZE knowledge_lexeme")
    return count


def lexicon_adjust(*, entry_id: int, delta: int) -> None:
    """Count one entry's lexemes in (+1) or out (-1) of its bot's lexicon at once, without the full
    rebuild: an owner's answer must be found by its words on the next message, and a rebuild costs
    seconds at 100k entries. The next `lexicon_refresh` recomputes the exact figures anyway."""
    with connection.cursor() as cursor:
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
