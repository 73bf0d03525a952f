"""Entry versions: every save is a version (django-simple-history); a revert is one more version.

Nothing is ever rolled back by deleting history: reverting writes the old content as a new
version, so the revert itself can be reverted and the history reads as what really happened.
"""

from __future__ import annotations

from django.db import transaction

from knowledge.exceptions import EntryVersionNotFound
from knowledge.indexing import passage_text
from knowledge.models import Entry

# What a version restores. Identity (bot, source, page, key) stays: an old key could collide
# with a newer row, and a revert must never move an entry to another source or tenant.
RESTORED_FIELDS = ("kind", "title", "heading_path", "text", "url", "weight", "review_needed", "active",
                   "content_hash")


def entry_revert(*, entry: Entry, history_id: int) -> Entry:
    """Restore the content of version `history_id` of this entry.

    A changed text drops the vector (it described the newer text), so the next embedding pass
    re-embeds it; scheduling that pass after commit is the caller's job, as for any edit. The
    entry row is locked so a concurrent edit cannot interleave with the revert.
    """
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
        current._change_reason = f"откат к версии №{history_id}"  # type: ignore[attr-defined]
        current.save(update_fields=fields)
    return current
