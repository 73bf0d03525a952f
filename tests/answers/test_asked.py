"""The expected answer type: among near-ties, the entry that gives the kind of fact a question asks for."""

from __future__ import annotations

import pytest

from answers import asked, facts
from answers.excerpts import excerpt
from answers.pipeline import answer
from knowledge.search import SearchResult, search_entries

PRIVACY = ("Мы собираем имя и фамилию, номер телефона, e-mail, адрес доставки и историю заказов. Данные банковских "
           "карт мы не получаем и не храним.")
CONTACTS = ("E-mail: info@tehnika-shop.ru — отвечаем в течение одного рабочего дня.\n"
            "Telegram: @tehnika_help — с 9:00 до 21:00.")


def _result(entry_id: int, text: str, score: float) -> SearchResult:
    return SearchResult(entry_id=entry_id, url=f"/{entry_id}/", title="", text=text, kind="chunk", score=score)


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Какой у вас e-mail?", {facts.EMAIL}),
        ("На какую почту писать заявление на возврат?", {facts.EMAIL}),
        ("Есть у вас телеграм?", {facts.HANDLE, facts.URL}),
        ("Сколько стоит подъём на этаж?", {facts.PRICE}),
        ("Какую часть заказа можно оплатить бонусами?", {facts.PERCENT}),
        ("Сколько дней хранится заказ в пункте выдачи?", {facts.TERM}),
        ("До скольки работает пункт самовывоза?", {facts.TIME}),
        ("По какому телефону звонить?", {facts.PHONE}),
    ],
)
def test_the_kind_of_fact_a_question_asks_for(question: str, kinds: set[str]) -> None:
    assert asked.asked_kinds(question) == kinds


@pytest.mark.parametrize("question", ["Какие условия возврата товара?", "Можно ли вернуть товар?",
                                      "Сколько хранится посылка в отделении Почты России?"])
def test_questions_that_ask_for_no_kind_or_another_are_not_read_as_e_mail(question: str) -> None:
    assert facts.EMAIL not in asked.asked_kinds(question)


def test_a_near_tie_that_gives_the_asked_fact_is_shown_instead_of_one_that_only_names_it() -> None:
    privacy, contacts = _result(1, PRIVACY, 0.707), _result(2, CONTACTS, 0.651)
    assert asked.answering([privacy, contacts], "Какой у вас e-mail?") is contacts


def test_the_top_result_stays_when_it_gives_the_fact_when_none_is_asked_or_the_other_is_too_far() -> None:
    privacy, contacts = _result(1, PRIVACY, 0.707), _result(2, CONTACTS, 0.50)
    assert asked.answering([contacts, privacy], "Какой у вас e-mail?") is contacts  # the top gives one
    assert asked.answering([privacy, _result(2, CONTACTS, 0.70)], "Какие данные вы собираете?") is privacy
    assert asked.answering([privacy, contacts], "Какой у вас e-mail?") is privacy  # 0.207 below: not a near-tie
    assert asked.answering([], "Какой у вас e-mail?") is None


def test_an_entry_below_the_match_threshold_is_never_preferred() -> None:
    privacy, contacts = _result(1, PRIVACY, 0.55), _result(2, CONTACTS, 0.47)
    assert asked.answering([privacy, contacts], "Какой у вас e-mail?", floor=0.485) is privacy
    assert asked.answering([privacy, contacts], "Какой у вас e-mail?", floor=0.40) is contacts


MOSCOW = "/delivery/moscow/"


def _section(entry_id: int, anchor: str, heading: str, text: str, score: float) -> SearchResult:
    return SearchResult(entry_id=entry_id, url=f"{MOSCOW}#{anchor}", title="Доставка по Москве", text=text,
                        kind="chunk", score=score, heading_path=f"Доставка по Москве и Московской области / {heading}")


EXPRESS = _section(58, "express", "Экспресс-доставка в день заказа",
                   "Если оформить заказ до 12:00, курьер привезёт его в тот же день. Экспресс-доставка стоит 690 ₽.",
                   0.765)
STANDARD = _section(57, "standard", "Доставка на следующий день",
                    "В пределах МКАД курьер привезёт заказ на следующий день. Стоимость — 350 ₽. При сумме заказа "
                    "от 5 000 ₽ доставка бесплатная.", 0.685)
