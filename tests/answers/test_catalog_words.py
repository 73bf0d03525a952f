"""What a question names of a catalog, read by code: the feed's vendors in any word form and as the
feed writes them, categories by lemma, a Latin-script brand the feed lacks, a request to be shown."""

from __future__ import annotations

import pytest

from answers.catalog_words import named

VENDORS = ["Bosch", "Вихрь", "Термик", "Кофетто"]
CATEGORIES = ["Техника для дома / Пылесосы", "Кухонная техника / Чайники",
              "Кухонная техника / Кофемашины и кофеварки"]


def _named(text: str):
    return named(text, vendors=VENDORS, categories=CATEGORIES)


def test_show_me_bosch_kettles_names_the_vendor_and_the_category():
    said = _named("покажите чайники Bosch")
    assert said.vendors == ("Bosch",) and said.categories == ("Кухонная техника / Чайники",)
    assert said.strangers == () and said.asks_to_show and said.catalog


def test_vendors_in_any_word_form_and_case():
    assert _named("пылесосы Вихря").vendors == ("Вихрь",)
    assert _named("что есть от термика?").vendors == ("Термик",)
    assert _named("чайник BOSCH").vendors == ("Bosch",)
    assert _named("чайник Бош").vendors == ()  # written as the feed does not write it


def test_a_category_by_any_word_of_its_name():
    assert _named("нужна кофеварка").categories == ("Кухонная техника / Кофемашины и кофеварки",)
    assert _named("покажите пылесос").categories == ("Техника для дома / Пылесосы",)
    assert _named("покажите технику").categories == ()  # a parent's words name no offer's category


def test_a_latin_brand_the_feed_lacks_is_kept_as_a_name_to_find():
    assert _named("покажите чайники Philips").strangers == ("philips",)
    assert _named("Do you have Philips kettles?").strangers == ()  # an English question: no Russian to tell names by


@pytest.mark.parametrize(("text", "shows"), [
    ("покажите чайники", True), ("покажи пылесосы", True), ("а чайники Bosch есть?", True),
    ("хочу посмотреть кофемашины", True), ("как выбрать чайник?", False),
    ("где посмотреть инструкцию к пылесосу?", False), ("чайник протекает", False),
])
def test_a_request_to_be_shown_goods(text, shows):
    assert _named(text).asks_to_show is shows


@pytest.mark.parametrize("text", ["", "\ud800", "🫖" * 50, "чайник " * 1000, "покажите 𝔟𝔬𝔰𝔠𝔥 чайн1ки"])
def test_bad_input_names_nothing_wrong_and_never_raises(text):
    said = _named(text)
    assert said.vendors == () and all(name for name in said.strangers)
