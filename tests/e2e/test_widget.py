"""The widget in a real browser against the real app (uvicorn on the test database): the parts of
the protocol a visitor rarely meets on cue, each brought about the way it happens in production.

- A lost ack, a dropped socket: tests/e2e/netfault.py between Chromium and the app, dropping the
  connections or losing what the server sends on them.
- Rate limits: the real limits, on a second app of the same bot whose message limit is one per
  visitor per WINDOW seconds.
- `server_error`: PostgreSQL refusing to store the visitor's message (a trigger, switched on for
  one bot), which the consumer meets as an unexpected database error.
- Refusals: a shop whose origin the bot does not allow, a snippet whose key no bot has.
- Streaming: a bot whose own model settings name the fake Messages API (tests/fakes), streaming slowly.
- An operator's reply and a closed conversation: the inbox's own services, committed, published
  through the channel layer to the widget's socket.

Also: isolation from the shop's CSS, the interface language, Shift+Enter. What went over the
sockets is read from Chromium's own record (widget.Frames), what the server kept from the database.
A visitor's everyday conversation is test_widget_live.py."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection, connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from answers import replies
from bots.models import Bot
from chat.models import Conversation, Message
from tests.chat.conftest import DELIVERY_QUESTION, KNOWLEDGE
from tests.e2e.conftest import ShopFactory, committed, serving_app, snippet
from tests.e2e.netfault import FaultyLink
from tests.e2e.widget import Frames, Widget, wait_for
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import FakeLLMServer, tool_use

pytestmark = pytest.mark.django_db

RETURNS = "Можно ли вернуть товар?"
WARRANTY = "Какая гарантия на технику?"
GIFT_CARDS = "Есть ли у вас подарочные карты?"
# What the bot knows: (key, title, text, link). The warranty's link is a path on the shop's own site,
# as an owner may give one; the gift cards' is replaced in the database by a script link below.
ENTRIES = [
    ("returns", "Возврат товара", "Вернуть товар можно в течение 14 дней после покупки, если сохранены упаковка "
     "и чек. Деньги вернём на карту в течение 10 дней.", "{shop}/returns/"),
    ("warranty", "Гарантия", "Гарантия на всю технику — 12 месяцев со дня покупки. Ремонт по гарантии делает "
     "сервисный центр производителя.", "/warranty/"),
    ("gift-cards", "Подарочные карты", "Подарочные карты на 1000, 3000 и 5000 ₽ продаются в магазине и на сайте.",
     "{shop}/gift-cards/"),
]
# No writer of ours stores such a link (knowledge.services.entry_upsert checks every one); an older row
# or a hand-edited database could still hold it, and the widget must not make it clickable.
SCRIPT_LINK = "javascript:window.__xss=1"
# Every fact of it is the delivery entry's: the checked words stream to the draft as they come.
STREAMED = "Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ доставка бесплатная."
WINDOW = 3  # seconds: the limited app's window for its one message per visitor
TIMEOUT = 60000  # ms: a first answer of a process loads the embedding model; two test workers share the cores
# A fault in the database itself: while a bot is listed, storing its visitor's message fails.
REFUSALS = [
    "CREATE TABLE IF NOT EXISTS e2e_refused_messages (bot_id bigint PRIMARY KEY)",
    """CREATE OR REPLACE FUNCTION e2e_refuse_message() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.role = 'visitor' AND EXISTS (SELECT 1 FROM e2e_refused_messages WHERE bot_id = NEW.bot_id) THEN
        RAISE EXCEPTION 'the visitor message was refused (test fault)';
      END IF;
      RETURN NEW;
    END $$""",
    "DROP TRIGGER IF EXISTS e2e_refuse_message ON chat_message",
    "CREATE TRIGGER e2e_refuse_message BEFORE INSERT ON chat_message FOR EACH ROW "
    "EXECUTE FUNCTION e2e_refuse_message()",
]
REFUSALS_GONE = [
    "DROP TRIGGER IF EXISTS e2e_refuse_message ON chat_message",
    "DROP FUNCTION IF EXISTS e2e_refuse_message()",
    "DROP TABLE IF EXISTS e2e_refused_messages",
]


@dataclass
class Shops:
    """The demo shop several times over, one origin each, and the bots behind them."""

    bot: Bot  # the shop's bot: retrieval only, the entries above
    shop: str  # the widget straight from the app
    proxied: str  # the widget through the faulty link
    english: str  # data-lang="en", data-title="TechnoHome"
    english_page: str  # <html lang="en-GB">, no data-lang
    english_page_ru: str  # <html lang="en-GB">, data-lang="ru"
    foreign: str  # the bot's widget on an origin the bot does not allow
    keyless: str  # a widget key no bot has
    model_shop: str  # the widget of a bot whose own settings name the model
    operator: Any  # «Анна», an operator of the shop's bot


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def widget_app(django_db_setup: None, django_db_blocker: DjangoDbBlocker, model: FakeLLMServer) -> Iterator[str]:
    """The real app, retrieval only unless a bot's own settings name the model (the fake Messages API)."""
    with serving_app(django_db_blocker, ANTHROPIC_API_KEY=FAKE_ANTHROPIC_KEY, ANTHROPIC_BASE_URL=model.url,
                     LLM_MAX_RETRIES="0") as url:
        yield url


