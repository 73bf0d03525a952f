"""The fact check of sourceless answers: which facts it sees, and when the sources cover them."""

from __future__ import annotations

import pytest

from assistant.chat.facts import Fact, facts_in, unsupported

SOURCES = [
    "Доставка: Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5 000 ₽ бесплатно.",
    "Возврат товара: Вернуть товар можно в течение 14 дней после покупки.",
    "Контакты: Телефон +7 (495) 123-45-67, почта help@shop.example.ru, сайт https://shop.example.ru/contacts. "
    "Работаем ежедневно с 9:00 до 20:00, с понедельника по субботу.",
]


@pytest.mark.parametrize(
    "answer",
    [
        "Здравствуйте! Чем могу помочь?",
        "Я виртуальный помощник магазина. Уточните, пожалуйста, что вы ищете?",
        "Хорошего дня!",
        "Один из способов — спросить у оператора.",
        "Спасибо за вопрос, рад помочь.",
        "Hello! Have a nice day. One moment, please.",
    ],
)
def test_small_talk_states_no_facts(answer):
    assert facts_in(answer) == []


@pytest.mark.parametrize(
    ("answer", "codes"),
    [
        ("Стоит 700 ₽.", ["price"]),
        ("Около 2 500 рублей.", ["price"]),
        ("It costs $15.", ["price"]),
        ("Скидка 10%", ["number"]),
        ("Звоните: 8 800 555-35-35.", ["phone"]),
        ("Наш номер +7 999 000 11 22", ["phone"]),
        ("Пишите на sales@romashka.ru", ["email"]),
        ("Подробнее на https://romashka.ru/promo", ["url"]),
        ("Загляните на romashka.ru", ["url"]),
        ("Акция до 31.12.2025", ["date"]),
        ("Открыто до 21:00", ["date"]),
        ("Скидки в марте", ["date"]),
        ("Работаем и в воскресенье", ["date"]),
        ("Привезём за 3 дня", ["term"]),
        ("Вернуть можно в течение месяца", ["term"]),
        ("Обработаем за две недели", ["term"]),
        ("Ответим в течение пяти рабочих дней", ["term"]),
        ("Работаем круглосуточно", ["term"]),
        ("У нас 12 магазинов", ["number"]),
        ("Есть три способа оплаты", ["number"]),
    ],
)
def test_an_unsourced_fact_is_reported_by_its_code(answer, codes):
    assert unsupported(answer, SOURCES) == codes


@pytest.mark.parametrize(
    "answer",
    [
        "По Москве доставка стоит 300 ₽.",
        "От 5000 руб. доставка бесплатная.",
        "От 5 тыс. рублей доставим бесплатно.",
        "Вернуть товар можно в течение четырнадцати дней.",
        "Звоните: 8 (495) 123-45-67 или пишите на help@shop.example.ru.",
        "Все контакты: shop.example.ru/contacts",
        "Работаем до 20:00, с понедельника по субботу.",
        "Привезём на следующий день.",
    ],
)
def test_a_fact_the_sources_state_passes(answer):
    assert unsupported(answer, SOURCES) == []


def test_free_is_a_price_claim():
    assert unsupported("Сборка бесплатная.", ["Сборка: 500 ₽."]) == ["price"]
    assert unsupported("Сборка бесплатная.", ["Сборка бесплатно."]) == []


def test_the_unit_of_a_term_counts_too():
    assert unsupported("Вернуть можно в течение 14 недель.", SOURCES) == ["term"]
    assert unsupported("Вернуть можно за две недели.", SOURCES) == ["term"]  # 14 days, said otherwise


def test_codes_are_sorted_and_unique_and_never_carry_the_text():
    codes = unsupported("Звоните 8 800 555-35-35, доставка 700 ₽, а самовывоз 100 ₽.", [])
    assert codes == ["phone", "price"]


def test_numbers_are_read_alike_on_both_sides():
    assert facts_in("5 000 ₽") == facts_in("5000 руб.") == facts_in("5 тыс. рублей") == [Fact("price", "n:5000")]
    assert facts_in("двадцать пять") == [Fact("number", "n:25")]
    assert facts_in("1,5") == facts_in("1.50") == [Fact("number", "n:1.5")]


def test_an_amount_in_groups_of_three_is_not_a_phone():
    assert facts_in("10 000 000 рублей") == [Fact("price", "n:10000000")]


def test_the_digits_of_a_phone_or_an_address_are_not_read_again_as_numbers():
    assert [f.code for f in facts_in("+7 (495) 123-45-67")] == ["phone"]
    assert [f.code for f in facts_in("https://shop.example.ru/page/2024")] == ["url"]
    assert [f.code for f in facts_in("01.02.2025")] == ["date"]


def test_a_phone_is_compared_by_its_last_ten_digits():
    assert unsupported("+7 495 123 45 67", ["8 (495) 123-45-67"]) == []


def test_the_bots_own_name_may_hold_digits():
    assert unsupported("Я помощник магазина «220 Вольт».", ["220 Вольт"]) == []


@pytest.mark.parametrize(
    ("junk", "count"), [("1.", 5000), ("a.", 0), ("a@", 0), ("1-", 10000)],
    ids=["dotted-digits", "dotted-letters", "ats", "dashes"],
)
def test_a_long_run_of_junk_is_read_piece_by_piece(junk, count):
    """Each pattern may start only at the beginning of a run, so a pasted table of "1.1.1.…" is
    read as its pieces (and in linear time: quadratic backtracking took seconds before; the speed
    itself is not asserted here, a regression shows as a slow run)."""
    assert len(facts_in(junk * 10_000)) == count
