"""The product route of the answer chain: cards copied from the catalog rows for the filters the
code reads from the question, the model's `product_query` and introduction (checked like any
answer), the honest no-match with the closest category's link; through the chat services, the
widget's message JSON and `ask --json`.

Cross-cutting: the chain's product route (answers/pipeline.py, answers/products.py,
knowledge/catalog/products.py, chat/services.py, the ask command)."""

from __future__ import annotations

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command

from answers import pipeline
from answers.products import price_text
from chat import frames, services
from knowledge.catalog import catalog
from llm.models import RunEvent
from tests import fakes
from tests.fakes.messages_api import tool_use

pytestmark = pytest.mark.django_db
fake_llm = fakes.fake_llm

FEED = """<?xml version="1.0" encoding="UTF-8"?>
<yml_catalog><shop><categories>
  <category id="1">Техника для дома</category><category id="2" parentId="1">Пылесосы</category>
  <category id="3">Кухонная техника</category><category id="4" parentId="3">Чайники</category>
</categories><offers>
  <offer id="v1" available="true"><price>12990</price><oldprice>14990</oldprice><categoryId>2</categoryId>
    <name>Пылесос Вихрь 100</name><vendor>Вихрь</vendor><url>https://shop.example/catalog/vacuums/v1/</url>
    <picture>https://shop.example/i/v1.jpg</picture><description>Циклонный, мощность 1800 Вт</description></offer>
  <offer id="v2" available="false"><price>9990</price><categoryId>2</categoryId>
    <name>Пылесос Смерч компакт</name><vendor>Смерч</vendor><url>https://shop.example/catalog/vacuums/v2/</url></offer>
  <offer id="v3" available="true"><price>24990</price><categoryId>2</categoryId>
    <name>Робот-пылесос Вихрь Авто</name><vendor>Вихрь</vendor><url>https://shop.example/catalog/vacuums/v3/</url></offer>
  <offer id="k1" available="true"><price>2490</price><categoryId>4</categoryId>
    <name>Чайник Ключ стеклянный</name><vendor>Ключ</vendor><url>https://shop.example/catalog/kettles/k1/</url></offer>
</offers></shop></yml_catalog>""".encode()


@pytest.fixture
def shop_catalog(bot):
    bot.site_url = "https://shop.example/"
    bot.save(update_fields=["site_url"])
    assert catalog.catalog_import_bytes(bot=bot, data=FEED, name="feed.xml").run.status == "done"
    return bot


def _say(bot, text):
    conversation = services.conversation_open(bot=bot, visitor_id="visitor-p")
    _question, reply, _created = services.message_receive(
        conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex
    )
    assert reply is not None
    return reply


def said(answer="", *, intent="product", product_query="", source=-1):
    return {"intent": intent, "source": source, "answer": answer, "product_query": product_query, "fixed": ""}


def test_a_price_ceiling_gives_cards_copied_from_the_feed_rows(shop_catalog):
    reply = _say(shop_catalog, "есть пылесос до 15 000?")
    assert reply.intent == "product" and reply.llm_meta["route"] == "product"
    assert reply.text == "Вот что нашлось в каталоге (до 15\u00a0000\u00a0₽):"
    assert [card["id"] for card in reply.cards] == ["v1", "v2"]
    first = frames.message_json(reply)["cards"][0]
    assert first == {
        "id": "v1", "name": "Пылесос Вихрь 100", "price": "12990.00", "old_price": "14990.00", "currency": "RUB",
        "price_text": "12\u00a0990\u00a0₽", "old_price_text": "14\u00a0990\u00a0₽", "available": True,
        "url": "https://shop.example/catalog/vacuums/v1/", "picture": "https://shop.example/i/v1.jpg",
    }
    second = frames.message_json(reply)["cards"][1]
    assert second["available"] is False and second["old_price"] is None and second["picture"] == ""
    assert not reply.flag("unanswered") and reply.llm_meta["filters"]["price_max"] == "15000"


