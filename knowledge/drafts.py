"""Entries before they are stored, as every writer builds them (the crawler, the imports, the
API and the admin): the draft, the digest that tells a changed entry from an unchanged one, and
the weights by kind. Nothing here writes; services.py stores what is drafted here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from knowledge.models import Entry

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