@pytest.fixture(scope="module")
def link(widget_app: str) -> Iterator[FaultyLink]:
    faulty = FaultyLink(widget_app)
    yield faulty
    faulty.stop()


def learn(bot: Bot, entries: list[tuple[str, str, str, str]], shop: str) -> dict[str, int]:
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    ids = {}
    for key, title, text, url in entries:
        entry, _ = entry_upsert(bot=bot, source=None, draft=EntryDraft(
            key=key, title=title, text=text, url=url.format(shop=shop), kind=Entry.Kind.QA))
        ids[key] = entry.pk
    embed_pending(bot_id=bot.pk)
    return ids


def refusals_install() -> None:
    """PostgreSQL refuses every visitor message of a bot listed in e2e_refused_messages (none at first)."""
    assert Message._meta.db_table == "chat_message"
    with connection.cursor() as cursor:
        for statement in REFUSALS:
            cursor.execute(statement)


def refusals_remove() -> None:
    with connection.cursor() as cursor:
        for statement in REFUSALS_GONE:
            cursor.execute(statement)


@contextmanager
def visitor_messages_refused(bot: Bot) -> Iterator[None]:
    """While inside, the database refuses to store the bot's visitor messages."""

    def switch(on: bool) -> None:
        with connection.cursor() as cursor:
            if on:
                cursor.execute("INSERT INTO e2e_refused_messages (bot_id) VALUES (%s)", [bot.pk])
            else:
                cursor.execute("DELETE FROM e2e_refused_messages WHERE bot_id = %s", [bot.pk])

    committed(switch, True)
    try:
        yield
    finally:
        committed(switch, False)


@pytest.fixture(scope="module")
def shops(widget_app: str, link: FaultyLink, shop_factory: ShopFactory,
          django_db_blocker: DjangoDbBlocker) -> Iterator[Shops]:
    """Committed outside any test transaction, so the app sees it; each test is a new browser
    profile, hence a new visitor and conversation."""
    from django.contrib.auth import get_user_model

    from bots.models import Membership
    from knowledge.models import Entry
    from llm.models import BotLLMSettings

    english_page = '<script>document.documentElement.lang = "en-GB";</script>'
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-widget")
        key = bot.public_key
        model_bot = Bot.objects.create(name="ТехноДом", slug="e2e-widget-model")
        found = Shops(
            bot=bot,
            shop=shop_factory(snippet(widget_app, key)),
            proxied=shop_factory(snippet(link.url, key)),
            english=shop_factory(snippet(widget_app, key, lang="en", title="TechnoHome")),
            english_page=shop_factory(english_page + snippet(widget_app, key)),
            english_page_ru=shop_factory(english_page + snippet(widget_app, key, lang="ru")),
            foreign=shop_factory(snippet(widget_app, key)),
            keyless=shop_factory(snippet(widget_app, "e2e-no-such-key")),
            model_shop=shop_factory(snippet(widget_app, model_bot.public_key)),
            operator=get_user_model().objects.create_user(
                username="anna@e2e-widget.example", password="e2e-anna-1", first_name="Анна"),
        )
        bot.site_url = f"{found.shop}/"
        bot.allowed_origins = [found.shop, found.proxied, found.english, found.english_page, found.english_page_ru]
        bot.save(update_fields=["site_url", "allowed_origins"])
        Membership.objects.create(bot=bot, user=found.operator, role=Membership.Role.OPERATOR)
        ids = learn(bot, ENTRIES, found.shop)
        Entry.objects.filter(pk=ids["gift-cards"]).update(url=SCRIPT_LINK)
        model_bot.site_url, model_bot.allowed_origins = f"{found.model_shop}/", [found.model_shop]
        model_bot.save(update_fields=["site_url", "allowed_origins"])
        BotLLMSettings.objects.create(bot=model_bot, provider=BotLLMSettings.Provider.ANTHROPIC)
        learn(model_bot, KNOWLEDGE, found.model_shop)
        refusals_install()
    yield found
    with django_db_blocker.unblock():
        refusals_remove()
        bot.delete()
        model_bot.delete()
        found.operator.delete()
        connections.close_all()  # see wait_for_app_sessions_to_end in conftest.py