def test_a_floor_in_thousands_and_in_stock(shop_catalog):
    reply = _say(shop_catalog, "пылесос от 10 тысяч в наличии")
    assert [card["id"] for card in reply.cards] == ["v1", "v3"]
    assert reply.text == "Вот что нашлось в каталоге (от 10\u00a0000\u00a0₽, в наличии):"


def test_no_match_is_honest_with_the_closest_categorys_link(shop_catalog):
    reply = _say(shop_catalog, "есть пылесос до 5000?")
    assert reply.cards == [] and reply.flag("unanswered")
    assert reply.text == (
        "В каталоге не нашлось подходящего товара (до 5\u00a0000\u00a0₽). "
        "Посмотрите раздел «Пылесосы» — ссылка ниже."
    )
    assert reply.links == [{"url": "https://shop.example/catalog/vacuums/", "title": "Пылесосы"}]
    assert reply.buttons == [{"id": "operator", "label": "Позвать оператора"}]


def test_no_match_without_any_category_says_so_without_a_link(shop_catalog):
    reply = _say(shop_catalog, "трековые светильники")
    assert reply.cards == [] and reply.links == [] and reply.flag("unanswered")
    assert reply.text.startswith("В каталоге не нашлось подходящего товара.")


def test_a_bot_without_a_catalog_keeps_the_normal_chain(bot):
    reply = _say(bot, "есть пылесос до 15 000?")
    assert reply.cards == [] and reply.llm_meta["route"] != "product"


def test_another_bots_catalog_is_never_shown(shop_catalog, other_bot):
    reply = _say(other_bot, "есть пылесос до 15 000?")
    assert reply.cards == []


def test_the_models_product_query_finds_what_the_rules_words_did_not(fake_llm, shop_catalog):
    # «что-нибудь для уборки» names no category; the model's query does, the ceiling stays the visitor's
    fake_llm.script(tool_use(said("", intent="product", product_query="пылесос Вихрь до 100000")))
    reply = _say(shop_catalog, "посоветуйте что-нибудь для уборки до 20 тысяч")
    assert [card["id"] for card in reply.cards] == ["v1"]
    assert reply.llm_meta["filters"]["price_max"] == "20000" and reply.llm_meta["product_query"] is True


def test_a_model_may_introduce_the_cards_with_their_own_facts(fake_llm, shop_catalog):
    fake_llm.script(tool_use(said("Есть Пылесос Вихрь 100 за 12 990 ₽, он в наличии.")))
    reply = _say(shop_catalog, "есть пылесос до 15 000?")
    assert reply.text == "Есть Пылесос Вихрь 100 за 12 990 ₽, он в наличии."
    assert reply.llm_meta["introduced_by"] == "model"


def test_a_price_the_cards_do_not_state_blocks_the_models_introduction(fake_llm, shop_catalog):
    fake_llm.script(tool_use(said("Пылесос Вихрь 100 стоит всего 9 500 ₽!")))
    reply = _say(shop_catalog, "есть пылесос до 15 000?")
    assert reply.text == "Вот что нашлось в каталоге (до 15\u00a0000\u00a0₽):"
    assert "9 500" not in reply.text and [card["id"] for card in reply.cards] == ["v1", "v2"]
    block = RunEvent.objects.get(kind=RunEvent.Kind.FILTER_BLOCK)
    assert block.detail["checked"] == "cards"


