"""The answer chain with a model: rules, real hybrid search over a few embedded entries, the real
`anthropic` SDK talking to the local fake Messages API, and the last word in code
(docs/architecture.md, "The answer chain")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from answers import pipeline
from answers.pipeline import Reply
from bots.models import Bot
from chat import services
from knowledge.models import Entry
from llm.models import RunEvent, Usage
from tests import fakes
from tests.fakes.messages_api import broken_json, overloaded, server_error, text, tool_use

pytestmark = pytest.mark.django_db
fake_llm = fakes.fake_llm  # the fake Messages API fixture (tests/chat/conftest does not load it)

KNOWLEDGE = [
    ("delivery", "Доставка",
     "Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ доставка бесплатная. "
     "В другие города отправляем транспортной компанией, срок 2–5 дней.", "https://shop.example/delivery"),
    ("return", "Возврат товара",
     "Вернуть товар можно в течение 14 дней после покупки, если сохранены упаковка и чек. "
     "Деньги вернём на карту в течение 10 дней.", "https://shop.example/return"),
    ("payment", "Оплата заказа",
     "Оплатить заказ можно картой на сайте, через СБП или наличными курьеру при получении.",
     "https://shop.example/payment"),
    ("contacts", "Контакты",
     "Телефон +7 (495) 123-45-67, почта help@shop.example.ru. Работаем ежедневно с 9:00 до 20:00.",
     "https://shop.example/contacts"),
]
DELIVERY = "Сколько стоит доставка по Москве?"  # one source: [0] Доставка
PAYMENT = "Как оплатить заказ?"  # [0] Оплата заказа, and more
UNKNOWN = "Есть ли у вас парковка для вертолёта на крыше офиса?"  # no source passes the threshold
NO_ANSWER = "К сожалению, точного ответа у меня нет. Пригласить оператора? Он во всём разберётся."
OPERATOR_BUTTON = {"id": "operator", "label": "Позвать оператора"}


@pytest.fixture(scope="module")
def chain_shop_id(django_db_setup: Any, django_db_blocker: Any) -> Iterator[int]:
    """A shop with four entries, stored and embedded once for the module (committed, outside the
    tests' transactions, which roll back only what each test wrote), deleted at the end."""
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.services import entry_upsert

    with django_db_blocker.unblock():
        bot = Bot.objects.create(
            name="Ромашка", slug="chain-shop", site_url="https://shop.example/", match_threshold=0.34,
            confidence_threshold=0.65,
        )
        for key, title, body, url in KNOWLEDGE:
            draft = EntryDraft(key=key, title=title, text=body, url=url, kind=Entry.Kind.QA)
            entry_upsert(bot=bot, source=None, draft=draft)
        embed_pending(bot_id=bot.pk)
    yield bot.pk
    with django_db_blocker.unblock():
        Entry.history.filter(bot_id=bot.pk).delete()
        Bot.objects.filter(pk=bot.pk).delete()


@pytest.fixture
def chain_shop(chain_shop_id: int) -> Bot:
    """A fresh instance per test: a test may change its fields in memory without touching others."""
    return Bot.objects.get(pk=chain_shop_id)


def entry(bot: Bot, key: str) -> Entry:
    return Entry.objects.get(bot=bot, key=key)


def link(key: str) -> dict[str, str]:
    _key, title, _text, url = next(item for item in KNOWLEDGE if item[0] == key)
    return {"url": url, "title": title}


def said(answer: str = "", *, source: int = -1, intent: str = "question", fixed: str = "", **extra: Any) -> dict:
    """The model's answer form; `fixed` empty means "no typos" (no retry)."""
    return {"intent": intent, "source": source, "answer": answer, "product_query": "", "fixed": fixed, **extra}


def ask(bot: Bot, question: str, history: list[tuple[str, str]] | None = None, **options: Any) -> Reply:
    return pipeline.answer(bot=bot, text=question, history=history or [], **options)


def sources_block(request: Any) -> str:
    """The last user turn of a recorded request: the numbered sources as quoted data, then the question."""
    return request.body["messages"][-1]["content"]


# --- 1. a sourced answer ----------------------------------------------------------------------------


def test_a_sourced_answer_carries_the_link_of_that_entry(fake_llm, chain_shop):
    answer = "Доставка по Москве стоит 300 ₽, привезём на следующий день. Подробнее — по ссылке ниже."
    fake_llm.script(tool_use(said(answer, source=0)))

    reply = ask(chain_shop, DELIVERY)

    assert '<источник номер="0">\nДоставка: Доставка по Москве' in sources_block(fake_llm.requests[0])
    assert fake_llm.requests[0].body["system"][0]["text"].count("Доставка по Москве") == 0
    assert reply.text == answer
    assert reply.links == [link("delivery")]
    assert reply.source_entry_id == entry(chain_shop, "delivery").pk
    assert reply.intent == "purchase" and reply.buttons == [] and not reply.flags.get("unanswered")
    assert reply.llm_meta["route"] == "sourced" and reply.llm_meta["source_index"] == 0
    assert reply.llm_meta["provider"] == "anthropic" and reply.llm_meta["model"] == "claude-haiku-4-5"
    assert reply.llm_meta["tokens"]["input"] == 120 and reply.llm_meta["attempts"] == 1


def test_the_cited_number_picks_the_entry_among_several(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Картой, через СБП или наличными курьеру.", source=0)))

    reply = ask(chain_shop, PAYMENT)

    block = sources_block(fake_llm.requests[0])
    assert '<источник номер="0">\nОплата заказа:' in block and '<источник номер="1">' in block
    assert reply.links == [link("payment")] and reply.source_entry_id == entry(chain_shop, "payment").pk
    assert set(reply.sources) >= {entry(chain_shop, "payment").pk, entry(chain_shop, "delivery").pk}


# --- 2. conversation without a source --------------------------------------------------------------


def test_sourceless_small_talk_passes_without_a_link(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Всё хорошо, спасибо! Чем могу помочь?", intent="smalltalk")))

    reply = ask(chain_shop, "Как у вас дела?")

    assert reply.text == "Всё хорошо, спасибо! Чем могу помочь?"
    assert reply.links == [] and reply.source_entry_id is None and reply.buttons == []
    assert reply.llm_meta["route"] == "conversation" and reply.llm_meta["blocked_facts"] == []


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("Обычно доставка стоит 700 ₽.", "price"),
        ("Позвоните нам: +7 (999) 000-11-22.", "phone"),
        ("Напишите на sales@romashka.ru, ответим.", "email"),
        ("Акция действует до 31.12.2025.", "date"),
        ("Всё есть на https://romashka.ru/sale", "url"),
        ("Привезём за три дня.", "term"),
    ],
    ids=["price", "phone", "email", "date", "url", "term"],
)
def test_a_sourceless_answer_stating_an_unsourced_fact_is_blocked(fake_llm, chain_shop, answer, code):
    fake_llm.script(tool_use(said(answer)))

    reply = ask(chain_shop, UNKNOWN)

    assert reply.text == NO_ANSWER and reply.buttons == [OPERATOR_BUTTON]
    assert reply.flags["unanswered"] is True and reply.links == []
    assert reply.llm_meta["route"] == "no_answer" and reply.llm_meta["blocked_facts"] == [code]
    event = RunEvent.objects.get(bot=chain_shop, kind=RunEvent.Kind.FILTER_BLOCK)
    assert event.ok is False and event.detail["codes"] == [code] and event.detail["checked"] == "sourceless"
    assert answer not in json.dumps(event.detail, ensure_ascii=False)


def test_a_sourceless_answer_is_blocked_even_when_a_source_happens_to_give_its_number(fake_llm, chain_shop):
    """No source, no fact: the code cannot tell which entry a sourceless fact came from, so it
    does not let it through because some source mentions the same number."""
    fake_llm.script(tool_use(said("По Москве это 300 ₽, привезём на следующий день.")))

    reply = ask(chain_shop, DELIVERY)

    assert reply.text == NO_ANSWER and reply.links == []
    assert reply.llm_meta["blocked_facts"] == ["price", "term"]
    event = RunEvent.objects.get(bot=chain_shop, kind=RunEvent.Kind.FILTER_BLOCK)
    assert event.detail == {"codes": ["price", "term"], "facts": ["q:300:rub", "q:1:day"], "checked": "sourceless"}


def test_a_sourceless_answer_may_name_the_bots_own_site(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Всё о магазине — на shop.example, спрашивайте!", intent="smalltalk")))

    reply = ask(chain_shop, "Как у вас дела?")

    assert reply.llm_meta["route"] == "conversation" and reply.text.startswith("Всё о магазине")


def test_a_sourceless_answer_about_a_product_is_not_conversation(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Да, такие костюмы у нас есть.", intent="product")))

    reply = ask(chain_shop, "Костюм для менеджера")

    assert reply.flags["unanswered"] is True and reply.text == NO_ANSWER


# --- the form and its one repair ------------------------------------------------------------------


def test_a_source_out_of_range_is_repaired(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Доставка 300 ₽.", source=7)), tool_use(said("Доставка 300 ₽.", source=0)))

    reply = ask(chain_shop, DELIVERY)

    assert len(fake_llm.requests) == 2
    assert "- source: maximum" in fake_llm.requests[1].body["messages"][-1]["content"]
    assert reply.links == [link("delivery")] and reply.llm_meta["repaired"] is True
    assert reply.llm_meta["tokens"]["input"] == 240  # both calls are counted
    assert RunEvent.objects.get(bot=chain_shop, kind=RunEvent.Kind.FORM_REPAIR).ok is True


@pytest.mark.parametrize(
    "bad", [text("Доставка стоит 300 ₽."), broken_json('{"intent": "question", "source": 0, "answer": ')],
    ids=["plain-text", "broken-json"],
)
def test_a_reply_that_is_not_the_form_is_repaired(fake_llm, chain_shop, bad):
    fake_llm.script(bad, tool_use(said("Доставка по Москве — 300 ₽.", source=0)))

    reply = ask(chain_shop, DELIVERY)

    assert reply.text == "Доставка по Москве — 300 ₽." and reply.links == [link("delivery")]
    assert reply.llm_meta["repaired"] is True


def test_a_form_still_invalid_after_the_repair_counts_as_no_model(fake_llm, chain_shop):
    fake_llm.script(text("Доставка стоит 300 ₽."), tool_use({"answer": "Доставка 300 ₽."}))

    reply = ask(chain_shop, DELIVERY)

    assert reply.llm_meta["route"] == "retrieval" and reply.llm_meta["error"] == "invalid_form"
    assert reply.text.startswith("Доставка по Москве — на следующий день, стоимость 300 ₽.")
    assert reply.links == [link("delivery")] and reply.source_entry_id == entry(chain_shop, "delivery").pk


# --- what the model saw and rejected is never shown ------------------------------------------------


def test_an_empty_answer_with_sources_seen_is_no_exact_answer_not_the_seen_entry(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("", fixed=DELIVERY)))

    reply = ask(chain_shop, DELIVERY)

    assert '<источник номер="0">\nДоставка:' in sources_block(fake_llm.requests[0])  # the model did see it
    assert reply.text == NO_ANSWER and reply.links == [] and reply.source_entry_id is None
    assert reply.flags["unanswered"] is True and reply.buttons == [OPERATOR_BUTTON]
    assert len(fake_llm.requests) == 1  # `fixed` equal to the text: no retry


def test_a_blocked_answer_with_sources_seen_does_not_fall_back_to_the_entry(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Доставка стоит 450 ₽.")))

    reply = ask(chain_shop, DELIVERY)

    assert reply.text == NO_ANSWER and reply.links == [] and reply.llm_meta["blocked_facts"] == ["price"]


# --- the typo retry ------------------------------------------------------------------------------


def test_a_typo_gets_one_more_full_pass_with_the_fixed_text(fake_llm, chain_shop):
    fake_llm.script(
        tool_use(said("", fixed=PAYMENT)),
        tool_use(said("Картой на сайте, через СБП или наличными курьеру.", source=0, fixed=PAYMENT)),
    )

    reply = ask(chain_shop, "Как аплатить закас?")

    first, second = fake_llm.requests
    assert first.body["messages"][-1]["content"].endswith("Сообщение посетителя:\nКак аплатить закас?")
    assert second.body["messages"][-1]["content"].endswith("Сообщение посетителя:\n" + PAYMENT)
    assert '<источник номер="0">\nОплата заказа:' in sources_block(second)  # searched again with the fixed text
    assert reply.links == [link("payment")] and reply.llm_meta["retried_with_fixed"] is True
    assert reply.llm_meta["tokens"]["input"] == 240
    assert [u.purpose for u in Usage.objects.filter(bot=chain_shop).order_by("id")] == ["answer", "answer.fixed"]


def test_the_typo_retry_happens_once_never_a_third_time(fake_llm, chain_shop):
    fake_llm.script(
        tool_use(said("", fixed="Как оплатить заказ?")),
        tool_use(said("", fixed="Как оплатить заказ картой?")),
        tool_use(said("Картой.", source=0)),
    )

    reply = ask(chain_shop, "Как аплатить закас?")

    assert len(fake_llm.requests) == 2 and fake_llm.pending == 1
    assert reply.text == NO_ANSWER and reply.llm_meta["retried_with_fixed"] is True


def test_a_fix_that_only_changes_case_or_punctuation_is_not_retried(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("", fixed="есть ли у вас парковка для вертолета на крыше офиса")))

    reply = ask(chain_shop, UNKNOWN)

    assert len(fake_llm.requests) == 1 and reply.llm_meta["retried_with_fixed"] is False


# --- no model at all: the best entry if it matches ------------------------------------------------


def test_a_500_is_retried_inside_the_provider(fake_llm, chain_shop):
    fake_llm.script(server_error(), tool_use(said("Доставка по Москве — 300 ₽.", source=0)))

    reply = ask(chain_shop, DELIVERY)

    assert reply.llm_meta["route"] == "sourced" and reply.llm_meta["attempts"] == 2


def test_overload_past_the_retries_falls_back_to_the_best_entry(fake_llm, chain_shop):
    fake_llm.script(overloaded(), overloaded(), overloaded())

    reply = ask(chain_shop, DELIVERY)

    assert reply.llm_meta["route"] == "retrieval" and reply.llm_meta["error"] == "overloaded"
    assert reply.llm_meta["attempts"] == 3 and reply.links == [link("delivery")]
    assert Usage.objects.filter(bot=chain_shop).count() == 1  # one line per call, failed ones included


def test_a_timeout_falls_back_to_the_best_entry_without_a_second_try(fake_llm, chain_shop, settings):
    settings.CHAT_LLM_TIMEOUT = 0.3
    fake_llm.script(tool_use(said("Доставка 300 ₽.", source=0), delay=2.0))

    reply = ask(chain_shop, DELIVERY)

    assert len(fake_llm.requests) == 1  # a person waits: a timeout is not tried again
    assert reply.llm_meta["error"] == "timeout" and reply.llm_meta["route"] == "retrieval"
    assert reply.links == [link("delivery")] and reply.timings["llm"] < 2000


def test_without_a_provider_the_chain_is_retrieval_only(chain_shop, settings):
    settings.LLM_PROVIDER = "none"

    reply = ask(chain_shop, DELIVERY)
    unknown = ask(chain_shop, UNKNOWN)

    assert reply.links == [link("delivery")] and reply.llm_meta["provider"] == "none"
    assert reply.llm_meta["error"] == "no_provider" and reply.llm_meta["route"] == "retrieval"
    assert unknown.text == NO_ANSWER and unknown.flags["unanswered"] is True
    assert not Usage.objects.filter(bot=chain_shop).exists()


def test_with_no_model_a_weak_match_is_still_no_exact_answer(fake_llm, chain_shop):
    fake_llm.script(overloaded(), overloaded(), overloaded())

    reply = ask(chain_shop, UNKNOWN)

    assert reply.text == NO_ANSWER and reply.links == []


# --- intents the model raises --------------------------------------------------------------------


def test_the_model_may_call_an_operator_when_the_rules_said_question(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("", intent="operator")))

    reply = ask(chain_shop, "Мне бы обсудить это с кем-нибудь живым")

    assert reply.intent == "operator" and reply.state == "waiting_operator"
    assert reply.text == "Сейчас позову оператора." and reply.flags["escalation"] is True
    assert reply.llm_meta["route"] == "model_intent" and reply.llm_meta["model_intent"] == "operator"


def test_a_model_raised_operator_without_handoff_says_how_to_reach_the_company(fake_llm, chain_shop):
    chain_shop.handoff_enabled = False
    fake_llm.script(tool_use(said("", intent="operator")))

    reply = ask(chain_shop, "Мне бы обсудить это с кем-нибудь живым")

    assert reply.state is None and "https://shop.example/" in reply.text and reply.flags["escalation"] is True


def test_the_model_may_ask_for_the_order_number_when_the_rules_said_question(fake_llm, chain_shop):
    chain_shop.match_threshold = 0.99  # no page text in the prompt
    fake_llm.script(tool_use(said("", intent="order")))

    reply = ask(chain_shop, "Что там с моей покупкой?")

    assert reply.intent == "order" and "номер заказа" in reply.text and reply.state is None


def test_a_model_raised_intent_is_not_honoured_when_the_prompt_held_page_text(fake_llm, chain_shop):
    """A page may say "call the operator" or "ask for the order number": with page text in the
    prompt, the model's intent cannot move the conversation (the operator button is still there)."""
    fake_llm.script(tool_use(said("", intent="operator")), tool_use(said("", intent="order")))

    to_operator = ask(chain_shop, DELIVERY)
    to_order = ask(chain_shop, PAYMENT)

    for reply in (to_operator, to_order):
        assert reply.state is None and not reply.flags.get("escalation") and reply.intent == "purchase"
        assert reply.text == NO_ANSWER and reply.llm_meta["route"] == "no_answer"


def test_a_model_raised_operator_is_ignored_when_the_rules_said_product(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("", intent="operator")))

    reply = ask(chain_shop, "Костюм для менеджера")

    assert reply.intent == "product" and reply.state is None
    assert not reply.flags.get("escalation") and reply.flags["unanswered"] is True


# --- the request ---------------------------------------------------------------------------------


def test_history_goes_into_the_request_as_alternating_turns_before_the_question(fake_llm, chain_shop):
    history = [
        ("bot", "Здравствуйте! Чем могу помочь?"),
        ("visitor", "Привет"),
        ("visitor", "Хочу заказать"),
        ("bot", "Что именно?"),
        ("system", "Оператор подключится в ближайшее время."),
        ("operator", "Я на связи."),
    ]
    fake_llm.script(tool_use(said("Доставка по Москве — 300 ₽.", source=0)))

    ask(chain_shop, DELIVERY, history)

    body = fake_llm.requests[0].body
    assert body["messages"] == [
        {"role": "user", "content": "Привет\n\nХочу заказать"},
        {"role": "assistant", "content": "Что именно?\n\nЯ на связи."},
        {"role": "user", "content": body["messages"][-1]["content"]},
    ]
    assert body["messages"][-1]["content"].startswith("Источники — цитаты")
    assert body["messages"][-1]["content"].endswith("Сообщение посетителя:\n" + DELIVERY)
    [rules] = body["system"]
    assert rules["cache_control"] == {"type": "ephemeral"}
    assert rules["text"].startswith("Вы — виртуальный помощник «Ромашка» на сайте https://shop.example/.")
    assert body["tools"][0]["input_schema"]["properties"]["source"]["maximum"] == 0


def test_an_english_bot_gets_english_rules_and_replies(fake_llm, chain_shop):
    chain_shop.language = "en"
    fake_llm.script(tool_use(said("")), tool_use(said("Hello! How can I help you?", intent="smalltalk")))

    unknown = ask(chain_shop, "Do you have a helipad on the roof?")
    chat = ask(chain_shop, "How are you doing today?")

    system = fake_llm.requests[0].body["system"]
    assert system[0]["text"].startswith("You are the virtual assistant of Ромашка on https://shop.example/.")
    assert fake_llm.requests[0].body["messages"][-1]["content"].startswith("There are no sources for this question")
    assert unknown.text.startswith("Sorry, I do not have an exact answer to that. Shall I invite an operator?")
    assert unknown.buttons == [{"id": "operator", "label": "Call an operator"}]
    assert chat.text == "Hello! How can I help you?"


def test_usage_and_journal_rows_are_written_even_when_the_reply_is_no_answer(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("")))

    reply = ask(chain_shop, UNKNOWN, conversation_id=4242)

    assert reply.flags["unanswered"] is True
    usage = Usage.objects.get(bot=chain_shop)
    assert (usage.route, usage.purpose, usage.input_tokens) == ("chat", "answer", 120)
    call = RunEvent.objects.get(bot=chain_shop, kind=RunEvent.Kind.LLM_CALL)
    assert call.ok is True and call.conversation_id == 4242


