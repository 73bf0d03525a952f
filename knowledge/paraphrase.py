"""Whether a visitor's question is a paraphrase of a correction's question: correction memory's
rule that a correction answers its own question and the other ways to ask it, never its neighbours.

Three tests, all on the question (never on the answer's topic):

- **meaning**: the visitor's query vector against each wording's query vector (question to
  question); a paraphrase is at least `PARAPHRASE_COSINE` similar to one wording;
- **distinguishing words**: the words that single out what is asked about — names of places,
  people, organisations and brands, abbreviations, numbers, Latin words, and nouns or adjectives
  that are rare both in the Russian language (wordfreq's Zipf scale) and in the bot's own texts
  (the lexicon's document frequency). «Сколько стоит доставка в Казань?» names «Казань», which no
  wording of «Сколько стоит доставка по Москве?» has: a near miss, whatever its vector says. A
  question word («стоимость», «цена»: common in Russian) or a topic word the site uses everywhere
  («доставка» on a shop) does not distinguish, so «Какая цена доставки по Москве?» stays a paraphrase;
- **the object**: what a transitive verb is done to (`objects`); «Как сменить телефон в аккаунте?»
  asks to do to «телефон» what «Как изменить электронную почту…» does to «почта», common words
  both: when neither side has the other's object, it is a near miss.

Each wording is read on its own: a question paraphrases the correction when it paraphrases one.

Verdicts: a *paraphrase* gets the correction's priority (its weight and the fix bonus), a *veto*
(a distinguishing word or an object on one side only, for every wording) never gets the
correction, anything else sees it as one more entry. Words are compared as the bot's lexicon
stores them (PostgreSQL's 'russian' lexemes, which the search statement returns); pymorphy3 and
wordfreq read the surface words, matched to those lexemes by the same Snowball stemmer.
docs/search.md explains the rule to an owner; bench/learning_curve.py measures it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache
from typing import Final

# A visitor's question is a paraphrase of a wording at least this cosine-similar, both embedded as
# queries (e5-small: calibrated on the VK Cloud FAQ wordings against their paraphrases and the
# out-of-scope set, bench/learning_curve.py; docs/benchmarks.md).
PARAPHRASE_COSINE: Final = 0.9
# Zipf frequency (log10 of uses per billion words) below which a noun or adjective is specific
# whatever the site: «рассрочка» 2.4, «самовывоз» 1.9, «юрлицо» 1.8.
RARE_IN_LANGUAGE: Final = 3.0
# ... and below which one is specific when the site uses it rarely too (share of the bot's entries
# holding it): «кондиционер» 3.6 and 6 % of the demo's entries, «доллар» 4.4; not «стоимость» 4.8,
# not «доставка» 3.8 on 21 % of a shop's entries.
SPECIFIC_IN_LANGUAGE: Final = 4.5
RARE_ON_SITE: Final = 0.15
# A name or a Latin word on at least this share of the bot's entries is the site's own («VK Cloud»:
# 48 % and 57 % of its docs), not what a question singles out; «Москва» is on 12 % of the demo shop's.
OWN_NAME_ON_SITE: Final = 0.25
# A share means little on a handful of entries (one word in one of six is 17 %): a site counts as
# having at least this many.
SMALL_SITE: Final = 50
# pymorphy3 grammemes of names: places, first names, surnames, patronymics, organisations,
# trademarks, abbreviations («ИП», «ООО», «НДС»).
NAME_GRAMMEMES: Final = frozenset({"Geox", "Name", "Surn", "Patr", "Orgn", "Trad", "Abbr"})
CONTENT_POS: Final = frozenset({"NOUN", "ADJF"})
# Two lexemes of one word family share at least this many first letters.
FAMILY_PREFIX: Final = 5
SHORT_STEM: Final = 3
# A wording's stem of at least this many letters begins a question's word of the same family when
# the word is at most FAMILY_SUFFIX letters longer: «хран» (хранится) and «хранен» (хранения).
FAMILY_STEM: Final = 4
FAMILY_SUFFIX: Final = 2
# A compound said in short keeps this many first letters of its adjective: «юр-», «зар-», «тех-».
COMPOUND_HEAD: Final = (2, 4)
# «SSO», «JIT», «SLA»: initials of this many words (two letters say too little: «IT», «ID»).
INITIALS_MIN: Final = 3
INITIALS_MAX: Final = 5
TOKEN: Final = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)  # a word, hyphenated ones whole
CYRILLIC: Final = re.compile(r"[а-яё]", re.IGNORECASE)
GLOSS: Final = re.compile(r"\([^()]*\)")


class Verdict(StrEnum):
    PARAPHRASE = "paraphrase"
    OTHER = "other"
    VETO = "veto"


@dataclass(frozen=True)
class WordingSignal:
    """One wording of a correction as the search statement returns it."""

    text: str
    cosine: float | None  # query vector against the wording's; None: no vector from this model yet
    lexemes: Mapping[str, int | None]  # its lexemes with their document frequency in the bot's texts
    added: bool = False  # added to the correction (by the owner, from the visitor), not its own question


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    cosine: float  # the best wording's similarity (0 when no wording has a vector)
    unshared: tuple[str, ...] = ()  # the distinguishing words one side has and the other lacks
    # A paraphrase's similarity to the closest added wording it fits (0: none): what the
    # correction's own text, which holds its question but not the added wordings, cannot say.
    added_cosine: float = 0.0


def judge(
    query: str, query_lexemes: Mapping[str, int | None], entries_total: int, wordings: Sequence[WordingSignal],
    answer_lexemes: Collection[str] = (),
) -> Judgement:
    """The verdict on one correction for one question (module docstring). The question is read
    against each wording on its own: it paraphrases the correction when it paraphrases one wording,
    in meaning and in its distinguishing words, and is vetoed when its words fit none. (Read against
    all wordings at once, each wording the owner adds would widen the words the correction knows and
    narrow the ones it requires, and near misses would creep in: bench/learning_curve.py.)
    `answer_lexemes`: the correction's own text; a rare word of the question that the answer speaks
    of is one it answers («Как сменить телефон в аккаунте?» for an answer about the account's
    phone), unless the question also drops a rare word the wording has (it asks about something
    else: «другому пользователю» for «на другое юридическое лицо»); a name must be in the wording
    whatever the answer says: an answer that mentions «Санкт-Петербург» in passing is not about it."""
    best = max((w.cosine for w in wordings if w.cosine is not None), default=0.0)
    if not wordings:
        return Judgement(Verdict.OTHER, best)
    question = _question(query, query_lexemes, entries_total)
    fitting: list[WordingSignal] = []
    unshared: tuple[str, ...] | None = None
    for wording in wordings:
        missing = _unshared(question, wording, entries_total, answer_lexemes)
        if not missing:
            fitting.append(wording)
        elif unshared is None or len(missing) < len(unshared):
            unshared = missing
    if not fitting:
        return Judgement(Verdict.VETO, best, unshared or ())
    fit = max((w.cosine for w in fitting if w.cosine is not None), default=0.0)
    if fit < PARAPHRASE_COSINE:
        return Judgement(Verdict.OTHER, best)
    added = max((w.cosine for w in fitting if w.added and w.cosine is not None), default=0.0)
    return Judgement(Verdict.PARAPHRASE, best, added_cosine=added if added >= PARAPHRASE_COSINE else 0.0)


@dataclass(frozen=True)
class _Question:
    """What the verdict reads of the visitor's question, once for all wordings."""

    lexemes: Mapping[str, int | None]
    asked: frozenset[str]  # its distinguishing words
    names: frozenset[str]  # ... of which names, numbers and Latin words
    short: Mapping[str, frozenset[str]]  # what it says in short, with the words in full
    objects: frozenset[str]  # what it asks to do something to (`objects`)


