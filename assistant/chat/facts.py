"""The fact check for answers without a source (seed 004, "where we still trust the model").

The model may talk freely with source = -1, but such a reply must not state a fact: a number, a
price, a date or a term, a phone number, an e-mail, a web address. `unsupported()` finds those facts
and looks each one up in the texts the prompt gave the model (the numbered sources, the bot's name
and site); a fact found nowhere there blocks the reply, and the chain says "no exact answer".

It is blunt on purpose: it compares values, not meanings. "14 дней" passes when 14 (or
«четырнадцать») is anywhere in the sources, even in another sentence; «две недели» for a source's
"14 дней" is blocked, and so is a visitor's own number repeated back ("Да, доставим за 2 дня" is
exactly the invented promise this exists to stop). A false block costs an honest "no exact answer"
with the operator button; a false pass costs a promise the company never made.

What must stay true: sources and answers go through the same `facts_in`, so both sides are
normalised alike ("5 000 ₽" = "5000 руб." = "5 тыс. рублей"); reason codes never carry the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

PRICE: Final = "price"
PHONE: Final = "phone"
EMAIL: Final = "email"
URL: Final = "url"
DATE: Final = "date"
TERM: Final = "term"
NUMBER: Final = "number"


@dataclass(frozen=True)
class Fact:
    code: str  # one of the reason codes above
    key: str  # the normalised value looked up on the sources' side: "n:14", "p:4951234567", ...


def unsupported(answer: str, known_texts: Iterable[str]) -> list[str]:
    """Reason codes (sorted, unique) of the facts in `answer` that none of `known_texts` states."""
    known = {fact.key for text in known_texts for fact in facts_in(text)}
    return sorted({fact.code for fact in facts_in(answer) if fact.key not in known})


def facts_in(text: str) -> list[Fact]:
    """Every fact-like thing in `text`. Addresses, phones and dates are taken out first, so their
    digits are not read again as plain numbers."""
    found: list[Fact] = []
    text = _take_spans(text.lower().replace("ё", "е"), found)
    for pattern, code, prefix in _NAMED:
        found += [Fact(code, f"{prefix}{match.lastindex}") for match in pattern.finditer(text)]
    found += _quantities([m.group(0) for m in _TOKEN.finditer(text)])
    return found


# --- addresses, phones, dates: found as spans ----------------------------------------------------

_TLDS = "ru|рф|su|com|net|org|info|io|me|biz|pro|shop|store|online|site|by|kz|ua|uz|de|eu|co|app|dev|ai|tech"
# The lookbehinds let a match start only at the beginning of a run ("1.1.1.…" costs one try, not n).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(
    rf"(?:https?://|www\.)[^\s<>«»\"']+|(?<![\w.-])(?:[a-zа-я0-9-]+\.)+(?:{_TLDS})\b(?:/[^\s<>«»\"']*)?"
)
_PHONE = re.compile(r"(?<![\w.,])\+?\(?\d[\d\s()-]{5,}\d(?![\w.,]\d)")
_DATE = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d.]\d)")
_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_URL_TAIL = ".,;:!?)»\"'/"


def _take_spans(text: str, found: list[Fact]) -> str:
    """Record the span facts and blank them out, so their digits are not read again."""
    for pattern, read in _SPANS:
        text = pattern.sub(_recorder(read, found), text)
    return text


def _recorder(read: Callable[[re.Match[str]], Fact | None], found: list[Fact]) -> Callable[[re.Match[str]], str]:
    def blank(match: re.Match[str]) -> str:
        fact = read(match)
        if fact is None:  # not this kind after all (an amount, not a phone): leave it to the next readers
            return match.group(0)
        found.append(fact)
        return " "
    return blank


def _email(match: re.Match[str]) -> Fact:
    return Fact(EMAIL, f"e:{match.group(0).strip('.')}")


def _url(match: re.Match[str]) -> Fact:
    address = re.sub(r"^(?:https?://)?(?:www\.)?", "", match.group(0)).rstrip(_URL_TAIL)
    return Fact(URL, f"u:{address}")


def _phone(match: re.Match[str]) -> Fact | None:
    """Phones have 7-15 digits and end in a pair ("-35-35", "45 67"), start with + or (, or come
    as one long run; a number written in groups of three ("10 000 000") is an amount: None."""
    raw = match.group(0).strip()
    digits = re.sub(r"\D", "", raw)
    groups = re.findall(r"\d+", raw)
    looks_like = raw.startswith(("+", "(")) or len(groups[-1]) == 2 or (len(groups) == 1 and len(digits) >= 10)
    return Fact(PHONE, f"p:{digits[-10:]}") if 7 <= len(digits) <= 15 and looks_like else None


def _date(match: re.Match[str]) -> Fact:
    day, month, year = match.groups()
    return Fact(DATE, f"d:{int(day)}.{int(month)}.{year}")


def _time(match: re.Match[str]) -> Fact:
    return Fact(DATE, f"t:{int(match.group(1))}:{match.group(2)}")


_SPANS: Final = ((_EMAIL, _email), (_URL, _url), (_PHONE, _phone), (_DATE, _date), (_TIME, _time))


# --- months, weekdays and two claim words: found by name --------------------------------------------

_MONTHS = (
    r"январ[ьяюе]|january", r"феврал[ьяюе]|february", r"март[аеу]?|march", r"апрел[ьяюе]|april", r"ма[йяею]",
    r"июн[ьяюе]|june", r"июл[ьяюе]|july", r"август[аеу]?|august", r"сентябр[ьяюе]|september",
    r"октябр[ьяюе]|october", r"ноябр[ьяюе]|november", r"декабр[ьяюе]|december",
)  # English "may" is left out: it is mostly a verb.
_WEEKDAYS = (
    r"понедельник\w*|mondays?", r"вторник\w*|tuesdays?", r"сред[ауы]|wednesdays?", r"четверг\w*|thursdays?",
    r"пятниц\w*|fridays?", r"суббот\w*|saturdays?", r"воскресень\w*|sundays?",
)


def _alternatives(names: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern whose matching group number (1-based) is the index of the name that matched."""
    return re.compile(r"\b(?:" + "|".join(f"({name})" for name in names) + r")\b")


_NAMED: Final = (
    (_alternatives(_MONTHS), DATE, "m:"),
    (_alternatives(_WEEKDAYS), DATE, "w:"),
    (re.compile(r"\b(бесплатн)\w*"), PRICE, "free:"),  # «доставка бесплатная» is a price
    (re.compile(r"\b(круглосуточн)\w*"), TERM, "24h:"),  # «работаем круглосуточно» is a term
)


# --- quantities: numbers and number words, with what follows them ---------------------------------

_TOKEN = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)|\d+(?:[.,]\d+)?|[^\W\d_]+|[₽$€£%]")
_CURRENCY = re.compile(r"[₽$€£]|руб\w*|р|евро|доллар\w*|usd|eur|rub|dollars?|euros?|rubles?|roubles?")
_UNITS: Final = {
    "day": "день дня дней дням днях дн сутки суток day days",
    "hour": "час часа часов часам часах ч hour hours hrs",
    "minute": "минута минуты минуту минут мин minute minutes min",
    "week": "неделя недели неделю недель неделям неделе нед week weeks",
    "month": "месяц месяца месяцев месяцу месяце мес month months",
    "year": "год года году лет годам годы year years",
}
UNIT: Final = {form: unit for unit, forms in _UNITS.items() for form in forms.split()}
_MODIFIERS = re.compile(r"рабоч\w*|календарн\w*|business|working|calendar")
_TERM_LEAD = re.compile(r"течение|пределах|за|через|позднее|позже|следующ\w*|within|in|after|next")
_MULTIPLIERS: Final = {"тыс": 1000, "k": 1000, "млн": 1_000_000}