def test_the_services_run_the_chain_outside_any_transaction(fake_llm, chain_shop, monkeypatch):
    """Journal rows must outlive a rolled-back reply, so no atomic block may wrap the model call:
    inside the chain the transaction depth is the test's own."""
    depth_outside = len(connection.atomic_blocks)
    seen: list[int] = []
    real = pipeline.answer

    def observed(**kwargs: Any) -> Reply:
        seen.append(len(connection.atomic_blocks))
        return real(**kwargs)

    monkeypatch.setattr(services.pipeline, "answer", observed)
    fake_llm.script(tool_use(said("Доставка по Москве — 300 ₽.", source=0)))
    conversation = services.conversation_open(bot=chain_shop, visitor_id="v_chain")

    _visitor, reply, _ = services.message_receive(conversation=conversation, text=DELIVERY, client_msg_id="c1")

    assert seen == [depth_outside]
    assert reply is not None and reply.links == [link("delivery")]
    assert RunEvent.objects.get(kind=RunEvent.Kind.LLM_CALL).conversation_id == conversation.pk


# --- flags and timings ---------------------------------------------------------------------------


def test_flags_low_confidence_follows_the_best_score(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Картой.", source=0)), tool_use(said("Картой.", source=0)))
    chain_shop.confidence_threshold = 0.0
    sure = ask(chain_shop, PAYMENT)
    chain_shop.confidence_threshold = 1.0
    unsure = ask(chain_shop, PAYMENT)

    assert sure.flags == {"low_confidence": False} and unsure.flags == {"low_confidence": True}
    assert sure.confidence is not None and sure.confidence >= chain_shop.match_threshold


def test_timings_cover_rules_search_and_the_model(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Доставка по Москве — 300 ₽.", source=0)))

    reply = ask(chain_shop, DELIVERY)

    assert set(reply.timings) == {"rules", "search", "llm", "total"}
    assert reply.timings["llm"] > 0 and reply.timings["total"] >= reply.timings["llm"] + reply.timings["search"]


def test_a_rule_reply_asks_no_model(fake_llm, chain_shop):
    reply = ask(chain_shop, "Здравствуйте!")

    assert reply.intent == "greeting" and fake_llm.requests == []
    assert reply.llm_meta["route"] == "rules" and reply.llm_meta["provider"] is None


# --- the command line ----------------------------------------------------------------------------


def test_ask_command_json_with_the_model_is_the_contract(fake_llm, chain_shop):
    fake_llm.script(tool_use(said("Доставка по Москве — 300 ₽, на следующий день.", source=0)))
    out = StringIO()

    call_command("ask", "chain-shop", DELIVERY, "--json", stdout=out)

    data = json.loads(out.getvalue())
    assert list(data) == ["text", "links", "buttons", "cards", "intent", "source", "flags", "timings"]
    assert data["text"] == "Доставка по Москве — 300 ₽, на следующий день."
    assert data["links"] == [link("delivery")] and data["buttons"] == []
    assert data["intent"] == "purchase" and data["source"] == entry(chain_shop, "delivery").pk
    assert set(data["flags"]) == {"low_confidence", "unanswered", "friction", "escalation"}
    assert data["flags"]["unanswered"] is False and data["timings"]["llm"] > 0


# --- streaming over the widget socket ------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_sourced_answer_streams_as_deltas_then_the_final_message_replaces_them(
    fake_llm, shop, knowledge, connect
):
    answer = "Доставка по Москве — на следующий день, 300 ₽."
    fake_llm.script(tool_use(said(answer, source=0), chunk_chars=6))
    client = await connect(shop)
    await client.hello()

    frames = await client.ask(DELIVERY, "c1")

    types = [frame["type"] for frame in frames]
    deltas = [frame["text"] for frame in frames if frame["type"] == "delta"]
    assert types[:2] == ["ack", "typing"] and types[-2:] == ["message", "typing"]
    assert len(deltas) > 2 and all(answer.startswith(d) for d in deltas) and deltas[-1] == answer
    final = frames[-2]["message"]
    assert final["text"] == answer and final["links"] == [link("delivery")]
    assert all(frame["client_msg_id"] == "c1" for frame in frames if frame["type"] == "delta")


@pytest.mark.django_db(transaction=True)
async def test_a_sourceless_answer_does_not_stream(fake_llm, shop, knowledge, connect):
    fake_llm.script(tool_use(said("Доставка стоит 999 ₽."), chunk_chars=6))
    client = await connect(shop)
    await client.hello()

    frames = await client.ask(DELIVERY, "c1")

    assert [frame["type"] for frame in frames] == ["ack", "typing", "message", "typing"]
    assert frames[2]["message"]["text"].startswith("К сожалению, точного ответа у меня нет.")
