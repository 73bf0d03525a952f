"""Quantities in a text: numbers and number words with the unit or currency that follows them,
ranges («2–5 дней», «от 300 до 500 ₽») and terms named by their unit alone («в течение месяца»),
as (reason code, normalised key) pairs for facts.py. Units are canonical (a week is 7 days, an hour
60 minutes, a year 12 months) so both sides of the fact check compare values, not words.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from answers import factwords as words

PRICE: Final = "price"
PERCENT: Final = "percent"
TERM: Final = "term"
NUMBER: Final = "number"
DATE: Final = "date"
TIME: Final = "time"
PHONE: Final = "phone"
EMAIL: Final = "email"
URL: Final = "url"
HANDLE: Final = "handle"
_TIME_UNITS: Final = frozenset({"minute", "day", "bday", "month", "bweek"})


def quantities(text: str) -> list[tuple[str, str]]:
    """(code, key) of every quantity in `text` (normalised, with addresses and dates taken out)."""
    tokens = [m.group(0) for m in _TOKEN.finditer(text)]
    return [_fact(amount) for amount in _amounts(tokens)]


# --- quantities: numbers and number words, with what follows them ---------------------------------

_TOKEN = re.compile(
    r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,]\d)|\d+(?:[.,]\d+)?|[^\W\d_]+|[₽$€£¥₸%×/–—-]"
)


@dataclass
class _Amount:
    start: int  # token index
    end: int  # token index after it
    value: Decimal
    unit: str = ""  # canonical unit or currency; "" = a bare number
    lead: bool = False  # a term named by its unit alone («в течение месяца»)


def _digits(token: str) -> Decimal | None:
    try:
        return Decimal(re.sub(r"\s", "", token).replace(",", "."))
    except InvalidOperation:
        return None


def _canon(value: Decimal) -> str:
    value = value.quantize(Decimal("0.0001")) if value != value.to_integral_value() else value
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _words_value(tokens: list[str]) -> Decimal:
    """«две тысячи пятьсот» -> 2500, «двадцать пять» -> 25, «двадцать первого» -> 21."""
    total, current = Decimal(0), Decimal(0)
    for token in tokens:
        value = words.number_words().get(token, Decimal(1))
        if value >= 1000:
            total += (current or 1) * value
            current = Decimal(0)
        elif value == 100 and 0 < current < 10:
            current *= value  # "two hundred"
        else:
            current += value
    return total + current


def _number_at(tokens: list[str], i: int) -> tuple[Decimal | None, int, bool]:
    """(value, tokens used, needs a unit) for a quantity starting at tokens[i], or (None, 1, False)."""
    token = tokens[i]
    if token[0].isdigit():
        value = _digits(token)
        factor = words.multiplier(tokens[i + 1]) if i + 1 < len(tokens) else None
        return (value * factor, 2, False) if value is not None and factor else (value, 1, False)
    if half := _half(tokens, i):
        return half
    if token in words.unit_only_words():
        return words.unit_only_words()[token], 1, True
    used = 0
    while i + used < len(tokens) and (
        tokens[i + used] in words.number_words()
        or (used and tokens[i + used] in words.one_after_tens()
            and words.number_words().get(tokens[i + used - 1], Decimal(0)) >= 20)
    ):
        used += 1
    return (_words_value(tokens[i:i + used]), used, False) if used else (None, 1, False)


def _half(tokens: list[str], i: int) -> tuple[Decimal, int, bool] | None:
    """«полчаса», «пол года», «полцены»: a half of what follows."""
    token = tokens[i]
    if not token.startswith(words.HALF_PREFIX) or token in words.number_words():
        return None
    rest = token[len(words.HALF_PREFIX):].lstrip("-")
    if not rest and i + 1 < len(tokens) and tokens[i + 1] in words.UNITS:
        return Decimal("0.5"), 1, True
    if rest in words.UNITS:
        return None  # read by _quantities as 0.5 of that unit
    if rest in words.HALF_OF:
        return Decimal("0.5"), 1, False
    return None


def _unit_at(tokens: list[str], j: int) -> tuple[str, Decimal] | None:
    """The unit at tokens[j] (after at most one modifier: «пять рабочих дней», "half an hour"),
    as (canonical unit, factor to it)."""
    modifier = ""
    if j < len(tokens) and tokens[j] in words.MODIFIERS:
        modifier, j = words.MODIFIERS[tokens[j]], j + 1
    elif j < len(tokens) and tokens[j] in {"a", "an"}:
        j += 1
    if j >= len(tokens) or tokens[j] not in words.UNITS:
        return None
    unit, factor = words.UNITS[tokens[j]]
    if modifier == "business" and unit == "day":
        return ("bday", Decimal(1)) if factor == 1 else ("bweek", Decimal(1))
    return unit, Decimal(factor)


def _unit_span(tokens: list[str], j: int) -> int:
    return 2 if j < len(tokens) and (tokens[j] in words.MODIFIERS or tokens[j] in {"a", "an"}) else 1


def _amounts(tokens: list[str]) -> list[_Amount]:
    found: list[_Amount] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(words.HALF_PREFIX) and token[len(words.HALF_PREFIX):].lstrip("-") in words.UNITS:
            unit, factor = words.UNITS[token[len(words.HALF_PREFIX):].lstrip("-")]
            found.append(_Amount(i, i + 1, Decimal("0.5") * factor, unit))
            i += 1
            continue
        value, used, needs_unit = _number_at(tokens, i)
        after = i + used
        if value is None:
            unit_here = _unit_at(tokens, i + 1) if token in words.TERM_LEADS else None
            if unit_here:  # «в течение недели», «на следующий день»: one of that unit
                found.append(_Amount(i, i + 1 + _unit_span(tokens, i + 1), unit_here[1], unit_here[0], lead=True))
            i += 1
            continue
        unit_after = _unit_at(tokens, after)
        if unit_after:
            found.append(_Amount(i, after + _unit_span(tokens, after), value * unit_after[1], unit_after[0]))
        elif not needs_unit:
            currency = words.CURRENCIES.get(tokens[after]) if after < len(tokens) else None
            before = words.CURRENCIES.get(tokens[i - 1]) if i > 0 else None
            found.append(_Amount(i, after + (1 if currency else 0), value, currency or before or ""))
        i = after
    return _share_units(tokens, found)


def _share_units(tokens: list[str], found: list[_Amount]) -> list[_Amount]:
    """In «2–5 дней», «от 300 до 500 ₽», "$10–20", «50 × 50 см» the unit belongs to both numbers."""
    for left, right in itertools.pairwise(found):
        joined = all(token in words.RANGE_JOINERS for token in tokens[left.end:right.start])
        if not joined or left.lead or right.lead or right.start - left.end != 1:
            continue
        if right.unit and not left.unit:
            left.unit = right.unit
    for left, right in itertools.pairwise(found):
        joined = right.start - left.end == 1 and tokens[left.end] in words.RANGE_JOINERS
        if joined and left.unit in set(words.CURRENCIES.values()) and not right.unit:
            right.unit = left.unit
    return found


def _fact(amount: _Amount) -> tuple[str, str]:
    value, unit = _canon(amount.value), amount.unit
    if unit == "month" and amount.end - amount.start == 2 and 1900 <= amount.value / 12 <= 2100:
        return DATE, f"y:{_canon(amount.value / 12)}"  # «в 2025 году» names a year, not 24300 months
    if not unit:
        return NUMBER, f"n:{value}"
    code = PRICE if unit in set(words.CURRENCIES.values()) else PERCENT if unit == "%" else (
        TERM if unit in _TIME_UNITS else NUMBER)
    return code, f"q:{value}:{unit}"
