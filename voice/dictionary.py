"""The owner's dictionary, applied by code to what the bot shows (the «словарь»).

- Preferred terms: a term is replaced by the owner's wording, whole words only, ё = е, the case of
  the first letter kept («Доставка» -> «Курьерская доставка», «ДОСТАВКА» -> «КУРЬЕРСКАЯ ДОСТАВКА»).
- Forbidden words: a sentence holding one is dropped whole; a trailing «*» stands for any ending
  («дешёв*» forbids «дешёвый», «дешевые»).

What must stay true:
- Rewording is idempotent: the owner's replacements are protected, so applying the dictionary to
  a text it has already reworded changes nothing (canned texts pass through `replies.say` and
  again through the chain's exit).
- Links, e-mail addresses and citation numbers («[1]») are never touched by a replacement.
- Sentences are processed one at a time and joined with the text's own separators, so the words
  of a streamed draft (only complete sentences, `draft`) are the words the final reply keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import regex
from razdel import sentenize

_PROTECTED = regex.compile(r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\[\d+\]")
_EO = {"е": "[её]", "ё": "[её]", "Е": "[её]", "Ё": "[её]"}


def normal(term: str) -> str:
    """A term as the dictionary compares it: one space between words, lower case, ё as е."""
    return " ".join(term.split()).casefold().replace("ё", "е")


def _pattern(term: str) -> str:
    stem = term.rstrip().endswith("*")
    words = " ".join(term.strip().rstrip("*").split())
    body = "".join(r"\s+" if ch == " " else _EO.get(ch, regex.escape(ch)) for ch in words)
    tail = r"\w*" if stem else ""
    return rf"(?<!\w){body}{tail}(?!\w)"


def _cased(found: str, replacement: str, term: str) -> str:
    """The replacement in the case the text used: shouted when the text shouts a term the owner did
    not write in capitals («ДОСТАВКА»; «СБП» is just how the term is written), capitalised when it
    starts a sentence, else as the owner wrote it."""
    if len(found) > 1 and found.isupper() and not term.isupper():
        return replacement.upper()
    if found[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


@dataclass(frozen=True)
class Worded:
    text: str
    forbidden: list[str] = field(default_factory=list)  # the owner's forbidden terms that dropped a sentence
    dropped: int = 0  # sentences dropped

    @property
    def emptied(self) -> bool:
        return not self.text.strip()


class Dictionary:
    def __init__(self, preferred: tuple[tuple[str, str], ...], forbidden: tuple[str, ...]) -> None:
        self.preferred = preferred
        self.forbidden = forbidden
        self._last_draft: tuple[str, str] = ("", "")
        flags = regex.IGNORECASE | regex.UNICODE
        self._terms = (
            regex.compile("|".join(f"(?P<t{i}>{_pattern(term)})" for i, (term, _r) in enumerate(preferred)), flags)
            if preferred else None
        )
        replacements = sorted({r for _t, r in preferred}, key=len, reverse=True)
        self._replacements = (
            regex.compile("|".join(_pattern(r) for r in replacements), flags) if replacements else None
        )
        self._forbidden = (
            regex.compile("|".join(f"(?P<f{i}>{_pattern(word)})" for i, word in enumerate(forbidden)), flags)
            if forbidden else None
        )

    @property
    def empty(self) -> bool:
        return not self.preferred and not self.forbidden

    def replace(self, text: str) -> str:
        """Preferred terms replaced outside links, addresses, citation numbers and the owner's own wordings."""
        if self._terms is None or not text:
            return text
        guarded = [m.span() for m in _PROTECTED.finditer(text)]
        if self._replacements is not None:
            guarded += [m.span() for m in self._replacements.finditer(text)]

        def swap(match: regex.Match[str]) -> str:
            start, end = match.span()
            if any(start < g_end and g_start < end for g_start, g_end in guarded):
                return match.group(0)
            index = int(str(match.lastgroup)[1:])
            term, replacement = self.preferred[index]
            return _cased(match.group(0), replacement, term)

        return str(self._terms.sub(swap, text))

    def forbidden_in(self, text: str) -> list[str]:
        if self._forbidden is None:
            return []
        return sorted({self.forbidden[int(str(m.lastgroup)[1:])] for m in self._forbidden.finditer(text)})

    def word(self, text: str) -> Worded:
        """The text as the visitor may read it: sentences with a forbidden word dropped, terms replaced."""
        if self.empty or not text:
            return Worded(text)
        kept: list[str] = []
        found: set[str] = set()
        dropped = 0
        previous_end = 0
        for sentence in sentenize(text):
            gap = text[previous_end:sentence.start]
            previous_end = sentence.stop
            bad = self.forbidden_in(sentence.text)
            if bad:
                found.update(bad)
                dropped += 1
                continue
            kept.append((gap if kept else "") + self.replace(sentence.text))
        if not dropped:
            return Worded(text[:len(text) - len(text.lstrip())] + "".join(kept) + text[len(text.rstrip()):])
        body = "".join(kept)
        if body:  # the text's own leading and trailing space (« Пригласить оператора?» is appended to another)
            body = text[:len(text) - len(text.lstrip())] + body + text[len(text.rstrip()):]
        return Worded(body, forbidden=sorted(found), dropped=dropped)

    def draft(self, text: str) -> str:
        """A streamed draft: only its complete sentences (the last one may still grow and may yet
        hold a forbidden word), worded. Without a dictionary, the draft as it is."""
        if self.empty:
            return text
        sentences = list(sentenize(text))
        if len(sentences) < 2:
            return ""
        complete = text[:sentences[-1].start].rstrip()
        last = self._last_draft  # most deltas add words to the last sentence: its prefix is worded already
        if last[0] == complete:
            return last[1]
        worded = self.word(complete).text
        self._last_draft = (complete, worded)  # a pure function's result: a race only recomputes it
        return worded

    def canned(self, text: str) -> str:
        """A canned text: worded, but never emptied (the voice page warns about a forbidden word in
        a canned text, and an owner's own replies with one cannot be saved)."""
        worded = self.word(text)
        return self.replace(text) if worded.emptied else worded.text


@lru_cache(maxsize=256)
def compiled(preferred: tuple[tuple[str, str], ...], forbidden: tuple[str, ...]) -> Dictionary:
    return Dictionary(preferred, forbidden)


EMPTY = compiled((), ())