LARGE = _section(61, "large", "Крупногабаритные товары",
                 "Доставка крупногабаритных товаров в пределах МКАД стоит 790 ₽.", 0.765)


def test_the_section_that_states_the_general_rule_is_shown_not_the_best_worded_special_case() -> None:
    results = [EXPRESS, LARGE, STANDARD]
    assert asked.answering(results, "Сколько стоит доставка по Москве?") is STANDARD
    assert asked.answering(results, "Сколько стоит экспресс-доставка в день заказа?") is EXPRESS
    assert asked.answering(results, "Сколько стоит доставка крупногабаритного товара?") is LARGE


def test_the_section_choice_stays_on_the_page_within_the_window_and_among_sections_that_give_the_fact() -> None:
    elsewhere = SearchResult(entry_id=1, url="/delivery/", title="Доставка", text="Доставка по Москве: 300 ₽.",
                             kind="chunk", score=0.76, heading_path="Доставка")
    assert asked.answering([EXPRESS, elsewhere], "Сколько стоит доставка по Москве?") is EXPRESS
    assert asked.answering([EXPRESS, STANDARD], "Сколько стоит доставка по Москве?", window=0.05) is EXPRESS
    assert asked.answering([EXPRESS, STANDARD], "Сколько стоит доставка по Москве?", floor=0.70) is EXPRESS
    no_price = _section(56, "", "Доставка по Москве", "Курьеры привозят заказы каждый день.", 0.70)
    assert asked.answering([EXPRESS, no_price], "Сколько стоит доставка по Москве?") is EXPRESS
    assert asked.answering([EXPRESS, STANDARD], "Как работает доставка по Москве?") is EXPRESS  # no kind asked


def test_the_words_that_ask_for_the_kind_of_fact_are_not_what_the_question_is_about() -> None:
    from answers import lemmas

    assert asked.content_words("Сколько стоит доставка по Москве?") == [lemmas.keys("доставка"),
                                                                         lemmas.keys("москве")]
    assert asked.content_words("Какая стоимость доставки?") == [lemmas.keys("доставки")]


def test_the_excerpt_prefers_the_line_that_states_the_asked_fact() -> None:
    shown = excerpt(CONTACTS, "Какой у вас телеграм?", limit=60)
    assert shown.startswith("Telegram: @tehnika_help")


@pytest.mark.django_db
def test_without_a_model_the_visitor_reads_the_address_not_the_privacy_policy(shop, settings) -> None:
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.services import entry_upsert

    settings.LLM_PROVIDER = "none"
    for key, title, text in (("privacy", "Политика обработки персональных данных", PRIVACY),
                             ("contacts", "Контакты: e-mail и мессенджеры", CONTACTS)):
        entry_upsert(bot=shop, source=None, draft=EntryDraft(key=key, title=title, text=text, url=f"https://shop.example/{key}"))
    embed_pending(bot_id=shop.pk)
    question = "Какой у вас e-mail?"
    results = search_entries(shop, question, k=5)
    reply = answer(bot=shop, text=question, history=[])
    assert results[0].url.endswith("/privacy")  # the case this is about: the policy that names e-mail ranks first
    assert "info@tehnika-shop.ru" in reply.text
    assert reply.links[0]["url"] == "https://shop.example/contacts"
    assert reply.source_entry_id == results[1].entry_id


@pytest.mark.parametrize(
    ("question", "kind"),
    [("How much does delivery in Moscow cost?", "price"), ("What is the price of installation?", "price"),
     ("How many days do I have to return an item?", "term"), ("How long is a gift card valid?", "term"),
     ("What share of an order can be paid with bonus points?", "percent"),
     ("What are the working hours of your hotline?", "time"), ("What is your email address?", "email")],
)
def test_an_english_question_asks_for_its_kind_of_fact_too(question, kind):
    """Without a shared word, the kind of fact asked for is what picks the passage of a Russian page."""
    codes = {"price": facts.PRICE, "term": facts.TERM, "percent": facts.PERCENT, "time": facts.TIME,
             "email": facts.EMAIL}
    assert codes[kind] in asked.asked_kinds(question)
