"""What kind of fact a question asks for, and which found entry gives one (the expected answer type).

«Какой у вас e-mail?» asks for an address, «Какую часть заказа можно оплатить бонусами?» for a
share, «Сколько дней…» for a term. Search ranks passages by how well they match the words and the
meaning; among passages that match about equally well, one that states no fact of the asked kind
cannot answer («…номер телефона, e-mail, адрес доставки…» in a privacy policy), while its
neighbour in the ranking does («E-mail: info@shop.ru»). Without a model the visitor reads one
entry, so the chain shows the best-ranked one that gives the asked kind of fact, within `WINDOW` of
the top score; with a model nothing changes (it reads every source and cites one).

What must stay true: a question that asks for no kind of fact («Какие условия возврата?») keeps
the top result; only an entry scored within `WINDOW` of the top is ever preferred, and only when
the top one gives no fact of the asked kind, and never one below the match threshold; the same
`facts_in` reads the entries as the fact check does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from assistant.chat import facts

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
                r"|почем|почём|доплат\w*|во\s+сколько\s+обойд\w*|how\s+much)", _FLAGS), frozenset({facts.PRICE})),
    (re.compile(r"\b(?:процент\w*|какую\s+часть|какая\s+часть|какой\s+частью|как\w*\s+дол[яиюе])\b", _FLAGS),
     frozenset({facts.PERCENT})),
    (re.compile(r"\b(?:сколько\s+(?:дней|недель|месяцев|лет|минут|часов|времени|действует|хранится|длится"
                r"|занимает|ид[её]т|ждать)|через\s+сколько|как\s+долго|какой\s+срок|в\s+течение\s+какого"
                r"|на\s+сколько\s+(?:дней|месяцев|лет)|how\s+long)", _FLAGS), frozenset({facts.TERM})),
    (re.compile(r"\b(?:до\s+скольки|во\s+сколько(?!\s+обойд)|с\s+какого\s+времени|в\s+какое\s+время|часы\s+работы)",
                _FLAGS), frozenset({facts.TIME})),
)


def asked_kinds(question: str) -> frozenset[str]:
    """The fact codes (facts.py) a question asks for; empty when it asks for none in particular."""
    text = question.replace("ё", "е").replace("Ё", "Е")
    kinds: set[str] = set()
    for pattern, codes in _ASKS:
        if pattern.search(text):
            kinds |= codes
    return frozenset(kinds)


def gives(result: SearchResult, kinds: frozenset[str]) -> bool:
    return any(fact.code in kinds for fact in facts.facts_in(result.text))


def answering(
    results: Sequence[SearchResult], question: str, *, window: float | None = None, floor: float = 0.0
) -> SearchResult | None:
    """The result to show a visitor without a model: the top one, unless it gives no fact of the kind
    the question asks for and a result within `window` (default WINDOW) of its score, and not below
    `floor` (the bot's match threshold), does (the best-ranked such)."""
    if not results:
        return None
    window = WINDOW if window is None else window
    top = results[0]
    kinds = asked_kinds(question)
    if not kinds or gives(top, kinds):
        return top
    for result in results[1:]:
        if result.score < top.score - window or result.score < floor:
            break
        if gives(result, kinds):
            return result
    return top
