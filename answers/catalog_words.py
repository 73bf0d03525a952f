"""What a question names of the shop's own catalog, read by code when no model reads it: the feed's
vendors in any word form («Вихря», «Bosch»), its categories by lemma («чайники» → «Кухонная
техника / Чайники»), names the catalog lacks (a brand written in Latin letters in a Russian
question: «Philips»), and whether the visitor asks to be shown goods («покажите», «а … есть?»).

What must stay true:
- Every vendor and category comes from the bot's feed (commerce.products.facets): no list of
  brands or goods per site; a vendor is matched as the feed writes it (Latin or Cyrillic), by the
  lemma keys of lemmas.py, so «Вихрем» is «Вихрь» and «бош» is not «Bosch».
- A name the catalog lacks is never dropped: the search must find it in an offer, or say no match
  (a card of another brand is a wrong card).
- A pure function of the text and the feed's names; bad input (a lone surrogate, emoji, 5 000
  characters) reads as nothing named, never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from answers import lemmas

MAX_CHARS: Final = 1000  # the product search reads no further either
_LATIN: Final = re.compile(r"[A-Za-z][A-Za-z0-9'’&+.-]*[A-Za-z0-9]|[A-Za-z]{2,}")
_CYRILLIC: Final = re.compile(r"[а-яё]", re.IGNORECASE)
# Asking to be shown goods: dictionary forms of the verbs (any form: покажите, покажи, посмотреть)
# and «есть» as a word («а чайники Bosch есть?»). Russian verbs, not any shop's words.
_SHOW_LEMMAS: Final = frozenset({"=показать", "=посмотреть", "=глянуть"})
_HAVE: Final = re.compile(r"(?<!\w)есть(?!\w)", re.IGNORECASE)
# «как посмотреть…», «где посмотреть…», «почему…»: a question about something, not a request for goods.
_HOW: Final = re.compile(r"(?<!\w)(?:как|почему|зачем|где|когда|куда|откуда|чем)(?!\w)", re.IGNORECASE)


@dataclass(frozen=True)
class Named:
    vendors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    strangers: tuple[str, ...] = ()  # names no vendor is: each must be found in an offer
    asks_to_show: bool = False

    @property
    def catalog(self) -> bool:
        """The question names something of the catalog (a vendor or a category)."""
        return bool(self.vendors or self.categories)


def named(text: str, *, vendors: list[str], categories: list[str]) -> Named:
    """What `text` names of a catalog with these `vendors` and `categories` (the feed's own)."""
    text = _clean(text)[:MAX_CHARS]
    question = lemmas.keys_of(text)
    found_vendors = tuple(v for v in vendors if _names(v, question))
    found_categories = tuple(c for c in categories if _names_any(_leaf(c), question))
    taken = lemmas.keys_of(" ".join((*found_vendors, *(_leaf(c) for c in found_categories))))
    strangers = tuple(dict.fromkeys(
        word.casefold() for word in _LATIN.findall(text)
        if _CYRILLIC.search(text) and len(word) > 1 and not (lemmas.keys_of(word) & taken)
        and word.casefold() not in lemmas.STOP
    ))
    return Named(found_vendors, found_categories, strangers[:5], asks_to_show(text))


def asks_to_show(text: str) -> bool:
    """The visitor asks to be shown goods («покажите чайники», «а чайники Bosch есть?»), not about
    something («как посмотреть…», «где…»). Reads the text alone: the chain asks it before it
    reads the catalog's names."""
    text = _clean(text)[:MAX_CHARS]
    if _HOW.search(text):
        return False
    return bool(_HAVE.search(text)) or any(lemmas.keys(word) & _SHOW_LEMMAS for word in lemmas.words(text))


def _clean(text: str) -> str:
    """The text with lone surrogates and other unencodable characters gone (pymorphy3 and the
    database both refuse them)."""
    return text.encode("utf-8", "ignore").decode("utf-8")


def _leaf(category: str) -> str:
    """«Кухонная техника / Чайники» → «Чайники»: the offer's own category, not its parents."""
    return category.rsplit("/", 1)[-1].strip()


def _names(vendor: str, question: frozenset[str]) -> bool:
    """Every word of the vendor's name is in the question, in any form (a vendor of stop words
    alone, or of none, names nothing)."""
    words = lemmas.words(vendor)
    return bool(words) and all(lemmas.keys(word) & question for word in words)


def _names_any(category: str, question: frozenset[str]) -> bool:
    """Some word of the category's name is in the question, in any form («кофеварку» names
    «Кофемашины и кофеварки»)."""
    return any(lemmas.keys(word) & question for word in lemmas.words(category) if not word.isdigit())
