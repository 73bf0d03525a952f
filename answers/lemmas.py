"""Words compared by what they are, not by how they are spelt: «Москве» is «Москва», «дней» is «день».

A Russian word is known by two keys, its dictionary form (pymorphy3's first reading: «дней» ->
«день», «потерял» -> «потерять») and its snowball stem («доставки» -> «доставк»); two words are the
same word when they share a key. Either alone misses pairs the other catches: the stems of «дней»
and «день» differ (дне / ден), and an unknown word («крупногабарит») has no dictionary form but a
stem. English words and numbers have one key (the stem; the digits).

What must stay true: the keys of a word are a pure function of the word, so a question and a text
are read alike in every thread (snowball stemmers keep state, so each thread has its own; the
pymorphy3 analyser is read-only and shared, as in factwords.py).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Final

import snowballstemmer

from answers import factwords

_WORD: Final = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
# Words that say nothing about which part of a text answers («как», «можно», «ли», "what").
STOP: Final = frozenset(
    "а в во и или к ко на над о об от по под при про с со у за из для до не ни но что как какой какая какие "
    "каков какова сколько где когда куда можно ли ваш ваша ваше ваши вы вас вам мне меня мой я мы нас нам это "
    "этот эта есть быть будет был если то же бы the a an of to in on for is are be do does can i you your we "
    "what how when where which who my our it this that with at by from".split()
)
KEYS_CACHE: Final = 65536  # distinct words: a bot's vocabulary and its visitors' fits

_local = threading.local()


def _stemmers() -> tuple[snowballstemmer.stemmer, snowballstemmer.stemmer]:
    """This thread's stemmers: a snowball stemmer keeps the word it is working on in itself, so
    one shared by the chat's worker threads garbled words and failed turns (IndexError) under load."""
    pair: tuple[snowballstemmer.stemmer, snowballstemmer.stemmer] | None = getattr(_local, "stemmers", None)
    if pair is None:
        pair = _local.stemmers = (snowballstemmer.stemmer("russian"), snowballstemmer.stemmer("english"))
    return pair


def words(text: str) -> list[str]:
    """The words of `text` that can tell one passage from another: lower case, ё as е, no stop words,
    no single letters (digits stay: «30 км»)."""
    found = _WORD.findall(text.lower().replace("ё", "е"))
    return [word for word in found if word not in STOP and (len(word) > 1 or word.isdigit())]


def stem(word: str) -> str:
    russian, english = _stemmers()
    return (english if word.isascii() else russian).stemWord(word)


@lru_cache(maxsize=KEYS_CACHE)
def keys(word: str) -> frozenset[str]:
    """The keys `word` (lower case, from `words`) is known by: its stem, and for a Russian word its
    dictionary form."""
    if word.isdigit():
        return frozenset({word})
    if word.isascii():
        return frozenset({stem(word)})
    lemma = factwords.morph().parse(word)[0].normal_form.replace("ё", "е")
    return frozenset({stem(word), f"={lemma}"})  # «=» keeps a lemma from meeting an equal stem by chance


def keys_of(text: str) -> frozenset[str]:
    """Every key of every word of `text`."""
    return frozenset().union(*(keys(word) for word in words(text)))


def shared(wanted: list[frozenset[str]], text_keys: frozenset[str]) -> int:
    """How many of the wanted words (each given by its keys) a text has."""
    return sum(1 for word in wanted if word & text_keys)
