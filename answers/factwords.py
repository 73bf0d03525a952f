"""The words a fact is made of: number words (Russian and English), fractions, units and currencies.

Russian number words decline (четырнадцать, четырнадцати, четырнадцатью; двести, двухсот,
двумстам…), so their forms are not typed in by hand: every form of every numeral lemma below comes
from pymorphy3's dictionary, which ships offline in a PyPI package. English ones do not decline
and are listed. What must stay true: a word maps to one value in every text, so an answer and its
source are read alike (facts.py compares the values, never the words).
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import Final

import pymorphy3

# Cardinals, collectives and ordinals (first excluded: «первый раз», "first of all" state nothing).
_RU_LEMMAS: Final = {
    "ноль": 0, "нуль": 0, "два": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6, "семь": 7, "восемь": 8,
    "девять": 9, "десять": 10, "одиннадцать": 11, "двенадцать": 12, "тринадцать": 13, "четырнадцать": 14,
    "пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18, "девятнадцать": 19,
    "двадцать": 20, "тридцать": 30, "сорок": 40, "пятьдесят": 50, "шестьдесят": 60, "семьдесят": 70,
    "восемьдесят": 80, "девяносто": 90, "сто": 100, "двести": 200, "триста": 300, "четыреста": 400,
    "пятьсот": 500, "шестьсот": 600, "семьсот": 700, "восемьсот": 800, "девятьсот": 900, "тысяча": 1000,
    "миллион": 1_000_000, "миллиард": 1_000_000_000, "полтораста": 150, "сотня": 100, "десяток": 10,
    "дюжина": 12,
    "двое": 2, "трое": 3, "четверо": 4, "пятеро": 5, "шестеро": 6, "семеро": 7, "восьмеро": 8, "девятеро": 9,
    "десятеро": 10,
    "второй": 2, "третий": 3, "четвёртый": 4, "пятый": 5, "шестой": 6, "седьмой": 7, "восьмой": 8, "девятый": 9,
    "десятый": 10, "одиннадцатый": 11, "двенадцатый": 12, "тринадцатый": 13, "четырнадцатый": 14,
    "пятнадцатый": 15, "шестнадцатый": 16, "семнадцатый": 17, "восемнадцатый": 18, "девятнадцатый": 19,
    "двадцатый": 20, "тридцатый": 30, "сороковой": 40, "пятидесятый": 50, "шестидесятый": 60,
    "семидесятый": 70, "восьмидесятый": 80, "девяностый": 90, "сотый": 100, "тысячный": 1000,
}
# Forms pymorphy3's lexemes leave out: «ста», and the oblique cases of the hundreds (двумстам,
# тремястами, пятистах…), made here by their one regular pattern.
_HUNDREDS: Final = {2: ("двух", "двум", "двумя"), 3: ("трех", "трем", "тремя"), 4: ("четырех", "четырем", "четырьмя"),
                    5: ("пяти", "пяти", "пятью"), 6: ("шести", "шести", "шестью"), 7: ("семи", "семи", "семью"),
                    8: ("восьми", "восьми", "восемью"), 9: ("девяти", "девяти", "девятью")}
_RU_EXTRA: Final = {
    "ста": 100, "тыс": 1000, "млн": 1_000_000, "млрд": 1_000_000_000,
    **{f"{gen}сот": n * 100 for n, (gen, _dat, _ins) in _HUNDREDS.items()},
    **{f"{dat}стам": n * 100 for n, (_gen, dat, _ins) in _HUNDREDS.items()},
    **{f"{ins}стами": n * 100 for n, (_gen, _dat, ins) in _HUNDREDS.items()},
    **{f"{gen}стах": n * 100 for n, (gen, _dat, _ins) in _HUNDREDS.items()},
}
# Fractions: a number by themselves («половина цены», «треть суммы»).
_RU_FRACTIONS: Final = {"половина": Decimal("0.5"), "треть": Decimal(1) / 3, "четверть": Decimal("0.25")}
# A number only before a unit: «одну минуту», «пару дней», «полтора часа» are terms, «один из
# способов», «пара вопросов» are not facts.
_RU_UNIT_ONLY: Final = {"один": Decimal(1), "пара": Decimal(2), "полтора": Decimal("1.5")}
# Ordinal "first" only inside a compound number: «двадцать первого» is 21.
_RU_ONE_AFTER_TENS: Final = "первый"

_EN_NUMBERS: Final = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "million": 1_000_000,
    "billion": 1_000_000_000, "dozen": 12, "dozens": 12, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70,
    "eightieth": 80, "ninetieth": 90, "hundredth": 100, "thousandth": 1000, "hundreds": 100, "thousands": 1000,
    "k": 1000,
}  # "second" is left out: "just a second", "second floor" state nothing a source must give.
_EN_FRACTIONS: Final = {"half": Decimal("0.5"), "quarter": Decimal("0.25")}
_EN_UNIT_ONLY: Final = {"one": Decimal(1), "a": Decimal(1), "an": Decimal(1), "couple": Decimal(2)}
_EN_ONE_AFTER_TENS: Final = ("first", "one")

# Canonical units. Conversions are exact only: a week is 7 days and a year 12 months, but a month
# is not 30 days («месяц» ≠ «30 дней» ≠ «4 недели»), and business days are their own unit.
_UNIT_FORMS: Final = {
    ("minute", 1): "минута минуты минуту минут минутам минутами минутах минуте минутой мин minute minutes min mins",
    ("minute", 60): "час часа часов часам часами часах часу часом ч hour hours hr hrs h",
    ("day", 1): "день дня дней дням днями днях дне днем дн сутки суток суткам day days",
    ("day", 7): "неделя недели неделю недель неделям неделями неделях неделе неделей нед week weeks wk",
    ("month", 1): "месяц месяца месяцев месяцам месяцами месяцах месяце месяцем мес month months mo",
    ("month", 12): "год года году годом годе лет годам годами годах годы year years yr yrs",
    ("kg", 1): "кг kg килограмм килограмма килограммов",
    ("km", 1): "км km километр километра километров километре",
    ("m", 1): "м метр метра метров m",
    ("cm", 1): "см cm сантиметр сантиметра сантиметров",
    ("mm", 1): "мм mm",
    ("m2", 1): "м² м2 m²",
    ("kw", 1): "квт kw",
    ("gb", 1): "гб gb",
    ("%", 1): "% процент процента процентов процентам процентах percent per cent pct",
}
UNITS: Final = {form: unit for unit, forms in _UNIT_FORMS.items() for form in forms.split()}
CURRENCIES: Final = {
    **dict.fromkeys("₽ руб р рубль рубля рублей рублям рублями рублях rub ruble rubles rouble roubles".split(), "rub"),
    **dict.fromkeys("$ usd доллар доллара долларов долларам dollar dollars bucks".split(), "usd"),
    **dict.fromkeys("€ eur евро euro euros".split(), "eur"),
    **dict.fromkeys("£ gbp".split(), "gbp"),
    **dict.fromkeys("¥ cny юань юаня юаней yuan".split(), "cny"),
    **dict.fromkeys("₸ kzt тенге".split(), "kzt"),
}
MODIFIERS: Final = {
    **dict.fromkeys("рабочих рабочие рабочий рабочего рабочим business working".split(), "business"),
    **dict.fromkeys("календарных календарные календарный календарного calendar".split(), "calendar"),
}
# Words that make a following unit a term by themselves: «в течение месяца», «за неделю», «на
# следующий день», "within a week", "next day".
TERM_LEADS: Final = frozenset(
    "течение пределах за через позднее позже следующий следующего следующую следующей следующие "
    "within in after next".split()
)
# Between two numbers, these make one range (or one size): the unit after the second belongs to both.
RANGE_JOINERS: Final = frozenset({"-", "–", "—", "до", "по", "или", "to", "or", "×", "x", "х", "/"})
# «пол» before a unit or a word of price is a half: «полчаса», «пол года», «полцены».
HALF_PREFIX: Final = "пол"
HALF_OF: Final = frozenset("цены цену стоимости стоимость суммы сумму price".split())


def _canonical(word: str) -> str:
    return word.lower().replace("ё", "е")


@cache
def morph() -> pymorphy3.MorphAnalyzer:
    """The one pymorphy3 analyser of the process (its dictionaries take a moment and ~15 MB to load);
    it only reads them, so threads share it."""
    return pymorphy3.MorphAnalyzer()


def _lexeme(lemma: str) -> set[str]:
    """Every form of `lemma` as a numeral, ordinal or numeral noun (not of a homonym: «три» the
    numeral, not the imperative of «тереть»)."""
    forms: set[str] = set()
    for parse in morph().parse(lemma):
        if _canonical(parse.normal_form) == _canonical(lemma) and {"NUMR", "ADJF", "NOUN"} & set(parse.tag.grammemes):
            forms |= {_canonical(form.word) for form in parse.lexeme}
    return forms or {_canonical(lemma)}


def _table(lemmas: dict[str, int] | dict[str, Decimal]) -> dict[str, Decimal]:
    table: dict[str, Decimal] = {}
    for lemma, value in lemmas.items():
        for form in sorted(_lexeme(lemma)):
            table.setdefault(form, Decimal(value))
    return table


@cache
def number_words() -> dict[str, Decimal]:
    """Word -> value for words that are a number wherever they stand."""
    words = {**_table(_RU_LEMMAS), **{k: Decimal(v) for k, v in _RU_EXTRA.items()}}
    for form, value in _table(_RU_FRACTIONS).items():
        words.setdefault(form, value)  # «третью» stays the ordinal
    words |= {k: Decimal(v) for k, v in _EN_NUMBERS.items()} | _EN_FRACTIONS
    return words


@cache
def unit_only_words() -> dict[str, Decimal]:
    """Word -> value for words that are a number only right before a unit."""
    words = _table(_RU_UNIT_ONLY) | dict(_EN_UNIT_ONLY)
    return {form: value for form, value in words.items() if form not in number_words()}


@cache
def one_after_tens() -> frozenset[str]:
    """Forms of "first" / "one" that add 1 after a tens word (двадцать первого, twenty-one)."""
    return frozenset(_lexeme(_RU_ONE_AFTER_TENS) | set(_EN_ONE_AFTER_TENS) | set(_table({"один": 1})))


def multiplier(word: str) -> Decimal | None:
    """«5 тыс.», «5 тысяч», "5 thousand", «2 млн» are one amount: 5 000, 2 000 000."""
    value = number_words().get(word)
    return value if value is not None and value >= 1000 else None