def test_ask_json_shows_the_cards(shop_catalog):
    out = StringIO()
    call_command("ask", shop_catalog.slug, "чайник в наличии", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert [card["id"] for card in data["cards"]] == ["k1"]
    assert data["cards"][0]["price_text"] == "2\u00a0490\u00a0₽" and data["intent"] == "product"


def test_the_chains_reply_json_carries_the_cards_too(shop_catalog):
    from chat.contracts import chain_reply_json

    reply = pipeline.answer(bot=shop_catalog, text="чайник", history=[])
    assert [card["name"] for card in chain_reply_json(reply)["cards"]] == ["Чайник Ключ стеклянный"]


@pytest.mark.parametrize(("amount", "currency", "shown"), [
    ("12990", "RUB", "12\u00a0990\u00a0₽"), ("1299.50", "RUR", "1\u00a0299,50\u00a0₽"), ("15", "USD", "15\u00a0$"),
    ("7", "KZT", "7\u00a0KZT"), (None, "RUB", ""),
])
def test_price_texts(amount, currency, shown):
    assert price_text(amount, currency) == shown


def test_offers_are_embedded_behind_the_import_and_found_by_meaning(shop_catalog, celery_worker_thread):
    import time as clock

    from knowledge.catalog.models import CatalogOffer

    deadline = clock.monotonic() + 60
    while CatalogOffer.objects.filter(bot=shop_catalog, embedding__isnull=True).exists():
        assert clock.monotonic() < deadline, "the offers were not embedded behind the import"
        clock.sleep(0.2)
    from knowledge.catalog.products import product_search

    found = product_search(bot=shop_catalog, text="чем убрать пыль в квартире")  # no word of any offer
    assert found.offers and all("ылесос" in offer.name for offer in found.offers)
    assert product_search(bot=shop_catalog, text="трековые светильники").offers == []  # nothing near enough


def test_a_changed_offer_loses_its_vector_until_it_is_embedded_again(shop_catalog):
    from knowledge.catalog.embedding import offers_embed_pending
    from knowledge.catalog.models import CatalogOffer

    assert offers_embed_pending(bot_id=shop_catalog.pk) == 4
    catalog.catalog_import_bytes(bot=shop_catalog, data=FEED.replace(b"12990", b"11990"), name="feed.xml")
    assert list(CatalogOffer.objects.filter(embedding__isnull=True).values_list("offer_id", flat=True)) == ["v1"]
    assert offers_embed_pending(bot_id=shop_catalog.pk) == 1


def _last_analyze():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # the stats of now, not of this transaction's first read
        cursor.execute("SELECT last_analyze, n_mod_since_analyze FROM pg_stat_user_tables "
                       "WHERE relname = 'commerce_catalogoffer'")
        return cursor.fetchone()


def _model_share():
    """What the planner believes of the offers carrying the model's key (pg_stats after ANALYZE)."""
    from django.db import connection

    from knowledge.embeddings import get_embedder

    with connection.cursor() as cursor:
        cursor.execute("SELECT most_common_vals::text::text[], most_common_freqs FROM pg_stats "
                       "WHERE tablename = 'commerce_catalogoffer' AND attname = 'embedding_model'")
        row = cursor.fetchone()
    if row is None or row[0] is None:
        return 0.0
    return dict(zip(row[0], row[1], strict=True)).get(get_embedder().key, 0.0)


def _estimated_rows(bot_id):
    """The planner's guess of the bot's embedded offers (what picks the HNSW index or a full sort)."""
    from django.db import connection

    from knowledge.embeddings import get_embedder

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT id FROM commerce_catalogoffer WHERE bot_id = %s "
                       "AND embedding_model = %s", [bot_id, get_embedder().key])
        plan = cursor.fetchone()[0]
    return round((plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]["Plan Rows"])


def test_an_embedding_pass_leaves_the_offers_analysed_for_the_planner(shop_catalog):
    """Right after a pass the planner must know the offers carry vectors of the model, or it
    skips the HNSW index (docs/benchmarks.md): the task ends with ANALYZE, not waiting for autovacuum."""
    from knowledge.catalog.embedding import offers_embed_behind, offers_statistics_refresh

    offers_statistics_refresh()  # the state before the pass: no offer has a vector yet
    before, _changed = _last_analyze()
    assert _model_share() == 0.0
    assert offers_embed_behind(bot_id=shop_catalog.pk) == 4
    after, changed_since = _last_analyze()
    assert after is not None and after > before
    assert changed_since == 0  # the 4 vector writes are in the statistics
    assert _model_share() == 1.0
    # …and knows the bot's own offers carry them (the bot's id is in the statistics as well).
    assert _estimated_rows(shop_catalog.pk) == 4
    # A task with nothing to embed writes nothing and costs no ANALYZE.
    assert offers_embed_behind(bot_id=shop_catalog.pk) == 0
    assert _last_analyze()[0] == after
