"""Whether a question set's answer is what the owner expected, and if not, why — in words the set's
page shows beside the row («в ответе нет «350 ₽»», «ответ взят с другой страницы»).

What must stay true:
- the verdict is computed from what a result row keeps (the answer, its route and source, the
  expectations copied from the set), so a run's page judges every row the same way, old rows too;
- the expected source is a page: a link to one of its sections (`…/delivery/moscow/#standard`, the
  way the crawler links a heading) is that page; scheme, «www.», a trailing slash, the query and the
  case of the host do not matter, the path and the port do;
- the expected phrase is found in the answer whatever the spacing (a no-break space, «5 000» or
  «5000»), the letter «ё» and the case; a sum in roubles matches however it is written («350 ₽»,
  «350 руб.», «350 рублей»);
- a refusal («нет точного ответа») or an empty answer is its own reason: the phrase and the source
  are not listed as missing on top of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from django.utils.translation import gettext as _

NO_ANSWER_ROUTE: Final = "no_answer"
_SPACES: Final = re.compile(r"\s+")
_DIGIT_GROUPS: Final = re.compile(r"(?<=\d)\s(?=\d{3}(?!\d))")
_ROUBLES: Final = re.compile(r"(?<=\d)\s?(?:₽|руб(?:л(?:ей|я|ь))?\.?|р\.)(?!\w)")

# Why a row is not as expected: the code (kept on the row's data attribute for tests and styles).
REFUSED, EMPTY, PHRASE, SOURCE, NO_SOURCE = "refused", "empty", "phrase", "source", "no_source"


@dataclass(frozen=True)
class Reason:
    code: str
    text: str


@dataclass(frozen=True)
class Check:
    passed: bool | None  # None: the question expects nothing
    reasons: list[Reason] = field(default_factory=list)


def phrase_comparable(text: str) -> str:
    """Text as phrases are looked for in it: one space for any run of spaces, digits grouped by
    spaces joined («5 000» → «5000»), roubles written as «₽», «ё» as «е», lower case."""
    text = _SPACES.sub(" ", text.casefold().replace("ё", "е"))
    text = _DIGIT_GROUPS.sub("", text)
    return _ROUBLES.sub(" ₽", text).strip()


def phrase_found(phrase: str, answer: str) -> bool:
    """Whether the answer says the phrase; a number in it is a whole number («350 ₽» is not found in
    «3 350 ₽», «35» not in «350»)."""
    wanted = phrase_comparable(phrase)
    if not wanted:
        return True
    before = r"(?<!\d)" if wanted[0].isdigit() else ""
    after = r"(?!\d)" if wanted[-1].isdigit() else ""
    return re.search(before + re.escape(wanted) + after, phrase_comparable(answer)) is not None


def _page(url: str) -> tuple[str, str]:
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").removeprefix("www.")
    if parts.port:
        host = f"{host}:{parts.port}"
    return host, parts.path.rstrip("/") or "/"


def same_page(cited: str, expected: str) -> bool:
    return bool(cited) and _page(cited) == _page(expected)


def expectation_check(*, answer: str, route: str, cited_url: str, expected_url: str, expected_phrase: str,
                      cited_title: str = "") -> Check:
    """Whether one answer shows what its question expects, and each reason it does not."""
    if not expected_url and not expected_phrase:
        return Check(passed=None)
    if route == NO_ANSWER_ROUTE:
        return Check(False, [Reason(REFUSED, _("бот отказался отвечать («нет точного ответа»), а ответ ожидался"))])
    if not answer.strip():
        return Check(False, [Reason(EMPTY, _("ответ пустой"))])
    reasons = []
    if expected_phrase and not phrase_found(expected_phrase, answer):
        reasons.append(Reason(PHRASE, _("в ответе нет «%(phrase)s»") % {"phrase": expected_phrase}))
    if expected_url and not cited_url:
        reasons.append(Reason(NO_SOURCE, _("ответ без источника, а ожидалась страница %(url)s")
                              % {"url": expected_url}))
    elif expected_url and not same_page(cited_url, expected_url):
        if cited_title:
            text = _("ответ взят с другой страницы — «%(title)s», а ожидалась %(url)s") % {
                "title": cited_title, "url": expected_url}
        else:
            text = _("ответ взят с другой страницы — %(cited)s, а ожидалась %(url)s") % {
                "cited": cited_url.split("#", 1)[0], "url": expected_url}
        reasons.append(Reason(SOURCE, text))
    return Check(passed=not reasons, reasons=reasons)
