"""The fact check: which facts a text states, and whether a source gives each of them
(docs/architecture.md, "The answer chain").

Every fact in an answer — a number, price, percentage, term, date, time, phone, e-mail, web
address or messenger handle — must be found in the text the answer rests on: the entry it cites
(the chain's sourced route), or only the bot's own name and site for an answer without a source.
`facts_in()` reads both sides the same way, as values: «14 дней» = «четырнадцать дней» = "14
days" = «две недели» (a week is exactly 7 days), but «месяц» is not «14 дней» nor «30 дней»;
«5 000 ₽» = «5000 руб.» = «5 тыс. рублей»; «+7 (495) 123-45-67» = «8 495 1234567».

It is blunt on purpose. A false block costs the cited entry's own excerpt or an honest "no exact
answer" with the operator button; a false pass costs a promise the company never made.

What must stay true:
- an answer and its source go through the same `facts_in`, so both sides are normalised alike;
- a domain is a domain when the Public Suffix List says its ending is one (publicsuffixlist ships
  the list offline), not when it is on a list of endings typed in here;
- `settled_length` never lets a fact through half-read: a streamed draft is shown only up to words
  that no later text can turn into (or out of) a fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

from publicsuffixlist import PublicSuffixList

from answers import factwords as words

# The reason codes live with the quantities that make most of them; re-exported here for callers.
from answers.amounts import DATE as DATE
from answers.amounts import EMAIL as EMAIL
from answers.amounts import HANDLE as HANDLE
from answers.amounts import NUMBER as NUMBER
from answers.amounts import PERCENT as PERCENT
from answers.amounts import PHONE as PHONE
from answers.amounts import PRICE as PRICE
from answers.amounts import TERM as TERM
from answers.amounts import TIME as TIME
from answers.amounts import URL as URL
from answers.amounts import quantities

# Units a table header may carry for a bare cell («Стоимость, ₽ | 350»): the answer's «350 ₽» may
# rest on a source's bare 350. Not for terms: «14 дней» needs a 14 that is days.
_HEADER_UNITS: Final = frozenset({*set(words.CURRENCIES.values()), "%", "kg", "km", "m", "cm", "mm", "m2", "kw", "gb"})


@dataclass(frozen=True)
class Fact:
    code: str  # one of the codes above: what kind of fact (journal reason codes)
    key: str  # the normalised value: "q:14:day", "q:350:rub", "n:14", "p:4951234567", "u:shop.ru/x", ...

    def offers(self) -> set[str]:
        """The keys a source stating this fact supports: itself, and its parts ("31.12.2025" also
        gives the 31st and December; «350 ₽» also gives a bare 350)."""
        kind, _, rest = self.key.partition(":")
        if kind == "q":
            return {self.key, f"n:{rest.rsplit(':', 1)[0]}"}
        if kind == "n":
            return {self.key, f"n?:{rest}"}
        if kind == "d":
            day, month, *year = rest.split(".")
            return {self.key, f"d:{day}.{month}", f"n:{day}", f"m:{month}", *(f"n:{y}" for y in year)}
        if kind == "y":
            return {self.key, f"n:{rest}"}
        if kind == "t":
            hours, minutes = rest.split(":")
            return {self.key, f"n:{hours}"} if minutes == "00" else {self.key}
        if kind in {"u", "e"}:  # an address on a host also gives the host («shop.ru», «sales@shop.ru»)
            return {self.key, f"u:{rest.split('/')[0].rsplit('@', 1)[-1]}"}
        return {self.key}

    def accepted(self) -> tuple[str, ...]:
        """The keys any one of which, offered by a source, supports this fact."""
        kind, _, rest = self.key.partition(":")
        if kind == "q":
            value, unit = rest.rsplit(":", 1)
            return (self.key, f"n?:{value}") if unit in _HEADER_UNITS else (self.key,)
        if kind == "y":
            return (self.key, f"n:{rest}")
        return (self.key,)


@dataclass(frozen=True)
class Known:
    """What a set of texts states, ready to look facts up in."""

    offered: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> Known:
        return cls(frozenset().union(*(offered_by(text) for text in texts if text)))

    def supports(self, fact: Fact) -> bool:
        return any(key in self.offered for key in fact.accepted())


OFFERED_CACHE: Final = 2048  # texts: a bot's name and site, and the entries cited most


@lru_cache(maxsize=OFFERED_CACHE)
def offered_by(text: str) -> frozenset[str]:
    """The fact keys `text` states. Read once per text while it is among the most recently used:
    a cited entry is read for the streamed draft and again for the final check, and popular pages
    are cited by many visitors. A pure function of the text (the word tables and the Public Suffix
    List are fixed while the process runs), so a cached answer is the answer."""
    return frozenset(key for fact in facts_in(text) for key in fact.offers())


def blocked(answer: str, known: Known) -> list[Fact]:
    """The facts of `answer` that `known` does not give, in order, each once."""
    return list(dict.fromkeys(fact for fact in facts_in(answer) if not known.supports(fact)))


def unsupported(answer: str, known_texts: Iterable[str]) -> list[str]:
    """Reason codes (sorted, unique) of the facts in `answer` that none of `known_texts` states."""
    return sorted({fact.code for fact in blocked(answer, Known.of(known_texts))})


def facts_in(text: str) -> list[Fact]:
    """Every fact-like thing in `text`. Addresses, phones, dates and times are taken out first, so
    their digits are not read again as plain numbers."""
    found: list[Fact] = []
    text = _take_spans(_normalise(text), found)
    for pattern, code, prefix, numbered in _NAMED:
        found += [Fact(code, f"{prefix}{match.lastindex if numbered else ''}") for match in pattern.finditer(text)]
    found += [Fact(code, key) for code, key in quantities(text)]
    return found


# --- one spelling for both sides -------------------------------------------------------------------

# Written-out addresses stay on one line, and a plain dot has no space around it: "ru.\n\n3.2." ends
# an address, it does not continue it.
_AT = r"(?:[ \t]*@[ \t]*|[ \t]*[(\[{<][ \t]*(?:собака|собачка|at)[ \t]*[)\]}>][ \t]*|[ \t]+(?:собака|собачка|at)[ \t]+)"
_WORD_DOT = r"(?:[ \t]*[(\[{<][ \t]*(?:точка|dot)[ \t]*[)\]}>][ \t]*|[ \t]+(?:точка|dot)[ \t]+)"
_DOT = rf"(?:\.|{_WORD_DOT})"
_HIDDEN_EMAIL = re.compile(rf"(?<![\w.+-])([\w.+-]*\w){_AT}([\w-]+(?:{_DOT}[\w-]+)+)")
_HIDDEN_DOMAIN = re.compile(rf"(?<![\w.-])([\w-]+){_WORD_DOT}([\w-]+)\b")
_EN_COMPOUND = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(one|two|three|four|five|six|"
                          r"seven|eight|nine|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)\b")
_ROUND_THE_CLOCK = re.compile(r"\b24\s*/\s*7\b|\b24\s+часа\s+в\s+сутки\b|\baround the clock\b|\b24 hours a day\b")


def _normalise(text: str) -> str:
    """Lower case, ё as е, e-mails and domains written out in words («help собака shop точка ru»,
    "sales (at) shop (dot) com") written as addresses, "twenty-five" as two number words."""
    text = text.lower().replace("ё", "е")
    text = _HIDDEN_EMAIL.sub(_unhide_email, text)
    text = _HIDDEN_DOMAIN.sub(_unhide_domain, text)
    text = _ROUND_THE_CLOCK.sub(" круглосуточно ", text)
    return _EN_COMPOUND.sub(r"\1 \2", text)


def _unhide_email(match: re.Match[str]) -> str:
    domain = re.sub(_DOT, ".", match.group(2))
    if "@" not in match.group(0) and not _is_suffix(domain.rsplit(".", 1)[-1]):
        return match.group(0)  # "meet at home dot…" is not an address
    return f"{match.group(1)}@{domain}"


def _unhide_domain(match: re.Match[str]) -> str:
    name, ending = match.groups()
    return f"{name}.{ending}" if _is_suffix(ending) else match.group(0)


@cache
def _psl() -> PublicSuffixList:
    return PublicSuffixList(accept_unknown=False)


@cache
def _is_suffix(label: str) -> bool:
    return _psl().publicsuffix(f"x.{label}") is not None


def is_domain(host: str) -> bool:
    """Whether `host` ends in a public suffix with a name before it (shop.ru, techno-pay.xyz,
    сайт.рф), by the Public Suffix List; file names (index.html) and decimals (6.4) are not."""
    host = host.strip(".").lower()
    if "." not in host or all(label.isdigit() for label in host.split(".")):
        return False
    return _psl().privatesuffix(host) is not None


# --- addresses, handles, phones, dates and times: found as spans -------------------------------

# The lookbehinds let a match start only at the beginning of a run ("1.1.1.…" costs one try, not n).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"(?<![\w.@/-])(?:(?:https?|ftp)://)?(?:[\w-]+\.)+[\w-]+(?::\d+)?(?:/[^\s<>«»\"'()]*)?")
_HANDLE = re.compile(r"(?<![\w.@])@([a-z0-9_](?:[\w.]*[\w])?)")
_PHONE = re.compile(r"(?<![\w.,])\+?\(?\d[\d\s()-]{5,}\d(?![\w.,]\d)")
_DATE = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})(?:\.(\d{4}|\d{2}))?(?![\d.]\d)")
_ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_URL_TAIL = ".,;:!?)»\"'/"
_MESSENGERS: Final = frozenset({"t.me", "telegram.me", "wa.me", "vk.com", "vk.me", "instagram.com", "ok.ru"})


def _take_spans(text: str, found: list[Fact]) -> str:
    """Record the span facts and blank them out, so their digits are not read again."""
    for pattern, read in _SPANS:
        text = pattern.sub(_recorder(read, found), text)
    return text


def _recorder(read: Callable[[re.Match[str]], list[Fact]], found: list[Fact]) -> Callable[[re.Match[str]], str]:
    def blank(match: re.Match[str]) -> str:
        facts = read(match)
        if not facts:  # not this kind after all (an amount, not a phone): leave it to the next readers
            return match.group(0)
        found.extend(facts)
        return " "
    return blank


def _email(match: re.Match[str]) -> list[Fact]:
    address = match.group(0).strip(".")
    return [Fact(EMAIL, f"e:{address}")]


def _url(match: re.Match[str]) -> list[Fact]:
    raw = match.group(0)
    address = re.sub(r"^(?:(?:https?|ftp)://)?(?:www\.)?", "", raw).rstrip(_URL_TAIL)
    host, _, path = address.partition("/")
    if not raw.startswith(("http://", "https://", "ftp://", "www.")) and not is_domain(host.split(":")[0]):
        return []
    facts = [Fact(URL, f"u:{address}" if path else f"u:{host}")]
    if host in _MESSENGERS and path:  # t.me/shop is the handle @shop; wa.me/7999… is a phone
        name = path.split("/")[0].split("?")[0].lstrip("@")
        digits = re.sub(r"\D", "", name)
        facts.append(Fact(PHONE, f"p:{digits[-10:]}") if len(digits) >= 10 else Fact(HANDLE, f"h:{name}"))
    return facts


def _handle(match: re.Match[str]) -> list[Fact]:
    return [Fact(HANDLE, f"h:{match.group(1)}")]


def _phone(match: re.Match[str]) -> list[Fact]:
    """Phones have 7-15 digits and end in a pair ("-35-35", "45 67"), start with + or (, or come
    as one long run; a number written in groups of three ("10 000 000") is an amount."""
    raw = match.group(0).strip()
    digits = re.sub(r"\D", "", raw)
    groups = re.findall(r"\d+", raw)
    looks_like = raw.startswith(("+", "(")) or len(groups[-1]) == 2 or (len(groups) == 1 and len(digits) >= 10)
    return [Fact(PHONE, f"p:{digits[-10:]}")] if 7 <= len(digits) <= 15 and looks_like else []


def _date(match: re.Match[str]) -> list[Fact]:
    day, month, year = match.groups()
    if not (1 <= int(day) <= 31 and 1 <= int(month) <= 12):
        return []  # «6.4» read as a date is fine, «6.40» is a decimal
    if year is None:
        return [Fact(DATE, f"d:{int(day)}.{int(month)}")]
    full = year if len(year) == 4 else f"20{year}"
    return [Fact(DATE, f"d:{int(day)}.{int(month)}.{full}")]


def _iso_date(match: re.Match[str]) -> list[Fact]:
    year, month, day = match.groups()
    return [Fact(DATE, f"d:{int(day)}.{int(month)}.{year}")]


def _time(match: re.Match[str]) -> list[Fact]:
    return [Fact(TIME, f"t:{int(match.group(1))}:{match.group(2)}")]


_SPANS: Final = (
    (_EMAIL, _email), (_URL, _url), (_HANDLE, _handle), (_PHONE, _phone), (_ISO_DATE, _iso_date),
    (_TIME, _time), (_DATE, _date),
)


# --- months, weekdays and two claim words: found by name --------------------------------------------

_MONTHS = (
    r"январ[ьяюе]|january", r"феврал[ьяюе]|february", r"март[аеу]?|march", r"апрел[ьяюе]|april", r"ма[йяею]",
    r"июн[ьяюе]|june", r"июл[ьяюе]|july", r"август[аеу]?|august", r"сентябр[ьяюе]|september",
    r"октябр[ьяюе]|october", r"ноябр[ьяюе]|november", r"декабр[ьяюе]|december",
)  # English "may" is left out: it is mostly a verb; so are "sat", "sun", "mar" as abbreviations.
_WEEKDAYS = (
    r"понедельник\w*|пн|mondays?", r"вторник\w*|вт|tuesdays?", r"сред[ауы]|ср|wednesdays?", r"четверг\w*|чт|thursdays?",
    r"пятниц\w*|пт|fridays?", r"суббот\w*|сб|saturdays?", r"воскресень\w*|вс|sundays?",
)


def _alternatives(names: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern whose matching group number (1-based) is the index of the name that matched."""
    return re.compile(r"\b(?:" + "|".join(f"({name})" for name in names) + r")\b")


_NAMED: Final = (  # (pattern, code, key prefix, whether the matching group's number is part of the key)
    (_alternatives(_MONTHS), DATE, "m:", True),
    (_alternatives(_WEEKDAYS), DATE, "w:", True),
    # «доставка бесплатная», "free delivery" is a price ("feel free to ask" is not)
    (re.compile(r"\bбесплатн\w*|(?<!feel )\bfree\b(?! to\b)|\bno charge\b"), PRICE, "free", False),
    (re.compile(r"\bкруглосуточн\w*"), TERM, "24h", False),
)


# --- streaming: how much of a growing text is settled ------------------------------------------

_WORD = re.compile(r"\S+")
_EDGE = "«»\"'()[]{},.;:!?…"
_OPEN_WORDS: Final = frozenset({"собака", "собачка", "at", "точка", "dot", "free"})


def _open(word: str) -> bool:
    """Whether what `word` says may still change with the words after it: a number or a number word
    («14» may become «14 недель», «двадцать» «двадцать пять»), an address in the making («help
    собака…»), "free" (a price, unless "free to…"). A unit or a lead word needs no wait: the fact
    it completes is read, and checked, with it."""
    bare = word.lower().replace("ё", "е").strip(_EDGE)
    if not bare:
        return False
    return (
        any(ch.isdigit() for ch in bare) or any(ch in bare for ch in "@/.₽$€£¥₸%")
        or bare in words.number_words() or bare in words.one_after_tens() or bare in _OPEN_WORDS
        or bare.startswith(words.HALF_PREFIX)
    )


# Words that are facts by themselves (a month, a weekday, «бесплатно»): not held once whole (their
# reading does not depend on the next word), but never shown half-typed before they are checked.
_NAMED_STEMS: Final = (
    "январ", "феврал", "март", "апрел", "мая", "май", "июн", "июл", "август", "сентябр", "октябр", "ноябр",
    "декабр", "понедельник", "вторник", "сред", "четверг", "пятниц", "суббот", "воскресень", "бесплатн",
    "круглосуточн", "january", "february", "march", "april", "june", "july", "august", "september", "october",
    "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)


@cache
def _open_prefixes() -> frozenset[str]:
    """Every beginning of a word that `_open` holds: a half-typed word that is none of these cannot
    become one («Дост…» will not be a number word; «дв…» may)."""
    whole = [*words.number_words(), *words.one_after_tens(), *_OPEN_WORDS, words.HALF_PREFIX, *_NAMED_STEMS]
    return frozenset(word[:end] for word in whole for end in range(1, len(word) + 1))


def _may_open(partial: str) -> bool:
    bare = partial.lower().replace("ё", "е").lstrip(_EDGE)
    return not bare or not bare.isalpha() or bare in _open_prefixes()


def settled_length(text: str) -> int:
    """How many leading characters of a text that is still growing can be read for facts now: up to
    the end of a whole word that is not part of a fact in the making, nor right after one (the
    word after «14» may be «дней» or «недель»; after «собака» an address may follow). A word still
    being typed counts when no way of finishing it makes it such a word (it is shown as it grows:
    a fact is only ever made of whole words, each checked once it is complete)."""
    found = list(_WORD.finditer(text))
    if text and not text[-1].isspace() and found:
        partial = found.pop()  # the last word may still grow
        if not _may_open(partial.group()) and (not found or not _open(found[-1].group())):
            return len(text)
    for k in range(len(found) - 1, -1, -1):
        if not _open(found[k].group()) and (k == 0 or not _open(found[k - 1].group())):
            return found[k].end()
    return 0


_TRIGGER_SYMBOLS: Final = frozenset("0123456789@./:%₽$€£¥₸")


def may_hold_fact(text: str) -> bool:
    """False only when no fact can be read in `text`: no digit, address sign, number word, unit,
    currency, fact word or address word in it. A cheap test before the full reading."""
    if _TRIGGER_SYMBOLS & set(text):
        return True
    for match in _WORD.finditer(text.lower().replace("ё", "е")):
        bare = match.group().strip(_EDGE)
        if (bare in words.number_words() or bare in words.unit_only_words() or bare in words.UNITS
                or bare in words.CURRENCIES or bare in _OPEN_WORDS or bare.startswith(words.HALF_PREFIX)
                or bare.startswith(_NAMED_STEMS) or bare in {"free", "half"}):
            return True
    return False