@pytest.fixture(scope="module")
def limited_shop(shops: Shops, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """The shop's bot behind a second app whose limit is one message per visitor per WINDOW s."""
    with serving_app(django_db_blocker, CHAT_RATE_VISITOR="1", CHAT_RATE_WINDOW=str(WINDOW),
                     PGAPPNAME="spravka-e2e-app-limited") as url:
        origin = shop_factory(snippet(url, shops.bot.public_key))
        with django_db_blocker.unblock():
            shops.bot.allowed_origins = [*shops.bot.allowed_origins, origin]
            shops.bot.save(update_fields=["allowed_origins"])
        yield origin


def visitor_messages(frames: Frames) -> list[Message]:
    """The visitor's messages as the server stored them (the visitor named by the widget's hello)."""
    visitor = frames.sent("hello")[0]["visitor_id"]
    return list(Message.objects.filter(conversation__visitor_id=visitor, role=Message.Role.VISITOR).order_by("pk"))


def conversations(frames: Frames) -> list[Conversation]:
    visitor = frames.sent("hello")[0]["visitor_id"]
    return list(Conversation.objects.filter(visitor_id=visitor).order_by("pk"))


def test_it_talks_to_the_server_the_script_came_from_not_the_shop(
    page: Page, frames: Frames, shops: Shops, widget_app: str
):
    page.goto(f"{shops.shop}/returns/")
    widget = Widget(page)
    widget.open()
    frames.wait(lambda: frames.received("welcome"))
    app_host = widget_app.removeprefix("http://")
    assert [s.url for s in frames.sockets] == [f"ws://{app_host}/ws/chat/{shops.bot.public_key}/"]
    assert app_host not in shops.shop
    hello = frames.sent("hello")[0]
    assert hello["visitor_id"].startswith("v_")
    assert hello["last_seen_id"] is None
    assert conversations(frames) == []  # opening the widget starts nothing
    expect(widget.input).to_be_focused()
    widget.ask("Здравствуйте!")
    frames.wait(lambda: frames.received("ack"))
    assert [c.bot_id for c in conversations(frames)] == [shops.bot.pk]  # the app started it with the message


def test_a_link_that_is_not_http_stays_plain_text(page: Page, shops: Shops):
    """A path on the shop's site (an owner may give one) and a script link (no writer of ours stores
    one; an older row could hold it): both shown as text, neither clickable."""
    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    widget.ask(WARRANTY)
    source = widget.messages("bot").nth(0).locator(".src")
    expect(source).to_have_text("Источник: Гарантия", timeout=TIMEOUT)
    expect(source.locator("a")).to_have_count(0)

    widget.ask(GIFT_CARDS)
    source = widget.messages("bot").nth(1).locator(".src")
    expect(source).to_have_text("Источник: Подарочные карты", timeout=TIMEOUT)
    expect(source.locator("a")).to_have_count(0)
    stored = Message.objects.filter(role=Message.Role.BOT, links__0__url=SCRIPT_LINK)
    assert stored.exists()  # the server did send the script link
    assert page.evaluate("() => window.__xss") is None


def said(answer: str, *, source: int) -> dict[str, Any]:
    return {"intent": "question", "source": source, "answer": answer, "product_query": "", "fixed": ""}


def test_a_streamed_draft_gives_way_to_the_final_message(page: Page, frames: Frames, shops: Shops,
                                                          model: FakeLLMServer):
    model.script(tool_use(said(STREAMED, source=0), chunk_chars=4, tokens_per_second=25))
    page.goto(shops.model_shop)
    widget = Widget(page)
    widget.open()
    widget.ask(DELIVERY_QUESTION)
    draft = widget.log.locator(".draft")
    expect(draft).to_be_visible(timeout=TIMEOUT)  # the answer so far, while the model writes the rest
    expect(draft).to_contain_text("Доставка по Москве")
    expect(widget.last("bot").locator(".bubble")).to_have_text(STREAMED, timeout=TIMEOUT)
    expect(draft).to_have_count(0)
    expect(page.locator("spravka-widget .typing")).to_be_hidden()
    deltas = [f["text"] for f in frames.received("delta")]
    assert len(deltas) > 1 and all(STREAMED.startswith(d) for d in deltas), deltas
    assert len(model.requests) == 1


def test_thumbs_are_toggle_buttons(page: Page, frames: Frames, shops: Shops):
    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    widget.ask(RETURNS)
    answer = widget.last("bot")
    up = answer.get_by_role("button", name="Ответ помог")
    down = answer.get_by_role("button", name="Ответ не помог")
    expect(up).to_have_attribute("aria-pressed", "false", timeout=TIMEOUT)
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    expect(up).to_have_attribute("aria-pressed", "false")
    down.click()  # pressing it again takes the rating back
    expect(down).to_have_attribute("aria-pressed", "false")
    frames.wait(lambda: len(frames.received("rated")) == 3)
    assert [f["rating"] for f in frames.sent("rate")] == [1, -1, 0]
    assert [f["rating"] for f in frames.received("rated")] == [1, -1, 0]
    rated = frames.sent("rate")[0]["message_id"]
    assert Message.objects.get(pk=rated).rating == 0  # what the server kept


def test_a_message_whose_ack_was_lost_is_resent_with_the_same_id(
    page: Page, frames: Frames, shops: Shops, link: FaultyLink
):
    page.goto(shops.proxied)
    widget = Widget(page)
    widget.open()
    widget.ask(RETURNS)
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=TIMEOUT)
    [conversation] = conversations(frames)
    seen = Message.objects.filter(conversation=conversation).latest("pk").pk

    with link.replies_lost():  # the question reaches the server; its ack and answer never come back
        widget.ask(WARRANTY)
        wait_for(lambda: Message.objects.filter(conversation=conversation, role=Message.Role.BOT).count() == 2,
                 timeout=TIMEOUT / 1000)
        expect(widget.last("visitor")).to_have_class("msg visitor pending")
    # ... and the connection drops: the widget reconnects and sends the question again

    expect(widget.last("bot").locator(".src")).to_have_text("Источник: Гарантия", timeout=TIMEOUT)
    first, resent = frames.sent("message")[1:]
    assert resent["client_msg_id"] == first["client_msg_id"]
    assert frames.sent("hello")[-1]["last_seen_id"] == seen
    assert len(visitor_messages(frames)) == 2  # stored once
    expect(widget.messages("visitor")).to_have_count(2)
    expect(widget.log.locator(".pending")).to_have_count(0)


