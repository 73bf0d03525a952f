"""The embedding pass: vectors for every active entry that has none (or one from another model)."""

from __future__ import annotations

from collections.abc import Callable

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
    *, bot_id: int, model_key: str | None = None, batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed in batches; each batch is written as soon as it is done, so an interrupted pass keeps
    its work and the next pass continues. Writes bypass history: a vector is not a content change."""
    embedder = get_embedder(model_key)
    pending = Entry.objects.filter(entries_needing_embedding(bot_id, embedder.key)).order_by("pk")
    total = pending.count()
    done = 0
    while True:
        batch = list(pending.only("pk", "title", "heading_path", "text")[:batch_size])
        if not batch:
            break
        vectors = embedder.passages([passage_text(e) for e in batch])
        for entry, vector in zip(batch, vectors, strict=True):
            Entry.objects.filter(pk=entry.pk).update(embedding=vector.tolist(), embedding_model=embedder.key)
        done += len(batch)
        if progress:
            progress(done, total)
    return done