def _forms(value: int | str, *forms: str) -> dict[str, Decimal]:
    return {form: Decimal(value) for form in forms}


def _teens() -> dict[str, Decimal]:
    stems = ("одиннадцат", "двенадцат", "тринадцат", "четырнадцат", "пятнадцат", "шестнадцат", "семнадцат",
             "восемнадцат", "девятнадцат", "двадцат", "тридцат")
    values = (*range(11, 21), 30)
    return {stem + end: Decimal(v) for stem, v in zip(stems, values, strict=True) for end in ("ь", "и", "ью")}


NUMBER_WORDS: Final = {
    **_forms(2, "два", "две", "двух", "двум", "двумя", "two"), **_forms(3, "три", "трех", "трем", "тремя", "three"),
    **_forms(4, "четыре", "четырех", "четырем", "четырьмя", "four"), **_forms(5, "пять", "пяти", "пятью", "five"),
    **_forms(6, "шесть", "шести", "шестью", "six"), **_forms(7, "семь", "семи", "seven"),
    **_forms(8, "восемь", "восьми", "восемью", "eight"), **_forms(9, "девять", "девяти", "девятью", "nine"),
    **_forms(10, "десять", "десяти", "десятью", "ten"), **_teens(), **_forms(40, "сорок", "сорока", "forty"),
    **_forms(50, "пятьдесят", "пятидесяти", "fifty"), **_forms(60, "шестьдесят", "шестидесяти", "sixty"),
    **_forms(70, "семьдесят", "семидесяти", "seventy"), **_forms(80, "восемьдесят", "восьмидесяти", "eighty"),
    **_forms(90, "девяносто", "девяноста", "ninety"), **_forms(100, "сто", "ста", "hundred"),
    **_forms(200, "двести", "двухсот"), **_forms(300, "триста", "трехсот"), **_forms(500, "пятьсот", "пятисот"),
    **_forms(1000, "тысяча", "тысячи", "тысяч", "тысячу", "thousand"), **_forms(1_000_000, "миллион", "million"),
    **_forms(11, "eleven"), **_forms(12, "twelve"), **_forms(14, "fourteen"), **_forms(15, "fifteen"),
    **_forms(20, "twenty"), **_forms(30, "thirty"),
}
# Words that are a number only before a unit: «одну минуту» is a term, «один из способов» is not.
UNIT_ONLY_WORDS: Final = {
    **_forms(1, "один", "одна", "одно", "одну", "одного", "одной", "one", "a", "an"),
    **_forms(2, "пару", "пара", "couple"), **_forms("1.5", "полтора", "полторы", "полутора"),
}


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _digits(token: str) -> Decimal | None:
    try:
        return Decimal(re.sub(r"\s", "", token).replace(",", "."))
    except InvalidOperation:
        return None


