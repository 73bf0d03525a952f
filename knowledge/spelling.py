"""Typos forgiven without a model: a visitor's words read against the bot's own words and a general
Russian dictionary. «как поткючить оплату» reads «как подключить оплату»; the answer chain asks
once more with that text when the raw one finds no answer, or finds one while every fix is a word
the site uses (`Spelled.on_site`; answers/pipeline.py).

Two dictionaries, both looked up with SymSpell (symspellpy: symmetric-delete candidates, Damerau
distance, a lookup well under a millisecond):
- **the site's**: every word of the bot's active entries (title, headings, text), with how often
  the site uses it and the dictionary forms (pymorphy3) of those words; cached per bot in the
  process and rebuilt when its entries change (their count and last change, one query);
- **the language's**: the Russian words wordfreq counts as common (Zipf >= 3) that pymorphy3 also
  knows (no slang spellings, no misspellings common on the web); one per process, loaded on first use.

What must stay true:
- A word the site uses, or a real word (pymorphy3 knows it, or it is common in wordfreq), is never
  changed: only unknown words get a candidate.
- A site word wins over a dictionary word at the same distance (a dictionary word counts as the
  site's when its dictionary form is: «подключить» on a site that writes «подключают»).
- Short words (up to SHORT letters) are corrected only at distance 1; abbreviations (all capitals),
  Latin, digits and mixed-script words are left alone, and so is a name (a capital letter inside a
  sentence) unless it is one edit from a word the site writes («в Кдраснодар» -> «в Краснодар»).
- Any text is accepted (5,000 characters, emoji, a lone surrogate): at most MAX_LOOKUPS unknown
  words are looked up, and nothing raises.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Final, Literal

from django.db import connection

from knowledge.models import Entry

# Words up to this long are corrected only at distance 1 (one letter inserted, dropped, replaced,
# or two swapped); longer ones at distance 2 («поткючить» -> «подключить»).
SHORT: Final = 6
MIN_LETTERS: Final = 3  # «гд», «чо»: too short to tell a typo from another word
MAX_DISTANCE: Final = 2
# A word at least this common in Russian (wordfreq's Zipf scale) is a real word even when pymorphy3
# does not know it; and the language's dictionary is made of such words (that pymorphy3 knows).
COMMON_ZIPF: Final = 3.0
COMMON_MIN_LETTERS: Final = 5  # ... when it has at least this many letters
MAX_LOOKUPS: Final = 12  # unknown words looked up per text: a 5,000-character text costs no more
CACHED_BOTS: Final = 64  # site dictionaries kept per process

_WORD: Final = re.compile(r"\w+", re.UNICODE)
_RUSSIAN: Final = re.compile(r"[а-яё]+")
_SENTENCE_ENDS: Final = ".!?…"


@dataclass(frozen=True)
class Spelled:
    """A text as the speller reads it: `text` with every change made, and the changes (word, fix).
    `on_site`: every fix is a word the site itself uses (in some form): the reading the chain may
    prefer even when the text as written found an answer (answers/pipeline.py)."""

    text: str
    changes: tuple[tuple[str, str], ...] = ()
    on_site: bool = False


@dataclass(frozen=True)
class SiteWords:
    """The bot's own words: surface words (ё as е) with their counts, their dictionary forms with
    counts, and a SymSpell of the site's words the language's dictionary lacks («технобонусы»)."""

    signature: tuple[Any, ...]
    words: Counter[str]
    lemmas: Counter[str]
    extra: Any  # symspellpy.SymSpell


def correct(bot_id: int, text: str) -> Spelled:
    """`text` with its misspelt words corrected for the bot `bot_id` (see the module's rules)."""
    site = site_words(bot_id)
    changes: list[tuple[str, str]] = []
    parts: list[str] = []
    at, looked = 0, 0
    for match in _WORD.finditer(text):
        word = match.group()
        if looked >= MAX_LOOKUPS:
            break
        reading = _reading(word, text[max(0, match.start() - 16) : match.start()], first=match.start() == 0)
        if reading is None:
            continue
        lower = word.lower().replace("ё", "е")
        if _known(lower, site):
            continue
        looked += 1
        fix = best_candidate(lower, site, name=reading == "name")
        if fix is None:
            continue
        parts += [text[at : match.start()], fix.capitalize() if word[0].isupper() else fix]
        at = match.end()
        changes.append((word, fix))
    if not changes:
        return Spelled(text=text)
    on_site = all(fix in site.words or site.lemmas[_lemma(fix)] for _, fix in changes)
    return Spelled(text="".join([*parts, text[at:]]), changes=tuple(changes), on_site=on_site)


def best_candidate(word: str, site: SiteWords, *, name: bool = False) -> str | None:
    """The word meant by the unknown `word`: the nearest candidate of either dictionary; at the same
    distance a site word, then one keeping the first letter (it is rarely the mistyped one), then
    the one the site uses most, then the most common in the language. An unknown `name` (capitalised
    inside a sentence) is read only as a word the site writes, one edit away («Кдраснодар»)."""
    from symspellpy import Verbosity

    distance = 1 if name or len(word) <= SHORT else MAX_DISTANCE
    found: dict[str, int] = {}
    for speller in (language_speller(), site.extra):
        for item in speller.lookup(word, Verbosity.ALL, max_edit_distance=distance, transfer_casing=False):
            if item.term != word and len(item.term) >= MIN_LETTERS and (not name or item.term in site.words):
                found[item.term] = min(item.distance, found.get(item.term, MAX_DISTANCE + 1))
    if not found:
        return None

    def rank(term: str) -> tuple[int, bool, bool, int, float]:
        on_site = site.words[term] + site.lemmas[_lemma(term)]
        return (found[term], on_site == 0, term[0] != word[0], -on_site, -_zipf(term))

    return min(sorted(found), key=rank)


def site_words(bot_id: int) -> SiteWords:
    """The bot's site dictionary, from the process cache while its entries are unchanged."""
    signature = _signature(bot_id)
    with _lock:
        cached = _sites.get(bot_id)
        if cached is not None and cached.signature == signature:
            _sites.move_to_end(bot_id)
            return cached
    built = _build_site(signature, _entry_texts(bot_id))
    with _lock:
        _sites[bot_id] = built
        _sites.move_to_end(bot_id)
        while len(_sites) > CACHED_BOTS:
            _sites.popitem(last=False)
    return built


def words_of(texts: Iterable[str]) -> Counter[str]:
    """The Russian words of `texts`, lower case with ё as е, and how often each occurs."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_RUSSIAN.findall(text.lower().replace("ё", "е")))
    return counts


def warm_up() -> None:
    """Load the language's dictionary before the first visitor needs it (~3 s, ~70 MB)."""
    language_speller()


# --- helpers -------------------------------------------------------------------------------------

_lock = threading.Lock()
_sites: OrderedDict[int, SiteWords] = OrderedDict()


def _reading(word: str, before: str, *, first: bool) -> Literal["word", "name"] | None:
    """How a token may be corrected: as a word; as a name (capitalised inside a sentence: only into
    a name the site writes); or not at all (an abbreviation in capitals, Latin or mixed-script, a
    number, a word too short). Capitals inside a word («кСолько») are a slip of Shift, not a name."""
    if len(word) < MIN_LETTERS or not _RUSSIAN.fullmatch(word.lower()):
        return None
    if word.isupper():
        return None  # «СБП», «НДС»
    tail = before.rstrip()
    sentence_start = first or not tail or tail[-1] in _SENTENCE_ENDS
    if word[0].isupper() and word[1:].islower() and not sentence_start:
        return "name"
    return "word"


def _known(word: str, site: SiteWords) -> bool:
    """A site word, a word pymorphy3 knows, or a longer word common in Russian: wordfreq also counts
    pieces its tokenizer cut off words («сть» 3.2), which would hide a typo of «есть»."""
    if word in site.words or _morph().word_is_known(word):
        return True
    return len(word) >= COMMON_MIN_LETTERS and _zipf(word) >= COMMON_ZIPF


def _signature(bot_id: int) -> tuple[Any, ...]:
    """What changes whenever the bot's entries do: every writer of Entry sets `updated_at` (a switched
    off entry too), and a deleted one lowers the count."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), max(updated_at) FROM knowledge_entry WHERE bot_id = %s", [bot_id])
        row = cursor.fetchone()
    return tuple(row or ())


def _entry_texts(bot_id: int) -> Iterable[str]:
    rows = Entry.objects.filter(bot_id=bot_id, active=True).values_list("title", "heading_path", "text")
    for title, heading, text in rows.iterator(chunk_size=2000):
        yield f"{title} {heading} {text}"


def _build_site(signature: tuple[Any, ...], texts: Iterable[str]) -> SiteWords:
    from symspellpy import SymSpell

    words = Counter({word: count for word, count in words_of(texts).items() if len(word) >= MIN_LETTERS})
    lemmas: Counter[str] = Counter()
    extra = SymSpell(max_dictionary_edit_distance=MAX_DISTANCE)
    common = language_speller().words
    for word, count in words.items():
        lemmas[_lemma(word)] += count
        if word not in common:
            extra.create_dictionary_entry(word, count)
    return SiteWords(signature=signature, words=words, lemmas=lemmas, extra=extra)


@cache
def language_speller() -> Any:
    """The language's dictionary: wordfreq's common Russian words that pymorphy3 knows, each counted
    by its frequency (per billion words)."""
    from symspellpy import SymSpell
    from wordfreq import get_frequency_dict

    speller = SymSpell(max_dictionary_edit_distance=MAX_DISTANCE)
    morph = _morph()
    floor = 10 ** (COMMON_ZIPF - 9)  # Zipf is log10 of uses per billion words
    for word, frequency in get_frequency_dict("ru", wordlist="large").items():
        if frequency < floor:
            continue
        plain = word.replace("ё", "е")
        if len(plain) >= MIN_LETTERS and _RUSSIAN.fullmatch(plain) and morph.word_is_known(plain):
            speller.create_dictionary_entry(plain, int(frequency * 1e9))
    return speller


@lru_cache(maxsize=65536)
def _lemma(word: str) -> str:
    return str(_morph().parse(word)[0].normal_form).replace("ё", "е")


@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "ru"))


@cache
def _morph() -> Any:
    import pymorphy3

    return pymorphy3.MorphAnalyzer()
