"""What a visitor reads when no model words the answer: the part of an entry that answers the question.

An entry is cut into units a person can read on their own: table rows (the chunker writes each
row with its header: «Внутри МКАД: срок — на следующий день, стоимость — 350 ₽»), list items and
sentences (razdel's Russian sentence splitter: «т.е.», «руб.», «п. 6.4» do not end a sentence).
The unit that shares the most words with the question is shown, with its neighbours while they
fit. What must stay true: a unit is never cut (only a single unit longer than HARD_LIMIT is, at a
word, with an ellipsis), and a unit without words («6.4.», «1)», «—») is never shown on its own:
it is glued to the unit it numbers.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Final

import razdel
import snowballstemmer

from assistant.chat import asked, facts

if TYPE_CHECKING:
    from knowledge.search import SearchResult

LIMIT: Final = 400  # characters an excerpt aims for
HARD_LIMIT: Final = 700  # a single unit longer than this is cut at a word: the only cut there is
_WORD: Final = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_ITEM: Final = re.compile(r"^\s*(?:[•·▪‣◦*-]|\d{1,2}[.)])\s+")
_LETTERS: Final = re.compile(r"[^\W\d_]{2,}")
# Words that say nothing about which part of an entry answers («как», «можно», «ли», "what").
_STOP: Final = frozenset(
    "а в во и или к ко на над о об от по под при про с со у за из для до не ни но что как какой какая какие "
    "каков какова сколько где когда куда можно ли ваш ваша ваше ваши вы вас вам мне меня мой я мы нас нам это "
    "этот эта есть быть будет был если то же бы the a an of to in on for is are be do does can i you your we "
    "what how when where which who my our it this that with at by from".split()
)


def units(text: str) -> list[str]:
    """The readable units of an entry's text, in order: lines that are rows or list items as they
    are, other lines as sentences; a unit without a word is glued to the next one."""
    found: list[str] = []
    for line in (line.strip() for line in text.split("\n")):
        if not line:
            continue
        if _ITEM.match(line) or _is_row(line):
            found.append(line)
        else:
            found += [sentence.text for sentence in razdel.sentenize(line)]
    return _glue_labels(found)


def _is_row(line: str) -> bool:
    return " | " in line or bool(re.match(r"^[^.!?]{1,80}: .+ — ", line))


def _glue_labels(found: list[str]) -> list[str]:
    glued: list[str] = []
    pending = ""
    for unit in found:
        if not _LETTERS.search(unit):
            pending = f"{pending} {unit}".strip()
            continue
        glued.append(f"{pending} {unit}".strip() if pending else unit)
        pending = ""
    return glued


_local = threading.local()


def _stemmers() -> tuple[snowballstemmer.stemmer, snowballstemmer.stemmer]:
    """This thread's stemmers: a snowball stemmer keeps the word it is working on in itself, so
    one shared by the chat's worker threads garbled words and failed turns (IndexError) under load."""
    pair: tuple[snowballstemmer.stemmer, snowballstemmer.stemmer] | None = getattr(_local, "stemmers", None)
    if pair is None:
        pair = _local.stemmers = (snowballstemmer.stemmer("russian"), snowballstemmer.stemmer("english"))
    return pair


def stems(text: str) -> set[str]:
    russian, english = _stemmers()
    found = set()
    for word in _WORD.findall(text.lower().replace("ё", "е")):
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        stemmer = english if word.isascii() else russian
        found.add(stemmer.stemWord(word))
    return found


def shares_words(question: str, entry: SearchResult) -> bool:
    """Whether an entry is about the question's words at all: a stem in common, or search credited it
    with one of them (a misspelling read as the site's word, «телеграм» read as «Telegram»)."""
    return bool(stems(question) & stems(entry.text)) or entry.components.get("lexical", 0.0) > 0


def excerpt(text: str, question: str = "", limit: int = LIMIT) -> str:
    """The units of `text` that best answer `question` (the first ones for an empty question), whole,
    in their own order, about `limit` characters. One unit longer than HARD_LIMIT is cut at a word."""
    parts = units(text)
    if not parts:
        return _cut(" ".join(text.split()), HARD_LIMIT)
    wanted = stems(question)
    kinds = asked.asked_kinds(question)
    # A unit that states the kind of fact asked for (asked.py) counts as one more shared word.
    scores = [len(wanted & stems(part)) + _gives(part, kinds) for part in parts]
    best = max(range(len(parts)), key=lambda i: (scores[i], -i))
    return _window(parts, scores, best, limit)


def _gives(unit: str, kinds: frozenset[str]) -> int:
    return int(bool(kinds) and any(fact.code in kinds for fact in facts.facts_in(unit)))


def _window(parts: list[str], scores: list[int], best: int, limit: int) -> str:
    """The best unit, then neighbours (the better-matching side first) while the whole fits."""
    first = last = best
    size = len(parts[best])
    while True:
        options = [i for i in (last + 1, first - 1) if 0 <= i < len(parts) and size + 1 + len(parts[i]) <= limit]
        if not options:
            break
        pick = max(options, key=lambda i: (scores[i], i > best))
        size += 1 + len(parts[pick])
        first, last = min(first, pick), max(last, pick)
    chosen = parts[first:last + 1]
    if len(chosen) == 1:
        return _cut(chosen[0], HARD_LIMIT)
    glue = "\n" if any(_ITEM.match(p) or _is_row(p) for p in chosen) else " "
    return glue.join(chosen)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:—- ")
    return f"{cut}…"