def _question(text: str, lexemes: Mapping[str, int | None], entries_total: int) -> _Question:
    return _Question(
        lexemes, frozenset(distinguishing(text, lexemes, entries_total)),
        frozenset(distinguishing(text, lexemes, entries_total, names_only=True)), short_forms(text),
        frozenset(objects(text)),
    )


def _unshared(
    question: _Question, wording: WordingSignal, entries_total: int, answer_lexemes: Collection[str],
) -> tuple[str, ...]:
    """The distinguishing words the question and one wording do not share (none: the words fit)."""
    known: set[str] = set(wording.lexemes)
    # One thing said in short on one side and in full on the other: «юрлицо» / «юридическое лицо»,
    # «SSO» / «Single Sign-On». The short form counts as the wording's word, and the full words as said.
    wording_short = short_forms(wording.text)
    known |= set(wording_short)
    said = set(question.lexemes) | set(question.short)
    said_in_full = {word for short, full in question.short.items() if short in known for word in full}
    said_in_full |= {word for short, full in wording_short.items() if short in said for word in full}
    # The wording's side: what it names and the question lacks: «доставка по Москве» does not answer
    # «доставка» (a wording without «Москве» says the owner meant the answer more widely).
    names, rare = _required(wording, entries_total)
    dropped_names = sorted(word for word in names if not _named_in(word, question.lexemes)
                           and word not in said_in_full and word not in said)
    dropped = [word for word in rare if not _covered(word, said) and word not in said_in_full]
    answered = set(answer_lexemes) if not dropped else set()
    unshared = sorted(word for word in question.asked if not _covered(word, known) and word not in said_in_full
                      and (word in question.names or not _covered(word, answered)))
    return tuple(unshared + dropped_names + _swapped(question, wording.text, known, said | said_in_full))


