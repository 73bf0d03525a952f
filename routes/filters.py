"""Deterministic output filters: they run on every draft before any judge sees it
(docs/architecture.md, "Routes with a judge").

- personal_data: the customer's own contacts (a phone, e-mail or handle their text gives) repeated
  in the reply, and anything shaped like a bank card number (Luhn), wherever it came from;
- facts: every fact in the reply (numbers, prices, terms, dates, phones, e-mails) must be given by
  the knowledge the draft was grounded in, the bot's name and site (the truth rules of
  answers/facts.py, the same code the chat answer passes);
- links: the same for web addresses and messenger handles;
- banned_words: the owner's list, whole words, case and ё aside.

A block is not repaired: the step fails to the handoff point and nothing is published without a
person. What must stay true: a filter reports codes and normalised values, never the text itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from answers import facts

CONTACT_CODES: Final = frozenset({facts.PHONE, facts.EMAIL, facts.HANDLE})
LINK_CODES: Final = frozenset({facts.URL, facts.HANDLE})
_CARD: Final = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class FilterInput:
    text: str  # the draft
    known_texts: Sequence[str]  # what the draft may state as fact: its sources, the bot's name and site
    customer_texts: Sequence[str]  # what the customer wrote (their contacts must not be repeated)
    banned_words: Sequence[str] = ()


@dataclass(frozen=True)
class Block:
    filter: str
    codes: list[str]
    keys: list[str] = field(default_factory=list)  # normalised values ("p:9161234567"), never text


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def personal_data(given: FilterInput) -> Block | None:
    theirs = {fact.key for text in given.customer_texts for fact in facts.facts_in(text) if fact.code in CONTACT_CODES}
    leaked = sorted({fact.key for fact in facts.facts_in(given.text) if fact.key in theirs})
    cards = [m.group() for m in _CARD.finditer(given.text) if _luhn(re.sub(r"\D", "", m.group()))]
    codes = sorted({*(["contact"] if leaked else []), *(["card"] if cards else [])})
    return Block("personal_data", codes, leaked) if codes else None


def _unsupported(given: FilterInput) -> list[facts.Fact]:
    return facts.blocked(given.text, facts.Known.of(given.known_texts))


def facts_filter(given: FilterInput) -> Block | None:
    found = [fact for fact in _unsupported(given) if fact.code not in LINK_CODES]
    return Block("facts", sorted({f.code for f in found}), [f.key for f in found]) if found else None


def links(given: FilterInput) -> Block | None:
    found = [fact for fact in _unsupported(given) if fact.code in LINK_CODES]
    return Block("links", sorted({f.code for f in found}), [f.key for f in found]) if found else None


def _words(text: str) -> list[str]:
    return [word.casefold().replace("ё", "е") for word in _WORD.findall(text)]


def banned_words(given: FilterInput) -> Block | None:
    """Whole words or phrases: «гарантируем» does not block «гарантия»."""
    words = _words(given.text)
    joined = f" {' '.join(words)} "
    phrases = {" ".join(_words(item)) for item in given.banned_words} - {""}
    hits = sorted(phrase for phrase in phrases if f" {phrase} " in joined)
    return Block("banned_words", ["banned"], [f"w:{hit}" for hit in hits]) if hits else None


FILTERS: Final = {"personal_data": personal_data, "facts": facts_filter, "links": links, "banned_words": banned_words}


def filters_run(names: Iterable[str], given: FilterInput) -> list[Block]:
    """Every declared filter, in declaration order; all blocks, not just the first (the journal
    shows every reason a person has to look at)."""
    return [block for name in names if (block := FILTERS[name](given)) is not None]