def _multiplier(word: str) -> int | None:
    """«5 тыс.», «5 тысяч», «2 млн» are one amount, equal to «5 000», «2 000 000»."""
    if word.startswith("тысяч"):
        return 1000
    if word.startswith("миллион"):
        return 1_000_000
    return _MULTIPLIERS.get(word)


def _words_value(words: list[str]) -> Decimal:
    """«две тысячи пятьсот» -> 2500, «двадцать пять» -> 25."""
    total, current = Decimal(0), Decimal(0)
    for word in words:
        value = NUMBER_WORDS[word]
        if value >= 1000:
            total += (current or 1) * value
            current = Decimal(0)
        else:
            current += value
    return total + current


def _number_at(tokens: list[str], i: int) -> tuple[Decimal | None, int, bool]:
    """(value, tokens used, needs a unit) for a quantity starting at tokens[i], or (None, 1, False)."""
    token = tokens[i]
    if token[0].isdigit():
        value = _digits(token)
        factor = _multiplier(tokens[i + 1]) if i + 1 < len(tokens) else None
        return (value * factor, 2, False) if value is not None and factor else (value, 1, False)
    if token in UNIT_ONLY_WORDS:
        return UNIT_ONLY_WORDS[token], 1, True
    used = 0
    while i + used < len(tokens) and tokens[i + used] in NUMBER_WORDS:
        used += 1
    return (_words_value(tokens[i:i + used]), used, False) if used else (None, 1, False)


def _unit_after(tokens: list[str], j: int) -> str | None:
    """The unit at tokens[j], or after one modifier («пять рабочих дней»)."""
    if j < len(tokens) and _MODIFIERS.fullmatch(tokens[j]):
        j += 1
    return UNIT.get(tokens[j]) if j < len(tokens) else None


def _quantities(tokens: list[str]) -> list[Fact]:
    found: list[Fact] = []
    i = 0
    while i < len(tokens):
        value, used, needs_unit = _number_at(tokens, i)
        after = i + used
        if value is None:
            if _TERM_LEAD.fullmatch(tokens[i]) and (unit := _unit_after(tokens, i + 1)):
                found.append(Fact(TERM, f"u:{unit}"))  # «в течение недели», «на следующий день»
            i += 1
            continue
        unit = _unit_after(tokens, after)
        if unit:
            found += [Fact(TERM, f"n:{_canon(value)}"), Fact(TERM, f"u:{unit}")]
        elif not needs_unit:
            money = (after < len(tokens) and _CURRENCY.fullmatch(tokens[after])) or (
                i > 0 and _CURRENCY.fullmatch(tokens[i - 1])
            )
            found.append(Fact(PRICE if money else NUMBER, f"n:{_canon(value)}"))
        i = after
    return found