def _swapped(question: _Question, wording: str, known: set[str], said: set[str]) -> list[str]:
    """The question's objects when it does the same to another thing than the wording: «Как сменить
    телефон в аккаунте?» and «Как изменить электронную почту, привязанную к аккаунту?». Common words
    both («телефон», «почта»: nothing rare to tell them apart), and the words around them the same."""
    theirs = objects(wording)
    if not question.objects or not theirs:
        return []
    if any(_covered(word, known) for word in question.objects) or any(_covered(word, said) for word in theirs):
        return []
    return sorted(question.objects)


# What a verb is done to: the first noun in the accusative after a transitive verb, adjectives,
# participles and pronouns between («изменить электронную почту», «узнать мой номер»).
OBJECT_WINDOW: Final = 3
_NOT_AN_OBJECT: Final = frozenset({"PREP", "CONJ", "PRCL", "INTJ"})
_BEFORE_AN_OBJECT: Final = frozenset({"ADJF", "PRTF", "NPRO", "Apro"})


def objects(text: str) -> set[str]:
    """The lexemes of what `text` asks to do something to (`OBJECT_WINDOW`)."""
    tokens = TOKEN.findall(text)
    found: set[str] = set()
    for at, token in enumerate(tokens):
        verb = readings(token) if CYRILLIC.search(token) else ()
        if not verb or not {"INFN", "VERB"} & verb[0].grammemes or "tran" not in verb[0].grammemes:
            continue
        for word in tokens[at + 1 : at + 1 + OBJECT_WINDOW]:
            read = readings(word) if CYRILLIC.search(word) else ()
            if not read or read[0].grammemes & _NOT_AN_OBJECT:
                break
            if any({"NOUN", "accs"} <= r.grammemes for r in read):
                found.add(lexeme_of(word))
                break
            if not read[0].grammemes & _BEFORE_AN_OBJECT:
                break
    return found


