"""Whether a question is about something the bot's knowledge speaks of: the words that say what it
asks about (its subject), and which of them the knowledge never mentions.

A close vector is not enough to answer: «Как записаться к стоматологу?» lies near «Как записаться на
обучение?» on a cloud's docs, «Продаёте ли вы автомобили?» near «Продаёте ли вы уценённые товары?» on
a shop's. What the question is about is said by its nouns and adjectives, and by names; the verbs and
question words («записаться», «продаёте», «какой») are shared by questions about anything. So:

- a **name** (a person, an organisation, a brand, a Latin word in a Russian question) that the
  knowledge never mentions, nor a word of its family, is a question the bot cannot answer
  («кондиционеры Daikin» on a shop that sells other brands);
- an answer without a model is shown only from an entry that has at least one of the question's
  **subject words** (the chain checks this on the entry it would show: answers/excerpts.py).

Places never rule a question out: «доставка в Тверь» is answered by a site's rule for all of Russia
that names no Tver. A word the dictionary does not know («уцененка», «двухфакторной», a typo) is never
held against a question, only counted for it when the entry has it. Words are read with pymorphy3 as
knowledge/paraphrase.py reads them; the lexicon is the bot's (knowledge.selectors.lexicon_words).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Final

from knowledge import paraphrase

PERSON_GRAMMEMES: Final = paraphrase.NAME_GRAMMEMES - {"Geox", "Abbr"}
# Two stems are of one family when they share all but the last letter of the shorter one, and at
# least this many: «доставк» / «доставл» (доставка, доставлять), «возврат» / «возвращ», not «автомоб»
# / «автомат». A lexicon holds thousands of stems: the looser rule of paraphrase.py (five letters),
# made for a correction's few wordings, would find a relative for almost any word.
FAMILY_PREFIX: Final = 4
# A word ending in a known stem this long is a compound of it: «техподдержк» and «поддержк».
COMPOUND_TAIL: Final = 6
_AROUND: Final = "\"'«»„“”()[]{}.,:;!?…"


class Kind(StrEnum):
    NAME = "name"  # a person, organisation or brand; a Latin word in a Russian question
    PLACE = "place"  # a city, a country, a street: never holds a question out on its own
    WORD = "word"  # a noun or an adjective of the dictionary
    UNKNOWN = "unknown"  # a word the dictionary does not know: a typo, a coinage, a brand in Cyrillic


@dataclass(frozen=True)
class SubjectWord:
    token: str
    kind: Kind
    # What to look up in the lexicon: the token, or for a Latin word the whole run it is written in
    # («ISO/IEC», which PostgreSQL reads as one lexeme 'iso/iec', not as 'iec').
    written: str = ""


def subject_words(text: str) -> tuple[SubjectWord, ...]:
    """The words of `text` that say what it asks about, in order, each once."""
    cyrillic = bool(paraphrase.CYRILLIC.search(text))
    found: dict[str, SubjectWord] = {}
    for run in text.split():
        for token in paraphrase.TOKEN.findall(run):
            kind = word_kind(token, in_cyrillic_text=cyrillic)
            if kind is not None and token.lower() not in found:
                written = run.strip(_AROUND) if kind is Kind.NAME and token.isascii() else token
                found[token.lower()] = SubjectWord(token, kind, written)
    return tuple(found.values())


@lru_cache(maxsize=8192)
def word_kind(token: str, *, in_cyrillic_text: bool = True) -> Kind | None:
    """What `token` tells of a question's subject; None for a verb, a question word, a number."""
    if any(ch.isdigit() for ch in token):
        return None
    if not paraphrase.CYRILLIC.search(token):
        return Kind.NAME if in_cyrillic_text and len(token) > 1 else None
    readings = paraphrase.readings(token)
    if not readings:
        return None
    if not readings[0].known:
        return Kind.UNKNOWN
    if any("Geox" in reading.grammemes for reading in readings):
        return Kind.PLACE
    best = readings[0]
    if token.islower():  # «роза», «дарите»: a name only when nothing else is meant
        best = next((r for r in readings if not r.grammemes & PERSON_GRAMMEMES), best)
    if best.grammemes & PERSON_GRAMMEMES and "Abbr" not in best.grammemes:
        return Kind.NAME
    if best.grammemes & paraphrase.CONTENT_POS and "Apro" not in best.grammemes:  # not «какой», «мой»
        return Kind.WORD
    return None


def needs_subject(words: Iterable[SubjectWord]) -> bool:
    """Whether the question names a subject an answer must share: a word or a name (a question
    about a place, or in words the dictionary does not know, holds no entry out)."""
    return any(word.kind in (Kind.WORD, Kind.NAME) for word in words)


def evidence(words: Iterable[SubjectWord]) -> list[str]:
    """The words an entry may share to be about the question (places aside: «погода в Москве» is not
    answered by the Moscow delivery page)."""
    return [word.token for word in words if word.kind is not Kind.PLACE]


def related(stem: str, other: str) -> bool:
    """Two stems of one word family (FAMILY_PREFIX), or `stem` a compound ending in `other`."""
    shared = 0
    for a, b in zip(stem, other, strict=False):
        if a != b:
            break
        shared += 1
    if shared >= FAMILY_PREFIX and shared >= min(len(stem), len(other)) - 1:
        return True
    return "-" not in stem and len(other) >= COMPOUND_TAIL and len(stem) > len(other) and stem.endswith(other)


@dataclass(frozen=True)
class OnSite:
    """What the bot's lexicon says of one word: its lexemes (PostgreSQL's 'russian' reading; a
    stop word has none), their document frequencies (None: unknown) and, for an unknown one, the
    lexicon's stems that may be of its family."""

    lexemes: Mapping[str, int | None]
    relatives: Sequence[str] = ()

    @property
    def known(self) -> bool:
        if not self.lexemes or any(df for df in self.lexemes.values()):
            return True
        return any(related(lexeme, other) for lexeme in self.lexemes for other in self.relatives)


def names(words: Iterable[SubjectWord]) -> list[str]:
    """What to look up of the names among `words` (knowledge.selectors.lexicon_words)."""
    return [word.written or word.token for word in words if word.kind is Kind.NAME]


def names_unknown(words: Iterable[SubjectWord], on_site: Mapping[str, OnSite]) -> list[str]:
    """The names among `words` the knowledge never mentions, nor a word of their family."""
    return [word.token for word in words if word.kind is Kind.NAME
            and not on_site.get(word.written or word.token, OnSite({})).known]
