"""«инструкция к пылесосу» is a request for a document: it is answered from the knowledge (the
manual's page with its link), never with product cards, with or without a model; a question that
asks to buy or for a price still gets the cards.

Cross-cutting: the chain choosing between knowledge and the catalog (answers/pipeline.py,
knowledge/catalog/products.py)."""

from __future__ import annotations

import pytest

from knowledge.drafts import EntryDraft
from knowledge.indexing import embed_pending
from knowledge.models import Entry
from knowledge.services import entry_upsert
from tests.fakes.messages_api import tool_use
from tests.knowledge.catalog.test_product_chain import _say, fake_llm, said, shop_catalog  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db

MANUAL_URL = "https://shop.example/manuals/vihr-100/"


@pytest.fixture
def manuals(shop_catalog):  # noqa: F811
    entry_upsert(bot=shop_catalog, source=None, draft=EntryDraft(
        key="manual-vihr", title="Инструкция к пылесосу Вихрь 100", url=MANUAL_URL, kind=Entry.Kind.CHUNK,
        text="Инструкция к пылесосу Вихрь 100: перед первым включением зарядите аккумулятор 4 часа, "
             "фильтр промывайте раз в месяц. Инструкцию в PDF можно скачать на странице товара.",
    ))
    embed_pending(bot_id=shop_catalog.pk)
    return shop_catalog


@pytest.mark.parametrize("text", ["инструкция к пылесосу", "Где найти инструкцию к пылесосу Вихрь 100?"])
def test_a_manual_request_is_answered_from_the_knowledge_without_cards(manuals, text):
    reply = _say(manuals, text)
    assert reply.intent == "question" and reply.llm_meta["route"] != "product"
    assert reply.cards == []
    assert reply.links == [{"url": MANUAL_URL, "title": "Инструкция к пылесосу Вихрь 100"}]
    assert "зарядите аккумулятор" in reply.text


def test_a_model_that_raises_a_manual_request_to_products_is_overruled(fake_llm, manuals):  # noqa: F811
    fake_llm.script(tool_use(said("", intent="product", product_query="пылесос Вихрь 100")))
    reply = _say(manuals, "инструкция к пылесосу Вихрь 100")
    assert reply.cards == [] and reply.llm_meta["route"] != "product"


@pytest.mark.parametrize("text", ["пылесос Вихрь 100", "сколько стоит пылесос Вихрь 100 с инструкцией?",
                                  "хочу купить пылесос, где инструкция к нему?"])
def test_a_product_question_still_gets_cards(manuals, text):
    reply = _say(manuals, text)
    assert reply.intent == "product" and reply.llm_meta["route"] == "product"
    assert "v1" in [card["id"] for card in reply.cards]
