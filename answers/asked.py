"""What kind of fact a question asks for, and which found entry gives one (the expected answer type).

«Какой у вас e-mail?» asks for an address, «Какую часть заказа можно оплатить бонусами?» for a
share, «Сколько дней…» for a term. Search ranks passages by how well they match the words and the
meaning; among passages that match about equally well, one that states no fact of the asked kind
cannot answer («…номер телефона, e-mail, адрес доставки…» in a privacy policy), while its
neighbour in the ranking does («E-mail: info@shop.ru»). Without a model the visitor reads one
entry, so the chain shows the best-ranked one that gives the asked kind of fact, within `WINDOW` of
the top score; with a model nothing changes (it reads every source and cites one).

A page often gives the asked kind of fact in several sections: «Сколько стоит доставка по Москве?»
finds the express section (690 ₽) ranked above the general one (350 ₽) because its wording has
«стоит». Among the near-ties on the shown entry's page, the section squarely about the question is
shown instead (`on_its_page`): the general rule before the special cases.

What must stay true: a question that asks for no kind of fact («Какие условия возврата?») keeps
the top result; only an entry scored within `WINDOW` of the top is ever preferred, never one below
the match threshold, and never one that does not give the asked kind; another page only when the
top one gives no fact of the asked kind; the same `facts_in` reads the entries as the fact check
does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from answers import facts, lemmas

if TYPE_CHECKING:
    from knowledge.search import SearchResult

# How far below the top score a result may be and still be preferred for giving the asked fact:
# the smallest window with the most right pages on demo/cases.jsonl (90 -> 93 of 107 answerable at
# 0.10, no gain beyond; bench/truthfulness.py --answer-type), checked on the one-fact questions and
# the VK Cloud paraphrases, which were not used to choose it (docs/benchmarks.md, issue 9).
WINDOW = 0.10

_FLAGS: Final = re.IGNORECASE
_ASKS: Final[tuple[tuple[re.Pattern[str], frozenset[str]], ...]] = (
    (re.compile(r"\b(?:e-?mail|имейл\w*|емейл\w*|мейл\w*|электронн\w*\s+(?:почт|адрес)\w*"
                r"|как\w*\s+почту|почт[аеуы](?!\s+росси))\b", _FLAGS), frozenset({facts.EMAIL})),
    (re.compile(r"(?:телеграм|telegram|вотсап|ватсап|whatsapp|вайбер|viber|мессенджер|\bтг\b)", _FLAGS),
     frozenset({facts.HANDLE, facts.URL})),
    (re.compile(r"\b(?:телефон\w*|номер\w*\s+(?:для\s+)?(?:звонк|телефон|горяч)\w*|позвонить|phone)\b", _FLAGS),
     frozenset({facts.PHONE})),
    (re.compile(r"\b(?:сколько\s+(?:стоит|стоят|стоить|будет\s+стоить|платить|денег|рублей)|стоимост\w*|цен[аыуе]\b"
                r"|почем|почём|доплат\w*|во\s+сколько\s+обойд\w*|how\s+much|costs?\b|price)", _FLAGS),
     frozenset({facts.PRICE})),
    (re.compile(r"\b(?:процент\w*|какую\s+часть|какая\s+часть|какой\s+частью|как\w*\s+дол[яиюе]|percent\w*"
                r"|what\s+(?:share|part))\b", _FLAGS),
     frozenset({facts.PERCENT})),
    (re.compile(r"\b(?:сколько\s+(?:дней|недель|месяцев|лет|минут|часов|времени|действует|хранится|длится"
                r"|занимает|ид[её]т|ждать)|через\s+сколько|как\s+долго|какой\s+срок|в\s+течение\s+какого"
                r"|на\s+сколько\s+(?:дней|месяцев|лет)|how\s+long|how\s+many\s+(?:days|weeks|months|years))", _FLAGS),
     frozenset({facts.TERM})),
    (re.compile(r"\b(?:до\s+скольки|во\s+сколько(?!\s+обойд)|с\s+какого\s+времени|в\s+какое\s+время|часы\s+работы"
                r"|what\s+time|opening\s+hours|working\s+hours)", _FLAGS), frozenset({facts.TIME})),
)


def asked_kinds(question: str) -> frozenset[str]:
    """The fact codes (facts.py) a question asks for; empty when it asks for none in particular."""
    text = question.replace("ё", "е").replace("Ё", "Е")
    kinds: set[str] = set()
    for pattern, codes in _ASKS:
        if pattern.search(text):
            kinds |= codes
    return frozenset(kinds)


def content_words(question: str) -> list[frozenset[str]]:
    """The question's words that say what it is about, each as its keys (lemmas.py), without the
    words that ask for the kind of fact («сколько стоит», «стоимость», «какой срок»): those are
    answered by a fact of the kind, whatever words the source states it with («Стоимость — 350 ₽»
    answers «Сколько стоит…», «Цена: 350 ₽» too)."""
    text = question.replace("ё", "е").replace("Ё", "Е")
    for pattern, _codes in _ASKS:
        text = pattern.sub(" ", text)
    return list(dict.fromkeys(lemmas.keys(word) for word in lemmas.words(text)))


def gives(result: SearchResult, kinds: frozenset[str]) -> bool:
    return any(fact.code in kinds for fact in facts.facts_in(result.text))


def answering(
    results: Sequence[SearchResult], question: str, *, window: float | None = None, floor: float = 0.0
) -> SearchResult | None:
    """The result to show a visitor without a model: the top one, unless it gives no fact of the kind
    the question asks for and a result within `window` (default WINDOW) of its score, and not below
    `floor` (the bot's match threshold), does (the best-ranked such); then, among the near-ties on
    that result's page that give the asked kind, the section most squarely about the question
    (`on_its_page`)."""
    if not results:
        return None
    window = WINDOW if window is None else window
    top = results[0]
    kinds = asked_kinds(question)
    if not kinds:
        return top
    # Sorted by score, so the first near-tie that gives the asked kind is the top when the top does.
    giving = [r for r in results if r.score >= top.score - window and r.score >= floor and gives(r, kinds)]
    return on_its_page(giving[0], giving, question) if giving else top


def on_its_page(chosen: SearchResult, near: Sequence[SearchResult], question: str) -> SearchResult:
    """Among the sections of `chosen`'s page in `near`, the one that is about the question: the most
    of its words in the section's headings and text; then the most of them in its own heading; then
    the fewest words in that heading the question did not ask about; then search's order.

    Search ranks sections that all match by how their wording matches (the express section's «стоит»
    above «Стоимость — 350 ₽» for «Сколько стоит доставка по Москве?»); a heading says what a section
    is about, and one that names what was not asked («Экспресс-доставка в день заказа») is a special
    case of what was («Доставка на следующий день»): the general rule is shown first."""
    page = chosen.url.split("#", 1)[0]
    siblings = [r for r in near if r.url.split("#", 1)[0] == page] or [chosen]
    wanted = content_words(question)
    asked_keys = frozenset().union(*wanted)

    def about(result: SearchResult) -> tuple[int, int, int]:
        heading = [lemmas.keys(word) for word in lemmas.words(result.heading_path.rsplit(" / ", 1)[-1])]
        named = sum(1 for keys in heading if keys & asked_keys)
        covered = lemmas.shared(wanted, lemmas.keys_of(f"{result.heading_path}\n{result.text}"))
        return covered, named, -(len(heading) - named)

    return max(siblings, key=about)  # max keeps the first (best-ranked) of equals