def next_window_start(window: int, after: float) -> None:
    """Wait until a new rate window has begun after `after` (time.time()), early in it."""
    while int(time.time() // window) <= int(after // window) or time.time() % window > 0.3:
        time.sleep(0.01)


def test_rate_limited_says_how_long_to_wait_and_resends_later(page: Page, frames: Frames, limited_shop: str):
    page.goto(limited_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Здравствуйте!")  # the rules answer it; the app is warm for what follows
    expect(widget.messages("bot")).to_have_count(1, timeout=TIMEOUT)
    next_window_start(WINDOW, after=time.time())
    widget.ask("Спасибо!")  # the visitor's one message of this window
    widget.ask(RETURNS)  # one too many: refused, and sent again once the window has passed
    frames.wait(lambda: frames.received("error"), timeout=TIMEOUT / 1000)
    [limited] = frames.received("error")
    assert limited["code"] == "rate_limited" and 1 <= limited["retry_after"] <= WINDOW
    expect(widget.notice).to_have_text(f"Слишком много сообщений, подождите {limited['retry_after']} с")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=TIMEOUT)
    asked = [f for f in frames.sent("message") if f["text"] == RETURNS]
    assert len(asked) == 2 and asked[0]["client_msg_id"] == asked[1]["client_msg_id"] == limited["client_msg_id"]
    assert [m.text for m in visitor_messages(frames)].count(RETURNS) == 1


def test_a_server_error_is_retried_with_the_same_id(page: Page, frames: Frames, shops: Shops):
    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    with visitor_messages_refused(shops.bot):
        widget.ask(RETURNS)
        frames.wait(lambda: frames.received("error"), timeout=TIMEOUT / 1000)
    [error] = frames.received("error")
    assert error["code"] == "server_error" and error["client_msg_id"] == frames.sent("message")[0]["client_msg_id"]
    expect(widget.notice).to_have_text(replies.TEXTS["ru"]["error_server_error"])
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=TIMEOUT)  # resent 3 s later
    first, again = frames.sent("message")
    assert first["client_msg_id"] == again["client_msg_id"]
    assert [m.client_msg_id for m in visitor_messages(frames)] == [first["client_msg_id"]]


