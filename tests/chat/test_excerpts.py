"""Readable answers without a model: the sentences or rows of an entry that answer the question."""

from __future__ import annotations

from assistant.chat import excerpts
from assistant.chat.excerpts import HARD_LIMIT, excerpt, units

TABLE = (
    "Внутри МКАД: срок — на следующий день; стоимость — 350 ₽; бесплатно — от 5 000 ₽\n"
    "Внутри МКАД, экспресс: срок — в день заказа; стоимость — 690 ₽\n"
    "До 30 км от МКАД: срок — 1–2 дня; стоимость — 590 ₽; бесплатно — от 15 000 ₽\n"
    "Крупногабарит внутри МКАД: срок — от 1 дня; стоимость — 790 ₽; бесплатно — от 30 000 ₽"
)
LEGAL = (
    "6.3. Компания вправе изменять тарифы, уведомив Пользователя за 10 дней. " * 3 + "6.4. "
    "Техническая поддержка оказывается круглосуточно, включая выходные и праздничные дни, через портал и по "
    "телефону. 6.5. Обращения рассматриваются в порядке очереди. " + "Прочие положения договора. " * 10
)


def test_the_row_that_answers_comes_with_its_header_and_is_never_cut():
    shown = excerpt(TABLE, "Сколько стоит доставка за 30 км от МКАД?", limit=120)
    assert shown.startswith("До 30 км от МКАД: срок — 1–2 дня; стоимость — 590 ₽; бесплатно — от 15 000 ₽")
    assert all(line in TABLE.split("\n") for line in shown.split("\n"))


def test_a_clause_number_is_never_an_answer_on_its_own():
    shown = excerpt(LEGAL, "Техподдержка работает по выходным?")
    assert "6.4. Техническая поддержка оказывается круглосуточно, включая выходные" in shown
    assert shown.strip() not in {"6.4.", "6.4"} and "6.4." not in units(LEGAL)


def test_units_are_sentences_rows_and_list_items():
    text = "Вернуть можно в течение 14 дней, т.е. двух недель. Деньги вернём за 10 дней.\n• картой\n• наличными"
    assert units(text) == ["Вернуть можно в течение 14 дней, т.е. двух недель.", "Деньги вернём за 10 дней.",
                           "• картой", "• наличными"]


def test_the_best_matching_sentence_is_shown_with_its_neighbours_in_order():
    text = ("Мы работаем с 2010 года. Доставка по Москве — на следующий день. Стоимость — 350 ₽. "
            "Самовывоз бесплатный. " + "Прочее. " * 80)
    shown = excerpt(text, "Сколько стоит доставка по Москве?", limit=120)
    assert "Доставка по Москве — на следующий день. Стоимость — 350 ₽." in shown
    assert len(shown) <= 120


def test_only_one_sentence_longer_than_anything_showable_is_cut_at_a_word():
    text = "слово " * 300
    shown = excerpt(text, "слово")
    assert shown.endswith("слово…") and len(shown) <= HARD_LIMIT + 1


def test_stems_are_the_same_from_many_threads_at_once():
    """The chat's worker threads stem at the same time: a stemmer shared between them garbled
    words and failed whole turns (IndexError inside snowball) under 200 visitors."""
    from concurrent.futures import ThreadPoolExecutor

    from assistant.chat import friction

    texts = [
        "Сколько стоит доставка по Москве и области в выходные дни?",
        "Возврат товара надлежащего качества возможен в течение четырнадцати дней",
        "Оплата картой, наличными курьеру или безналичным переводом для юридических лиц",
        "Delivery and returns for international customers, shipping rates",
    ] * 50
    expected = [(excerpts.stems(text), friction.stems(text)) for text in texts]

    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda text: (excerpts.stems(text), friction.stems(text)), texts * 4))

    assert got == expected * 4
