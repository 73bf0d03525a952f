"""Product questions on the demo shop's own feed (demo/site/market.xml, imported from the demo server
as an owner would), answered with no model at all: what the code reads from the question (a show
request, the feed's vendors and categories in any word form, a price cap, «в наличии», a brand the
feed lacks) decides the cards, every value the catalog row's own.

Cross-cutting: the chain's product route on the demo feed (answers/pipeline.py, answers/products.py,
knowledge/catalog/products.py, knowledge/catalog/feeds.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from answers import pipeline
from bots.models import Bot
from knowledge.catalog import catalog
from knowledge.catalog.embedding import offers_embed_pending

pytestmark = pytest.mark.django_db
BOSCH = ["bosch-twk3a011", "bosch-twk7203"]  # in stock, then the one that is not


@pytest.fixture(scope="module")
def demo_catalog_id(django_db_setup: Any, django_db_blocker: Any) -> Iterator[int]:
    """A bot with the demo feed imported from the demo server and its offers embedded (so the
    search by meaning really runs)."""
    from demo.server import make_server

    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    with django_db_blocker.unblock(), override_settings(CRAWL_ALLOW_PRIVATE=True):
        bot = Bot.objects.create(name="ТехноДом", slug="demo-products", site_url=f"{site}/")
        run = catalog.catalog_import_url(bot=bot, url=f"{site}/market.xml").run
        assert (run.status, run.added) == ("done", 10), run.message
        offers_embed_pending(bot_id=bot.pk)
    server.shutdown()
    server.server_close()
    yield bot.pk
    with django_db_blocker.unblock():
        Bot.objects.filter(pk=bot.pk).delete()


@pytest.fixture
def demo_catalog(demo_catalog_id: int, settings: Any) -> Bot:
    settings.LLM_PROVIDER = "none"
    return Bot.objects.get(pk=demo_catalog_id)


def _ask(bot: Bot, text: str) -> pipeline.Reply:
    return pipeline.answer(bot=bot, text=text, history=[])


def _ids(reply: pipeline.Reply) -> list[str]:
    return [card["id"] for card in reply.cards]


def test_show_me_bosch_kettles_gives_the_bosch_cards_in_stock_first(demo_catalog):
    reply = _ask(demo_catalog, "покажите чайники Bosch")
    assert _ids(reply) == BOSCH
    assert reply.intent == "product" and reply.llm_meta["route"] == "product"
    assert reply.llm_meta["filters"] == {"vendors": ["Bosch"], "categories": ["Кухонная техника / Чайники"]}
    assert [card["available"] for card in reply.cards] == [True, False]
    assert reply.cards[0]["price"] == "2990.00" and not reply.flags["unanswered"]
    assert reply.text == "Вот что нашлось в каталоге:"


def test_a_price_cap_in_roubles_keeps_the_kettles_under_it(demo_catalog):
    reply = _ask(demo_catalog, "покажите чайники Bosch до 3000 рублей")
    assert _ids(reply) == ["bosch-twk3a011"]
    assert reply.text == "Вот что нашлось в каталоге (до 3\u00a0000\u00a0₽):"
    cheaper = _ask(demo_catalog, "покажите чайники дешевле 3000")
    assert _ids(cheaper) == ["termik", "bosch-twk3a011"]


def test_in_stock_leaves_the_unavailable_bosch_out(demo_catalog):
    reply = _ask(demo_catalog, "чайники Bosch в наличии")
    assert _ids(reply) == ["bosch-twk3a011"]
    assert reply.llm_meta["filters"]["in_stock"] is True


def test_a_vendor_in_another_word_form_is_the_feeds_vendor(demo_catalog):
    reply = _ask(demo_catalog, "покажите пылесосы Вихря от 5 до 10 тысяч")
    assert _ids(reply) == ["vihr-ciklon", "vihr-klassik"]
    assert reply.llm_meta["filters"]["vendors"] == ["Вихрь"]


def test_a_brand_the_feed_lacks_is_an_honest_no_match_with_the_category(demo_catalog):
    reply = _ask(demo_catalog, "покажите чайники Philips")
    assert reply.cards == [] and reply.flags["unanswered"]
    assert reply.llm_meta["filters"]["names"] == ["philips"]
    assert "не нашлось" in reply.text and "«Чайники»" in reply.text
    assert reply.links and reply.links[0]["url"].endswith("/catalog/kitchen/")
    assert reply.buttons and reply.buttons[0]["id"] == "operator"


def test_a_washing_machine_of_a_vendor_the_feed_has_gets_no_kettle(demo_catalog):
    reply = _ask(demo_catalog, "Сколько стоит стиральная машина Bosch?")
    assert reply.cards == [] and reply.flags["unanswered"]
    assert reply.llm_meta["filters"]["vendors"] == ["Bosch"]


@pytest.mark.parametrize("text", [
    "Как выбрать чайник?",  # a question about kettles, not a request for them
    "Покажите, как оплатить заказ картой",
    "Сколько стоит доставка по Москве?",
    "Где посмотреть инструкцию к чайнику?",
    "Какие у вас часы работы?",
])
def test_questions_that_ask_for_no_goods_get_no_cards(demo_catalog, text):
    reply = _ask(demo_catalog, text)
    assert reply.cards == [] and reply.llm_meta["route"] != "product"


@pytest.mark.parametrize("text", [
    "покажите чайники " * 300,  # 5 100 characters
    "🫖🫖🫖",
    "покажите kettles Бош TWK",
    "покажите чайники \ud800 Bosch",
    "\ud800",
])
def test_bad_input_gets_a_reply_never_a_traceback(demo_catalog, text):
    reply = _ask(demo_catalog, text)
    assert reply.text
    assert all(card["id"] for card in reply.cards)
