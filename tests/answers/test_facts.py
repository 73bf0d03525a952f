"""The fact check: which facts it sees, and when a source gives them (compared as values)."""

from __future__ import annotations

import pytest

from answers.facts import Fact, Known, blocked, facts_in, is_domain, settled_length, unsupported

SOURCES = [
    "Доставка: Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5 000 ₽ бесплатно.",
    "Возврат товара: Вернуть товар можно в течение 14 дней после покупки.",
    "Контакты: Телефон +7 (495) 123-45-67, почта help@shop.example.ru, сайт https://shop.example.ru/contacts. "
    "Работаем ежедневно с 9:00 до 20:00, с понедельника по субботу. Telegram: t.me/romashka_shop.",
]
RETURN = ["Возврат товара: Вернуть товар можно в течение 14 дней после покупки."]


def keys(text: str) -> list[str]:
    return [fact.key for fact in facts_in(text)]


@pytest.mark.parametrize(
    "answer",
    [
        "Здравствуйте! Чем могу помочь?",
        "Я виртуальный помощник магазина. Уточните, пожалуйста, что вы ищете?",
        "Хорошего дня!",
        "Один из способов — спросить у оператора.",
        "Спасибо за вопрос, рад помочь.",
        "Hello! Have a nice day. One moment, please.",
        "Feel free to ask anything.",
        "Точка выдачи находится рядом с метро.",
        "Посмотрите файл index.html или раздел «Оплата».",
        "Это т.е. то же самое.",
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
        ("Скидка 10%", ["percent"]),
        ("Скидка десять процентов", ["percent"]),
        ("Звоните: 8 800 555-35-35.", ["phone"]),
        ("Наш номер +7 999 000 11 22", ["phone"]),
        ("Пишите на sales@romashka.ru", ["email"]),
        ("Подробнее на https://romashka.ru/promo", ["url"]),
        ("Загляните на romashka.ru", ["url"]),
        ("Акция до 31.12.2025", ["date"]),
        ("Открыто до 21:00", ["time"]),
        ("Скидки в марте", ["date"]),
        ("Работаем и в воскресенье", ["date"]),
        ("Привезём за 3 дня", ["term"]),
        ("Вернуть можно в течение месяца", ["term"]),
        ("Ответим в течение пяти рабочих дней", ["term"]),
        ("Работаем круглосуточно", ["term"]),
        ("Работаем 24/7", ["term"]),
        ("У нас 12 магазинов", ["number"]),
        ("Есть три способа оплаты", ["number"]),
        # what a hostile model tried (issue 9): every one of them is a fact now
        ("Напишите в телеграм @romashka_support", ["handle"]),
        ("Оплатить можно на techno-pay.xyz", ["url"]),
        ("Оплатить можно на techno-pay точка xyz", ["url"]),
        ("Это стоит четыреста рублей", ["price"]),
        ("Доставка — шестьсот", ["number"]),
        ("It is seventeen dollars", ["price"]),
        ("Отдадим за половину цены", ["number"]),
        ("Отдадим за полцены", ["number"]),
        ("Подождите полчаса", ["term"]),
        ("Полтора года гарантии", ["term"]),
        ("Пишите: help собака romashka точка ru", ["email"]),
        ("Write to sales (at) romashka (dot) com", ["email"]),
        ("Пишите в WhatsApp: wa.me/79990001122", ["phone", "url"]),
        ("Есть сайт романшка.рф", ["url"]),
        ("Twenty-five dollars", ["price"]),
        ("До двадцать первого числа", ["number"]),
        ("В 2026 году цены изменятся", ["date"]),
    ],
)
def test_an_unsourced_fact_is_reported_by_its_code(answer, codes):
    assert unsupported(answer, SOURCES) == codes


@pytest.mark.parametrize(
    "answer",
    [
        "По Москве доставка стоит 300 ₽.",
        "По Москве доставка стоит триста рублей.",
        "От 5000 руб. доставка бесплатная.",
        "От 5 тыс. рублей доставим бесплатно.",
        "Вернуть товар можно в течение четырнадцати дней.",
        "Вернуть товар можно в течение двух недель.",
        "You can return it within 14 days.",
        "You can return it within fourteen days.",
        "Звоните: 8 (495) 123-45-67 или пишите на help@shop.example.ru.",
        "Пишите на help собака shop.example.ru",
        "Все контакты: shop.example.ru/contacts",
        "Сайт: shop.example.ru",
        "Работаем до 20:00, с понедельника по субботу.",
        "Работаем с 9 до 20.",
        "Привезём на следующий день.",
        "Мы в телеграме: @romashka_shop",
    ],
)
def test_a_fact_the_sources_state_passes_in_any_wording(answer):
    assert unsupported(answer, SOURCES) == []


@pytest.mark.parametrize(
    ("answer", "blocked_key"),
    [
        ("Вернуть товар можно в течение 45 дней.", "q:45:day"),
        ("Вернуть товар можно в течение месяца.", "q:1:month"),
        ("Вернуть товар можно в течение 30 дней.", "q:30:day"),
        ("Вернуть товар можно в течение 14 недель.", "q:98:day"),
        ("Вернуть товар можно в течение 14 рабочих дней.", "q:14:bday"),
    ],
)
def test_a_term_is_compared_as_a_value_with_its_unit(answer, blocked_key):
    assert [fact.key for fact in blocked(answer, Known.of(RETURN))] == [blocked_key]


