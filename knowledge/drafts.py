"""Entries before they are stored, as every writer builds them (the crawler, the imports, the
API and the admin): the draft, the digest that tells a changed entry from an unchanged one, the
weights by kind, where a typed question/answer pair goes and by which key, and what the embedding
model reads of an entry (`passage_text`). Nothing here writes; services.py stores what is drafted
here."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from knowledge.models import Entry

Outcome = Literal["created", "updated", "unchanged"]

QA_SOURCE_TITLE = "Вопросы и ответы"
KEY_MAX = 500

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


def question_key(question: str) -> str:
    """The identity of a question: case, «ё», punctuation and spacing do not make a new one."""
    words = re.findall(r"\w+", question.casefold().replace("ё", "е"))
    key = " ".join(words)
    return key if len(key) <= KEY_MAX else f"{key[: KEY_MAX - 41]}~{content_hash(key)[:40]}"


def passage_text(entry: Entry) -> str:
    """What the model reads for an entry: the title and heading path carry the topic of a chunk."""
    return passage_text_of(entry.title, entry.heading_path, entry.text)


def passage_text_of(title: str, heading_path: str, text: str) -> str:
    head = " / ".join(part for part in (title, heading_path) if part)
    return f"{head}\n{text}" if head else text
