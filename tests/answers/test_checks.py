"""The streamed draft's gate (checks.DraftGate) on its own: pure code, the JSON fragments fed as the
providers feed them. What it shows is exactly what a gate checking every visible prefix whole
would show, whatever shortcut it takes on plain words, and it reads only the cited entry's facts."""

from __future__ import annotations

import json

import pytest

from answers import checks, facts, prompt
from answers.facts import Known, blocked
from llm.streaming import DraftStream
from llm.structured import release_when_sourced

OWN = ["Ромашка", "https://shop.example/"]
SOURCES = [
    "Вернуть товар можно в течение 14 дней после покупки, если сохранены упаковка и чек. "
    "Деньги вернём на карту в течение 10 дней.",
    "Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ доставка бесплатная.",
    "Телефон +7 (495) 123-45-67, почта help@shop.example.ru, телеграм @romashka_shop. Работаем с 9:00 до 20:00.",
]
# Plain openings (the shortcut's case) followed by facts the cited entry gives and facts it does not.
ANSWERS = [
    "Доставка по городу занимает немного времени, стоимость зависит от веса заказа и района; "
    "подробности и тарифы — на странице доставки по ссылке ниже.",
    "Вернуть товар можно, если сохранены упаковка и чек, в течение четырнадцати дней после покупки.",
    "Вернуть товар можно, если сохранены упаковка и чек. Срок возврата — 45 дней с момента покупки.",
    "Вернуть товар можно без лишних вопросов и долгих объяснений в течение месяца.",
    "Доставка по Москве приедет на следующий день и обойдётся в шестьсот рублей, не больше.",
    "Доставка по Москве стоит 300 ₽, а при заказе от 5000 ₽ она бесплатная для всех покупателей.",
    "Напишите нам, пожалуйста, в любое удобное время: refunds собака romashka точка ru",
    "Напишите нам, пожалуйста, в любое удобное время в телеграм @romashka_refunds или позвоните.",
    "Оплатить заказ можно заранее на сайте techno-pay.xyz или при получении.",
    "Мы работаем для вас без выходных и праздников круглосуточно, звоните.",
    "Отдадим этот товар со склада в Москве за половину цены до конца декабря.",
    "Звоните нам по будням с 9:00 до 20:00 по телефону +7 (495) 123-45-67, ответим.",
]


class WholeGate(checks.DraftGate):
    """The reference: every visible prefix read whole for facts, no shortcut."""

    def _passes(self, text: str, end: int, complete: bool, known: Known) -> bool:
        return checks.check(text[:end], known, self.secret).ok


def shown(gate: checks.DraftGate, answer: str, source: int, chunk: int) -> list[str]:
    """The drafts a visitor would see, one per delta, as the provider feeds the tool input."""
    raw = json.dumps({"intent": "question", "source": source, "answer": answer, "product_query": "", "fixed": ""},
                     ensure_ascii=False)
    drafts: list[str] = []
    stream = DraftStream(lambda piece: drafts.append((drafts[-1] if drafts else "") + piece),
                         release=release_when_sourced(len(SOURCES)), gate=gate)
    for start in range(0, len(raw), chunk):
        stream.feed(raw[start:start + chunk])
    return drafts


def known(number: int) -> Known:
    return Known.of([*OWN, SOURCES[number]])


@pytest.mark.parametrize("chunk", [1, 3, 4, 7])
@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("source", [0, 1, 2])
def test_the_draft_shows_exactly_what_checking_every_prefix_whole_shows(answer, source, chunk):
    fast = shown(checks.DraftGate(known, len(SOURCES), prompt.secret()), answer, source, chunk)
    whole = shown(WholeGate(known, len(SOURCES), prompt.secret()), answer, source, chunk)

    assert fast == whole
    assert all(blocked(draft, known(source)) == [] for draft in fast)  # no unchecked fact, ever


def test_an_answer_its_source_supports_streams_to_its_end():
    answer = ANSWERS[5]
    drafts = shown(checks.DraftGate(known, len(SOURCES), prompt.secret()), answer, 1, 4)

    assert drafts[-1] == answer and len(drafts) > 10  # shown as it grows, not all at the end


def test_only_the_cited_entrys_facts_are_read_and_only_once():
    asked: list[int] = []

    def counted(number: int) -> Known:
        asked.append(number)
        return known(number)

    shown(checks.DraftGate(counted, len(SOURCES), prompt.secret()), ANSWERS[1], 2, 4)

    assert asked == [2]


def test_a_source_number_out_of_range_shows_nothing_and_reads_nothing():
    asked: list[int] = []

    def counted(number: int) -> Known:
        asked.append(number)
        return known(number)

    gate = checks.DraftGate(counted, len(SOURCES), prompt.secret())
    assert gate({"source": 3}, "Вернуть можно", False) == 0
    assert gate({"source": True}, "Вернуть можно", False) == 0
    assert asked == []


def test_a_texts_facts_are_read_once_and_stay_the_same():
    text = "Доставка по Москве за 300 ₽ — на следующий день, с 9:00 до 20:00, help@shop.example.ru."
    first = Known.of([*OWN, text])
    hits = facts.offered_by.cache_info().hits

    again = Known.of([*OWN, text])

    assert again == first and facts.offered_by.cache_info().hits >= hits + 3
    assert first.offered == frozenset(key for piece in [*OWN, text] for fact in facts.facts_in(piece)
                                      for key in fact.offers())
