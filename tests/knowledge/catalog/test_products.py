"""Product search over an imported catalog: filters read from the question, words matched, every
value the feed row's own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from knowledge.catalog import catalog
from knowledge.catalog.products import card, product_search, read_filters

pytestmark = pytest.mark.django_db

FEED = """<?xml version="1.0" encoding="UTF-8"?>
<yml_catalog><shop><categories>
  <category id="1">Техника для дома</category><category id="2" parentId="1">Пылесосы</category>
  <category id="3">Кухонная техника</category><category id="4" parentId="3">Чайники</category>
</categories><offers>
  <offer id="v1" available="true"><price>12990</price><oldprice>14990</oldprice><categoryId>2</categoryId>
    <name>Пылесос Вихрь 100</name><vendor>Вихрь</vendor><url>https://shop.example/p/v1</url>
    <picture>https://shop.example/i/v1.jpg</picture><description>Циклонный, мощность 1800 Вт</description></offer>
  <offer id="v2" available="false"><price>9990</price><categoryId>2</categoryId>
    <name>Пылесос Смерч компакт</name><vendor>Смерч</vendor></offer>
  <offer id="v3" available="true"><price>24990</price><categoryId>2</categoryId>
    <name>Робот-пылесос Вихрь Авто</name><vendor>Вихрь</vendor></offer>
  <offer id="k1" available="true"><price>2490</price><categoryId>4</categoryId>
    <name>Чайник Ключ стеклянный</name><vendor>Ключ</vendor></offer>
</offers></shop></yml_catalog>""".encode()


@pytest.fixture
def shop_catalog(bot):
    assert catalog.catalog_import_bytes(bot=bot, data=FEED, name="feed.xml").run.status == "done"
    return bot


def _ids(found):
    return [offer.offer_id for offer in found.offers]


def test_a_price_ceiling_and_a_category_from_the_question(shop_catalog):
    found = product_search(bot=shop_catalog, text="есть пылесос до 15 000?")
    assert _ids(found) == ["v1", "v2"]  # in stock first, then cheaper; the 24 990 one is over the ceiling
    assert found.filters.applied() == {"price_max": "15000", "categories": ["Техника для дома / Пылесосы"]}


def test_in_stock_and_a_floor_in_thousands(shop_catalog):
    found = product_search(bot=shop_catalog, text="пылесос от 10 тысяч в наличии")
    assert _ids(found) == ["v1", "v3"]
    assert found.filters.price_min == Decimal("10000") and found.filters.in_stock


def test_a_range_and_a_vendor(shop_catalog):
    assert _ids(product_search(bot=shop_catalog, text="Вихрь от 20 до 30 тыс.")) == ["v3"]
    assert _ids(product_search(bot=shop_catalog, text="что есть от Смерч?")) == ["v2"]


def test_words_match_names_first(shop_catalog):
    assert _ids(product_search(bot=shop_catalog, text="стеклянный чайник"))[0] == "k1"
    assert _ids(product_search(bot=shop_catalog, text="робот"))[0] == "v3"


def test_more_words_than_the_category_narrow_it_when_they_find_offers(shop_catalog):
    assert _ids(product_search(bot=shop_catalog, text="покажите робот-пылесос")) == ["v3"]
    assert _ids(product_search(bot=shop_catalog, text="пылесос циклонный")) == ["v1"]
    # words no offer of the category has leave the category's own order
    assert _ids(product_search(bot=shop_catalog, text="пылесос хороший до 15 000")) == ["v1", "v2"]


def test_vendors_and_categories_read_by_word_form_are_added_only_when_the_feed_has_them(shop_catalog):
    found = product_search(bot=shop_catalog, text="пылесосы Вихря", vendors=("Вихрь", "Bosch"),
                           categories=("Холодильники",))
    assert found.filters.vendors == ("Вихрь",) and _ids(found) == ["v1", "v3"]


def test_a_name_the_feed_lacks_finds_no_offer_instead_of_any_of_the_category(shop_catalog):
    found = product_search(bot=shop_catalog, text="пылесос Dyson", names=("dyson",))
    assert found.offers == [] and found.nearest_category == "Техника для дома / Пылесосы"
    assert _ids(product_search(bot=shop_catalog, text="пылесос Вихрь 100", names=("100",))) == ["v1"]


def test_no_match_names_the_nearest_category_and_nothing_else(shop_catalog):
    found = product_search(bot=shop_catalog, text="пылесос до 500 рублей")
    assert found.offers == [] and found.nearest_category == "Техника для дома / Пылесосы"
    assert product_search(bot=shop_catalog, text="есть ли у вас").offers == []


def test_cards_carry_the_rows_own_values(shop_catalog):
    offer = product_search(bot=shop_catalog, text="Вихрь 100").offers[0]
    assert card(offer) == {
        "id": "v1", "name": "Пылесос Вихрь 100", "price": "12990.00", "old_price": "14990.00", "currency": "RUB",
        "available": True, "url": "https://shop.example/p/v1", "picture": "https://shop.example/i/v1.jpg",
    }


def test_another_bots_catalog_is_never_searched(shop_catalog, other_bot):
    assert product_search(bot=other_bot, text="пылесос").offers == []


def test_the_search_costs_two_queries(shop_catalog, django_assert_num_queries):
    with django_assert_num_queries(2):
        product_search(bot=shop_catalog, text="пылесос до 15 000 в наличии")


@pytest.mark.parametrize(("text", "low", "high"), [
    ("до 15 000 ₽", None, "15000"), ("дешевле 5к", None, "5000"), ("от 3 тысяч", "3000", None),
    ("от 1,5 тыс до 2 тыс", "1500.0", "2000"), ("в пределах 700 руб.", None, "700"), ("пылесос", None, None),
])
def test_prices_read_from_the_question(text, low, high):
    filters = read_filters(text, vendors=[], categories=[])
    assert (str(filters.price_min) if filters.price_min is not None else None) == low
    assert (str(filters.price_max) if filters.price_max is not None else None) == high


def test_filters_read_alike_in_every_thread():
    """Snowball stemmers keep state: the chat's worker threads each get their own."""
    from concurrent.futures import ThreadPoolExecutor

    from knowledge.catalog import products

    categories = ["Техника для дома / Пылесосы", "Кухонная техника / Чайники"]
    texts = [f"{word} {brand} до {n}000" for n in range(30) for word, brand in
             (("пылесосы", "Вихрь"), ("чайниками", "Ключ"), ("стеклянного", "Смерч"))]
    products._stems.cache_clear()

    def read(text):
        return read_filters(text, vendors=["Вихрь", "Ключ", "Смерч"], categories=categories)

    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(read, texts * 4))
    assert got == [read(text) for text in texts] * 4
