"""What a visitor reads when no model words the answer: the part of an entry that answers the question.

An entry is cut into units a person can read on their own: table rows (the chunker writes each
row with its header: «Внутри МКАД: срок — на следующий день, стоимость — 350 ₽»), list items and
sentences (razdel's Russian sentence splitter: «т.е.», «руб.», «п. 6.4» do not end a sentence).
The unit that shares the most of the question's words (compared by lemma and stem: lemmas.py),
plus one when it states the kind of fact asked for (a price for «сколько стоит», a term for
«сколько дней»: asked.py), is shown, with its neighbours while they fit. Among units that answer
equally well the first wins: a page states its general rule before the exceptions.

A list item is shown after what makes it an answer, and never after items that do not answer: the
sentence that opens the list («Не принимаются обратно товары из следующих групп:») or else the
entry's heading («Условия возврата:»), then the item, then the items after it.

A question in another language than the entry («How much does delivery in Moscow cost?» to a
Russian page) shares no word with it but names written in Latin letters: search chose the entry by
its meaning (the multilingual vector picks the section, knowledge/search.py), and within it the
unit shown is the one that states the kind of fact asked for ("how much" asks for a price, "how
long" for a term: asked.py), else the section's first one, its general rule. The chain puts one line
in the visitor's language above it saying the page is in another (replies "excerpt_lead").

A bare «Да» or «Нет» answers a question said elsewhere (a FAQ entry's heading): it is shown after
that question, the heading as the lead or the sentence before it, never as a fact of its own.

What must stay true: a unit is never cut (only a single unit longer than HARD_LIMIT is, at a
word, with an ellipsis); a unit without words («6.4.», «1)», «—») is never shown on its own: it
is glued to the unit it numbers; a list item is never the first line when the list has a lead or
the entry a heading (a lead is at most LEAD_LIMIT characters, and never makes a unit cut); a «Да»
or «Нет» with no question before it loses its yes or no, and nothing is shown if that was all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import razdel

from answers import asked, facts, lemmas
from knowledge import scope

if TYPE_CHECKING:
    from knowledge.search import SearchResult

LIMIT: Final = 400  # characters an excerpt aims for
HARD_LIMIT: Final = 700  # a single unit longer than this is cut at a word: the only cut there is
LEAD_LIMIT: Final = 200  # a list's lead longer than this gives way to the heading (cut at a word)
_ITEM: Final = re.compile(r"^\s*(?:[•·▪‣◦*-]|\d{1,2}[.)])\s+")
_LETTERS: Final = re.compile(r"[^\W\d_]{2,}")
_ENDS: Final = ".:;!?…"
# A unit opening with a bare yes or no («Да, можно.», «Нет.»): the answer to a question said elsewhere.
_YES_NO: Final = re.compile(r"^\s*(?:да|нет)\b[\s,.!:;—–-]*", re.IGNORECASE)


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


def stems(text: str) -> set[str]:
    return {lemmas.stem(word) for word in lemmas.words(text)}


def shares_subject(words: Sequence[scope.SubjectWord], entry: SearchResult) -> bool:
    """Whether `entry` is about the question whose subject words are `words` (knowledge/scope.py): its
    headings or text have one of them, in any form (lemmas.py) or of its family («доставить» for
    «доставка»). Always, when the question names no subject (only verbs, places, unknown words)."""
    if not scope.needs_subject(words):
        return True
    text_keys = lemmas.keys_of(f"{entry.heading_path}\n{entry.title}\n{entry.text}")
    stems = [key for key in text_keys if not key.startswith("=")]
    for word in (part for token in scope.evidence(words) for part in lemmas.words(token)):
        if lemmas.keys(word) & text_keys or any(scope.related(lemmas.stem(word), stem) for stem in stems):
            return True
    return False


def shares_words(question: str, entry: SearchResult) -> bool:
    """Whether an entry is about the question's words at all: a stem in common, or search credited it
    with one of them (a misspelling read as the site's word, «телеграм» read as «Telegram»)."""
    return bool(stems(question) & stems(entry.text)) or entry.components.get("lexical", 0.0) > 0


def excerpt(text: str, question: str = "", limit: int = LIMIT, *, heading: str = "") -> str:
    """The units of `text` that best answer `question` (the first ones for an empty question), whole,
    in their own order, about `limit` characters; a list item after its lead or `heading` (the
    entry's own section title). One unit longer than HARD_LIMIT is cut at a word."""
    parts = units(text)
    if not parts:
        return _cut(" ".join(text.split()), HARD_LIMIT)
    wanted = [lemmas.keys(word) for word in dict.fromkeys(lemmas.words(question))]
    kinds = asked.asked_kinds(question)
    # A unit that states the kind of fact asked for (asked.py) counts as one more shared word.
    scores = [lemmas.shared(wanted, lemmas.keys_of(part)) + _gives(part, kinds) for part in parts]
    best = max(range(len(parts)), key=lambda i: (scores[i], -i))
    led = _ITEM.match(parts[best]) or _YES_NO.match(parts[best])
    room = limit - len(_lead(parts, best, heading)) - 1 if led else limit
    first, end = _window(parts, scores, best, room)
    if _YES_NO.match(parts[first]) and first > 0 and parts[first - 1].rstrip().endswith("?"):
        first -= 1  # «Можно ли…? Да, …»: the question the «Да» answers comes along
    lead = _lead(parts, first, heading)
    chosen = _said(parts[first:end], lead)
    if not chosen:
        return ""
    if len(chosen) == 1:  # the lead comes on top: a unit is cut only when it alone is over HARD_LIMIT
        chosen = [_cut(chosen[0], HARD_LIMIT)]
    shown = ("\n" if any(_listed(p) for p in chosen) else " ").join(chosen)
    return f"{lead}\n{shown}" if lead else shown


def _gives(unit: str, kinds: frozenset[str]) -> int:
    return int(bool(kinds) and any(fact.code in kinds for fact in facts.facts_in(unit)))


def _listed(unit: str) -> bool:
    return bool(_ITEM.match(unit)) or _is_row(unit)


def _said(chosen: list[str], lead: str) -> list[str]:
    """The units as they may be shown: a «Да» or «Нет» says nothing without the question it answers,
    so one that follows neither that question (the unit before it, or the heading question shown as
    the lead) loses its yes or no, and a unit that was only that is left out."""
    said: list[str] = []
    for i, unit in enumerate(chosen):
        asked_before = chosen[i - 1].rstrip().endswith("?") if i else lead.endswith("?")
        if _YES_NO.match(unit) and not asked_before:
            unit = _YES_NO.sub("", unit)
            if not _LETTERS.search(unit):
                continue
            unit = unit[:1].upper() + unit[1:]
        said.append(unit)
    return said


def _lead(parts: list[str], first: int, heading: str) -> str:
    """What the first unit shown needs before it to read as an answer: for a list item, the sentence
    that opens its list («…из следующих групп:»), or else the heading; for a bare «Да»/«Нет», the
    heading when it is the question answered (a FAQ entry's); nothing before any other unit."""
    if _YES_NO.match(parts[first]):
        question = " ".join(heading.split())
        return question if question.endswith("?") and len(question) <= LEAD_LIMIT else ""
    if not _ITEM.match(parts[first]):
        return ""
    start = first
    while start > 0 and _ITEM.match(parts[start - 1]):
        start -= 1
    opener = parts[start - 1] if start > 0 and not _listed(parts[start - 1]) else ""
    if opener.rstrip().endswith(":") and len(opener) <= LEAD_LIMIT:
        return opener
    heading = _cut(" ".join(heading.split()), LEAD_LIMIT)
    return heading if not heading or heading.endswith(tuple(_ENDS)) else f"{heading}:"


def _window(parts: list[str], scores: list[int], best: int, limit: int) -> tuple[int, int]:
    """The best unit, then neighbours (the better-matching side first) while the whole fits, as a
    slice. Items and rows before a best item or row are parallel to it, not its context: they are
    not shown, so the answer is never below lines that do not give it (a sentence before them is
    context, and may be)."""
    first = last = best
    size = len(parts[best])
    listed = _listed(parts[best])
    while True:
        options = [i for i in (last + 1, first - 1) if 0 <= i < len(parts) and size + 1 + len(parts[i]) <= limit]
        options = [i for i in options if i > best or not (listed and _listed(parts[i]))]
        if not options:
            break
        pick = max(options, key=lambda i: (scores[i], i > best))
        size += 1 + len(parts[pick])
        first, last = min(first, pick), max(last, pick)
    return first, last + 1


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:—- ")
    return f"{cut}…"