def test_a_refused_message_goes_back_into_the_input(page: Page, frames: Frames, shops: Shops):
    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    expect(widget.input).to_have_attribute("maxlength", "2000")  # typing stops at the server's limit
    too_long = "а" * 2001  # set by a script, which maxlength does not stop
    widget.input.evaluate("(el, text) => { el.value = text; }", too_long)
    widget.input.press("Enter")
    expect(widget.notice).to_have_text(replies.TEXTS["ru"]["error_too_long"].format(limit=2000))
    expect(widget.input).to_have_value(too_long)
    expect(widget.messages("visitor")).to_have_count(0)
    assert [f["code"] for f in frames.received("error")] == ["too_long"]
    assert visitor_messages(frames) == []


@pytest.mark.parametrize("refusal", ["origin_refused", "unknown_bot"])
def test_a_refused_socket_is_not_retried(page: Page, frames: Frames, shops: Shops, refusal: str):
    page.goto(shops.foreign if refusal == "origin_refused" else shops.keyless)
    widget = Widget(page)
    widget.open()
    expect(widget.status).to_have_text(replies.TEXTS["ru"][f"error_{refusal}"])
    assert [f["code"] for f in frames.received("error")] == [refusal]
    page.wait_for_timeout(2500)  # the first reconnect would come after 0.5-1 s
    assert len(frames.sockets) == 1


def test_a_returning_visitor_sees_an_operator_reply_arrive_while_the_panel_is_closed(
    page: Page, frames: Frames, shops: Shops
):
    from chat.handoff import operator_message_send

    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    widget.ask(RETURNS)
    expect(widget.messages("bot")).to_have_count(1, timeout=TIMEOUT)
    widget.input.press("Escape")
    page.goto(f"{shops.shop}/delivery/")  # the panel stays closed, the socket reopens quietly
    frames.wait(lambda: len(frames.received("welcome")) == 2)
    expect(widget.panel).to_be_hidden()

    [conversation] = conversations(frames)
    committed(operator_message_send, conversation_id=conversation.pk, operator=shops.operator,
              text="Здравствуйте, я Анна, оператор магазина.", client_msg_id="e2e-operator-1")
    expect(page.locator("spravka-widget .badge")).to_be_visible()
    expect(widget.launcher).to_have_attribute("aria-label", "Открыть чат (новое сообщение)")
    widget.open()
    expect(widget.last("operator")).to_have_text("Анна:Здравствуйте, я Анна, оператор магазина.")
    expect(widget.last("system")).to_have_text(
        "Сообщение системы:" + replies.TEXTS["ru"]["operator_joined"].format(name="Анна"))
    expect(page.locator("spravka-widget .badge")).to_be_hidden()


def test_a_new_conversation_replaces_the_old_transcript(page: Page, frames: Frames, shops: Shops, link: FaultyLink):
    from chat.services import conversation_close

    page.goto(shops.proxied)
    widget = Widget(page)
    widget.open()
    widget.ask(RETURNS)
    expect(widget.messages("bot")).to_have_count(1, timeout=TIMEOUT)
    [old] = conversations(frames)
    committed(lambda: conversation_close(conversation=Conversation.objects.get(pk=old.pk)))
    expect(widget.status).to_have_text("Разговор завершён.")
    link.cut()  # the widget reconnects: its hello gets the visitor's new conversation
    expect(widget.messages("bot")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("spravka-widget .empty")).to_be_visible()
    first, again = frames.received("welcome")
    # Opening the widget starts nothing: the first message starts the conversation, then a new one.
    assert first["conversation_id"] is None and again["conversation_id"] is None
    assert [c.pk for c in conversations(frames)] == [old.pk]
    widget.ask(RETURNS)
    expect(widget.messages("bot")).to_have_count(1, timeout=TIMEOUT)
    new = [c.pk for c in conversations(frames)]
    assert len(new) == 2 and new[0] == old.pk and frames.received("ack")[-1]["conversation_id"] == new[1]


