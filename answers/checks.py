"""The checks every model answer passes before a visitor reads a word of it.

- Facts (facts.py): a cited answer may state only facts its cited entry gives; an answer without
  a source only facts of the bot's own name and site.
- Rules text: an answer repeating the system prompt (six words in a row of it, in either
  language) is not shown, whatever a page or a visitor asked for.

The same verdict decides the final reply (pipeline.chain) and every streamed delta (`DraftGate`),
so a draft never shows what the final reply would withdraw. What must stay true: the gate only
ever lets through a prefix that passed, checked whole; once a prefix fails, nothing more shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from answers import facts

LEAK_CODE: Final = "prompt"
SHINGLE: Final = 6  # words in a row that count as repeating the rules
CONTEXT_WORDS: Final = 5  # words before a new piece of draft that may still join a fact with it
_WORDS: Final = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Verdict:
    facts: list[facts.Fact] = field(default_factory=list)  # the facts the source does not give
    leak: bool = False  # the answer repeats the rules

    @property
    def ok(self) -> bool:
        return not self.facts and not self.leak

    @property
    def codes(self) -> list[str]:
        return sorted({*(fact.code for fact in self.facts), *([LEAK_CODE] if self.leak else [])})

    @property
    def keys(self) -> list[str]:
        """The blocked facts as normalised values ("q:45:day", "u:techno-pay.xyz"): what the run
        journal keeps; the answer's text itself is never stored."""
        return [fact.key for fact in self.facts]


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    tokens = [word.lower().replace("ё", "е") for word in _WORDS.findall(text)]
    return frozenset(tuple(tokens[i:i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def check(answer: str, known: facts.Known, secret: frozenset[tuple[str, ...]]) -> Verdict:
    return Verdict(facts=facts.blocked(answer, known), leak=bool(secret & shingles(answer)))


def known_of(texts: Iterable[str]) -> facts.Known:
    return facts.Known.of(texts)


class DraftGate:
    """The stream gate (llm/streaming.py) of one chat request: shows the answer only once
    a valid source is settled, and then only up to words whose facts are settled and checked
    against that source (`facts.settled_length`); the whole text once it is complete and passes.

    `known(n)` gives what source n's entry (and the bot's name and site) state; it is asked only
    for the source the answer cites, once that number is settled, and only once: the other
    sources' facts are never read for the draft (the final check reads the cited one's again,
    from facts.py's cache)."""

    def __init__(self, known: Callable[[int], facts.Known], sources: int, secret: frozenset[tuple[str, ...]]) -> None:
        self.known = known
        self.sources = sources
        self.secret = secret
        self.shown = 0
        self.stopped = False
        self._cited: tuple[int, facts.Known] | None = None

    def __call__(self, settled: Mapping[str, Any], text: str, complete: bool) -> int:
        source = settled.get("source")
        if self.stopped or not isinstance(source, int) or isinstance(source, bool):
            return self.shown
        if not 0 <= source < self.sources:
            return self.shown
        end = len(text) if complete else facts.settled_length(text)
        if end <= self.shown:
            return self.shown
        if not self._passes(text, end, complete, self._known(source)):
            self.stopped = True
            return self.shown
        self.shown = end
        return end

    def _known(self, source: int) -> facts.Known:
        if self._cited is None or self._cited[0] != source:  # a settled field does not change; this is a guard
            self._cited = (source, self.known(source))
        return self._cited[1]

    def _passes(self, text: str, end: int, complete: bool, known: facts.Known) -> bool:
        """The whole prefix is checked, unless the text is still growing and nothing in the new
        words and the few before them could make a fact (the common case: plain words, the last
        one perhaps still being typed: `settled_length` shows it only if no ending makes it part
        of a fact): then only the rules-leak check runs. The complete text is always checked whole."""
        context = text.rfind(" ", 0, max(0, self.shown - 1))
        for _ in range(CONTEXT_WORDS - 1):
            context = text.rfind(" ", 0, max(0, context))
        if not complete and not facts.may_hold_fact(text[max(0, context):end]):
            return not (self.secret & shingles(text[:end]))
        return check(text[:end], known, self.secret).ok