def short_forms(text: str) -> dict[str, frozenset[str]]:
    """What `text` says in full that may be said in short, as lexemes: a compound of an adjective's
    first letters and its noun («юридическое лицо» -> «юрлиц», «заработная плата» -> «зарплат»), and
    the initials of consecutive Latin words («Single Sign-On» -> «sso», «just-in-time» -> «jit»);
    each with the lexemes of the words it stands for."""
    found: dict[str, frozenset[str]] = {}
    tokens = TOKEN.findall(text)
    for first, second in itertools.pairwise(tokens):
        if not (CYRILLIC.search(first) and CYRILLIC.search(second)) or "-" in first + second:
            continue
        head, noun = readings(first), readings(second)
        if head and noun and "ADJF" in head[0].grammemes and "NOUN" in noun[0].grammemes:
            full = frozenset({lexeme_of(first), lexeme_of(second)})
            for letters in range(COMPOUND_HEAD[0], COMPOUND_HEAD[1] + 1):
                found.setdefault(lexeme_of(first[:letters] + second), full)
    for run in _latin_runs(text):
        for size in range(INITIALS_MIN, min(INITIALS_MAX, len(run)) + 1):
            for at in range(len(run) - size + 1):
                words = run[at:at + size]
                found.setdefault("".join(part[0] for part, _ in words).lower(),
                                 frozenset(w for part, whole in words for w in (part.lower(), whole)))
    return found


def _latin_runs(text: str) -> list[list[tuple[str, str]]]:
    """Runs of Latin words next to each other, hyphenated ones split, each part with its whole word's
    lexeme: «через Single Sign-On» -> («Single», «single»), («Sign», «sign-on»), («On», «sign-on»)."""
    runs: list[list[tuple[str, str]]] = [[]]
    for token in TOKEN.findall(text):
        if CYRILLIC.search(token) or any(char.isdigit() for char in token):
            runs.append([])
            continue
        runs[-1].extend((part, token.lower()) for part in token.split("-") if part)
    return [run for run in runs if len(run) >= INITIALS_MIN]


def _required(wording: WordingSignal, entries_total: int) -> tuple[set[str], set[str]]:
    """(names, other distinguishing words) of one wording: what a question must say to paraphrase
    it. Words in brackets are a gloss («временный доступ (Just in Time Access, JIT)»): a question
    may use them, need not repeat them."""
    text = GLOSS.sub(" ", wording.text)
    words = distinguishing(text, wording.lexemes, entries_total)
    named = distinguishing(text, wording.lexemes, entries_total, names_only=True)
    return named, words - named


def _named_in(name: str, lexemes: Mapping[str, int | None]) -> bool:
    """The question names it too, whole or by one of its parts («Петербург», «Санкт-Петербург»)."""
    return name in lexemes or any(len(part) >= 4 and part in lexemes for part in name.split("-"))


def _covered(word: str, known: set[str]) -> bool:
    """The wordings have the word, or a word of its family: «гарантийный» and «гарантия», «покупка»
    and «покупать» share their first `FAMILY_PREFIX` letters; or the word is a compound ending in one."""
    if word in known:
        return True
    if "-" in word and all(part in known for part in word.split("-")):
        return True  # «DDoS-атака» where the wordings have «DDoS» and «атака»
    stem = word[:FAMILY_PREFIX]
    if len(stem) == FAMILY_PREFIX and any(other.startswith(stem) for other in known):
        return True
    if len(word) >= SHORT_STEM and any(other.startswith(word) for other in known):
        return True  # a short stem that begins a wording's word: «копии» and «копирование»
    if any(len(other) >= FAMILY_STEM and word.startswith(other) and len(word) - len(other) <= FAMILY_SUFFIX
           for other in known):
        return True  # a wording's verb stem and the question's noun of it: «хранится» and «хранения»
    # A compound of a word the wordings have: «техподдержка» and «поддержка» (not a hyphenated
    # one: «экспресс-доставка» is another service than «доставка»).
    return "-" not in word and any(len(other) >= FAMILY_PREFIX + 1 and word.endswith(other) for other in known)


def distinguishing(
    text: str, lexemes: Mapping[str, int | None], entries_total: int, *, names_only: bool = False,
) -> set[str]:
    """The lexemes of `text` (as the bot's lexicon stores them, with their document frequencies)
    that single out what is asked about; with `names_only`, only names, numbers and Latin words."""
    cyrillic = bool(CYRILLIC.search(text))
    found: set[str] = set()
    for token in TOKEN.findall(text):
        lexeme = lexeme_of(token)
        if lexeme not in lexemes and token.lower() in lexemes:
            lexeme = token.lower()  # a number, a Latin word: the lexicon keeps them as they are
        if lexeme not in lexemes:
            continue
        if _is_distinguishing(token, lexemes[lexeme], entries_total, cyrillic=cyrillic, names_only=names_only):
            found.add(lexeme)
    return found