def test_shift_enter_makes_a_new_line_and_enter_sends(page: Page, frames: Frames, shops: Shops):
    page.goto(shops.shop)
    widget = Widget(page)
    widget.open()
    widget.input.type("Первая строка")
    widget.input.press("Shift+Enter")
    widget.input.type("вторая строка")
    widget.input.press("Enter")
    frames.wait(lambda: frames.received("ack"))
    assert frames.sent("message")[0]["text"] == "Первая строка\nвторая строка"
    expect(widget.input).to_have_value("")
    assert [m.text for m in visitor_messages(frames)] == ["Первая строка\nвторая строка"]


def test_the_shops_css_does_not_reach_inside(page: Page, shops: Shops):
    page.goto(shops.shop)
    page.add_style_tag(content=(
        "* { font-size: 40px !important; color: red !important; }"
        " button, div, textarea { display: none !important; }"
    ))
    widget = Widget(page)
    widget.open()
    expect(widget.launcher).to_be_visible()
    box = widget.launcher.bounding_box()
    assert box is not None and box["width"] == 60
    assert widget.input.evaluate("el => getComputedStyle(el).fontSize") == "16px"
    assert widget.panel.evaluate("el => getComputedStyle(el).color") == "rgb(31, 41, 51)"


def test_english_ui_with_data_lang(page: Page, shops: Shops):
    page.goto(shops.english)
    widget = Widget(page)
    expect(widget.launcher).to_have_attribute("aria-label", "Open chat")
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    expect(page.locator("spravka-widget h2")).to_have_text("TechnoHome")
    expect(widget.launcher).to_have_attribute("aria-label", "Close chat")
    expect(widget.status).to_be_hidden()  # connected: the app allows this origin too


def test_without_data_lang_the_widget_follows_the_pages_language(page: Page, shops: Shops):
    page.goto(shops.english_page)
    widget = Widget(page)
    expect(widget.launcher).to_have_attribute("aria-label", "Open chat")
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")

    page.goto(shops.english_page_ru)  # the tag wins
    expect(Widget(page).launcher).to_have_attribute("aria-label", "Открыть чат")


def test_a_bot_that_keeps_its_language_keeps_the_labels_in_it(page: Page, shops: Shops):
    """«Отвечать на языке посетителя» off: the replies stay in the bot's Russian, and so do the labels,
    whatever the tag says or the visitor writes (welcome.languages "fixed"), the next page too; on
    again, the labels follow the visitor's English once more."""

    def follow(on: bool) -> None:
        committed(Bot.objects.filter(pk=shops.bot.pk).update, answers_in_visitor_language=on)

    follow(False)
    try:
        page.goto(shops.english)  # data-lang="en"
        widget = Widget(page)
        expect(widget.launcher).to_have_attribute("aria-label", "Open chat")  # the app has not spoken yet
        widget.open()
        expect(widget.input).to_have_attribute("placeholder", "Напишите вопрос…")
        expect(widget.launcher).to_have_attribute("aria-label", "Закрыть чат")
        widget.ask("How long is the warranty?")
        expect(widget.last("bot").locator(".bubble")).to_have_text(re.compile("[а-яё]{3}", re.I), timeout=30000)
        expect(widget.last("visitor").locator(".sr")).to_have_text("Вы:")
        expect(widget.input).to_have_attribute("placeholder", "Напишите вопрос…")

        page.reload()  # the panel opens again by itself, still in the bot's language
        expect(Widget(page).launcher).to_have_attribute("aria-label", "Закрыть чат")
        expect(widget.input).to_have_attribute("placeholder", "Напишите вопрос…")
    finally:
        follow(True)
    page.reload()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")  # the visitor wrote English
    expect(widget.last("visitor").locator(".sr")).to_have_text("You:")
