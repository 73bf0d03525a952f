"""A month named inside a sentence, in the reader's language: «бюджет за декабрь 2026»,
"the budget for December 2026".

Django's "F" is the standalone nominative, capitalised in Russian («Декабрь»): right alone on a
chart's heading, wrong inside a sentence. Its "E" (the genitive, «2 декабря 2026») is right after a
day; a month alone inside a sentence needs the lower-case nominative, which Django does not have."""

from __future__ import annotations

from datetime import date
from typing import Final

from django.utils.functional import Promise
from django.utils.translation import pgettext_lazy

MONTHS: Final[dict[int, Promise]] = {
    1: pgettext_lazy("месяц в предложении", "январь"), 2: pgettext_lazy("месяц в предложении", "февраль"),
    3: pgettext_lazy("месяц в предложении", "март"), 4: pgettext_lazy("месяц в предложении", "апрель"),
    5: pgettext_lazy("месяц в предложении", "май"), 6: pgettext_lazy("месяц в предложении", "июнь"),
    7: pgettext_lazy("месяц в предложении", "июль"), 8: pgettext_lazy("месяц в предложении", "август"),
    9: pgettext_lazy("месяц в предложении", "сентябрь"), 10: pgettext_lazy("месяц в предложении", "октябрь"),
    11: pgettext_lazy("месяц в предложении", "ноябрь"), 12: pgettext_lazy("месяц в предложении", "декабрь"),
}


def month_in_sentence(value: date) -> str:
    """«декабрь 2026» / "December 2026": the month and its year, to follow «за», «бюджет:» and the like."""
    return f"{MONTHS[value.month]} {value.year}"