def _is_distinguishing(token: str, df: int | None, entries_total: int, *, cyrillic: bool, names_only: bool) -> bool:
    if token.isdigit():
        return True
    share = df / max(entries_total, SMALL_SITE) if df is not None else None
    own_name = share is not None and share >= OWN_NAME_ON_SITE
    if not CYRILLIC.search(token):
        # A Latin word in a Russian question is a brand or a product («Bosch», «Kubernetes»), unless
        # it is the site's own name («VK Cloud» on half its pages); in a question in English only a
        # word rare in English is.
        return not own_name if cyrillic else _zipf(token.lower(), "en") < RARE_IN_LANGUAGE
    parse = _parse(token)
    if parse is None:
        return False
    tag, lemma, known, capitalised = parse
    if tag & NAME_GRAMMEMES:
        return not own_name
    if names_only:
        return False
    if not known:
        # Not in the dictionary: a misspelling, unless the site uses it rarely («СДЭК») or the
        # visitor wrote it with a capital inside the sentence.
        return capitalised or (share is not None and share <= RARE_ON_SITE)
    if not tag & CONTENT_POS:
        return False
    zipf = _zipf(lemma, "ru")
    if "NOUN" in tag and "plur" in tag:
        # A noun said in the plural is as common as that plural: pymorphy3's dictionary form of
        # «деньги» is «деньга» (Zipf 2.4), but «деньги» (5.6) names nothing rare.
        zipf = max(zipf, _zipf(token.lower(), "ru"))
    return zipf < RARE_IN_LANGUAGE or (zipf < SPECIFIC_IN_LANGUAGE and (share is None or share <= RARE_ON_SITE))


@dataclass(frozen=True)
class Reading:
    """One way pymorphy3 reads a word: its grammemes, its dictionary form, whether it is in the dictionary."""

    grammemes: frozenset[str]
    lemma: str
    known: bool


@lru_cache(maxsize=8192)
def readings(token: str) -> tuple[Reading, ...]:
    """A Cyrillic word's readings, likeliest first (knowledge/scope.py reads the others too)."""
    return tuple(Reading(frozenset(p.tag.grammemes), p.normal_form, bool(p.is_known)) for p in _morph().parse(token))


def _parse(token: str) -> tuple[frozenset[str], str, bool, bool] | None:
    """(grammemes, lemma, in the dictionary, capitalised) of a Cyrillic word's likeliest reading."""
    found = readings(token)
    if not found:
        return None
    best = found[0]
    return best.grammemes, best.lemma, best.known, token[:1].isupper()


@lru_cache(maxsize=8192)
def lexeme_of(token: str) -> str:
    """A word as PostgreSQL's 'russian' configuration stores it: lower case, Snowball's stem."""
    return str(_stemmer().stemWord(token.lower()))


@lru_cache(maxsize=16384)
def _zipf(word: str, language: str) -> float:
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, language))


@cache
def _morph():  # type: ignore[no-untyped-def]
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


@cache
def _stemmer():  # type: ignore[no-untyped-def]
    import snowballstemmer

    return snowballstemmer.stemmer("russian")


def warm_up() -> None:
    """Load the dictionaries before the first visitor (pymorphy3's and wordfreq's take ~1 s)."""
    _morph()
    _zipf("доставка", "ru")
    _zipf("delivery", "en")


def lexemes_from_json(rows: Iterable[Sequence[object]] | None) -> dict[str, int | None]:
    """[[lexeme, df or null], ...] as the search statement builds it -> {lexeme: df}."""
    return {str(row[0]): (int(row[1]) if isinstance(row[1], int | float) else None) for row in rows or ()}