def test_free_is_a_price_claim():
    assert unsupported("Сборка бесплатная.", ["Сборка: 500 ₽."]) == ["price"]
    assert unsupported("Сборка бесплатная.", ["Сборка бесплатно."]) == []
    assert unsupported("Assembly is free of charge.", ["Сборка бесплатно."]) == []


def test_a_range_gives_its_unit_to_both_ends():
    assert keys("2–5 дней") == keys("от 2 до 5 дней") == ["q:2:day", "q:5:day"]
    assert keys("от 300 до 500 ₽") == ["q:300:rub", "q:500:rub"]
    assert unsupported("Привезём за 2 дня.", ["Срок 2–5 дней."]) == []


def test_a_price_may_rest_on_a_bare_table_cell_but_a_term_may_not():
    assert unsupported("Доставка 350 ₽.", ["Стоимость, ₽ | 350"]) == []
    assert unsupported("Вернуть можно за 14 дней.", ["Пункт 14 договора."]) == ["term"]


def test_codes_are_sorted_and_unique_and_never_carry_the_text():
    codes = unsupported("Звоните 8 800 555-35-35, доставка 700 ₽, а самовывоз 100 ₽.", [])
    assert codes == ["phone", "price"]


def test_numbers_are_read_alike_on_both_sides():
    assert facts_in("5 000 ₽") == facts_in("5000 руб.") == facts_in("5 тыс. рублей") == [Fact("price", "q:5000:rub")]
    assert facts_in("двадцать пять") == facts_in("twenty five") == [Fact("number", "n:25")]
    assert facts_in("1,5") == facts_in("1.50") == [Fact("number", "n:1.5")]
    assert keys("четырнадцать дней") == keys("четырнадцатью днями") == keys("две недели") == ["q:14:day"]
    assert keys("четыреста") == keys("четырехсот") == keys("четырёмстам") == ["n:400"]


def test_an_amount_in_groups_of_three_is_not_a_phone():
    assert facts_in("10 000 000 рублей") == [Fact("price", "q:10000000:rub")]


def test_the_digits_of_a_phone_or_an_address_are_not_read_again_as_numbers():
    assert [f.code for f in facts_in("+7 (495) 123-45-67")] == ["phone"]
    assert [f.code for f in facts_in("https://shop.example.ru/page/2024")] == ["url"]
    assert [f.code for f in facts_in("01.02.2025")] == ["date"]


def test_a_phone_is_compared_by_its_last_ten_digits():
    assert unsupported("+7 495 123 45 67", ["8 (495) 123-45-67"]) == []


def test_the_bots_own_name_may_hold_digits():
    assert unsupported("Я помощник магазина «220 Вольт».", ["220 Вольт"]) == []


@pytest.mark.parametrize(("host", "domain"), [
    ("shop.ru", True), ("techno-pay.xyz", True), ("сайт.рф", True), ("t.me", True), ("foo.museum", True),
    ("index.html", False), ("6.4", False), ("т.е", False), ("file.txt", False),
])
def test_domains_are_decided_by_the_public_suffix_list(host, domain):
    assert is_domain(host) is domain


@pytest.mark.parametrize(
    ("text", "settled"),
    [
        ("Вернуть можно в течение 14", "Вернуть можно в течение"),
        ("Вернуть можно в течение 14 дней", "Вернуть можно в течение"),
        ("Вернуть можно в течение 14 дней после ", "Вернуть можно в течение 14 дней после"),
        ("Вернуть можно в течение 14 дней после покупки ", "Вернуть можно в течение 14 дней после покупки"),
        ("Пишите help собака shop ", "Пишите help"),
        ("Стоит двадцать ", "Стоит"),
        ("Доставим", "Доставим"),  # no way of finishing it makes a fact of it: shown as it is typed
        ("Стоит дв", "Стоит"),  # «дв…» may become «двадцать»
        ("Привезём в декаб", "Привезём в"),  # a month is shown only whole, once checked
        ("Оплата на techno", "Оплата на techno"),  # «techno-pay.xyz» is held once its dot is there
        ("Оплата на techno-pay.x", "Оплата на"),
    ],
)
def test_a_growing_text_is_settled_only_up_to_words_no_later_word_can_change(text, settled):
    assert text[:settled_length(text)] == settled


@pytest.mark.parametrize(
    ("junk", "count"), [("1.", 5000), ("a.", 0), ("a@", 0), ("1-", 10000)],
    ids=["dotted-digits", "dotted-letters", "ats", "dashes"],
)
def test_a_long_run_of_junk_is_read_piece_by_piece(junk, count):
    """Each pattern may start only at the beginning of a run, so a pasted table of "1.1.1.…" is
    read as its pieces (and in linear time: quadratic backtracking took seconds before; the speed
    itself is not asserted here, a regression shows as a slow run)."""
    assert len(facts_in(junk * 10_000)) >= count


def test_an_address_ends_where_its_line_ends():
    text = "Пишите на uxlab@mcs.mail.ru.\n\n3.2. Настоящее соглашение действует бессрочно."
    assert [f.key for f in facts_in(text) if f.code == "email"] == ["e:uxlab@mcs.mail.ru"]
