"""The widget in a real browser against a protocol fake: the parts of the protocol a real server
rarely shows on cue (a lost ack, a dropped socket, rate limits, refusals), isolation from the
shop's CSS, the English UI and the phone layout. The real chain is in test_widget_live.py."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import PHONE, ShopFactory, snippet
from tests.e2e.fake_chat import REFUSALS, FakeChat
from tests.e2e.widget import NO_ANSWER, Widget, wait_for


def test_it_talks_to_the_server_the_script_came_from_not_the_shop(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(f"{fake_shop}/returns/")
    widget = Widget(page)
    widget.open()
    wait_for(lambda: fake_chat.sent("hello"))
    hello = fake_chat.sent("hello")[0]
    assert hello["visitor_id"].startswith("v_")
    assert hello["last_seen_id"] is None
    expect(widget.input).to_be_focused()


def test_an_answer_shows_its_source_link_opening_in_a_new_tab(page: Page, fake_shop: str):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    link = widget.last("bot").locator(".src a")
    expect(link).to_have_text("Возврат товара")
    expect(link).to_have_attribute("href", f"{fake_shop}/returns/")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener")
    expect(widget.last("bot").locator(".src")).to_contain_text("Источник: Возврат товара")


def test_a_link_that_is_not_http_stays_plain_text(page: Page, fake_shop: str):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Дайте ссылку")
    source = widget.last("bot").locator(".src")
    expect(source).to_have_text("Источник: Опасная")
    expect(source.locator("a")).to_have_count(0)


def test_a_streamed_draft_gives_way_to_the_final_message(page: Page, fake_shop: str):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Продаёте ли вы автомобили?")
    expect(widget.last("bot").locator(".bubble")).to_contain_text(NO_ANSWER)
    expect(widget.log.locator(".draft")).to_have_count(0)
    expect(page.locator("spravka-widget .typing")).to_be_hidden()


def test_the_operator_button_sends_the_button_frame(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Продаёте ли вы автомобили?")
    button = widget.last("bot").get_by_role("button", name="Позвать оператора")
    button.click()
    expect(widget.last("system")).to_contain_text("Оператор подключится")
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.")
    expect(button).to_be_disabled()
    assert fake_chat.sent("button") == [{"type": "button", "id": "operator"}]


def test_thumbs_are_toggle_buttons(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    answer = widget.last("bot")
    up = answer.get_by_role("button", name="Ответ помог")
    down = answer.get_by_role("button", name="Ответ не помог")
    expect(up).to_have_attribute("aria-pressed", "false")
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    expect(up).to_have_attribute("aria-pressed", "false")
    down.click()  # pressing it again takes the rating back
    expect(down).to_have_attribute("aria-pressed", "false")
    wait_for(lambda: len(fake_chat.sent("rate")) == 3)
    assert [f["rating"] for f in fake_chat.sent("rate")] == [1, -1, 0]


def test_a_message_whose_ack_was_lost_is_resent_with_the_same_id(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible()
    seen = max(m["id"] for m in fake_chat.messages)

    fake_chat.hold_acks = True
    widget.ask("Продаёте ли вы автомобили?")
    wait_for(lambda: len(fake_chat.sent("message")) == 2)
    expect(widget.last("visitor")).to_have_class("msg visitor pending")
    fake_chat.hold_acks = False
    fake_chat.drop_connections()

    expect(widget.last("bot").locator(".bubble")).to_contain_text(NO_ANSWER, timeout=15000)
    first, resent = fake_chat.sent("message")[1:]
    assert resent["client_msg_id"] == first["client_msg_id"]
    assert fake_chat.sent("hello")[-1]["last_seen_id"] == seen
    assert len([m for m in fake_chat.messages if m["role"] == "visitor"]) == 2
    expect(widget.messages("visitor")).to_have_count(2)
    expect(widget.log.locator(".pending")).to_have_count(0)


def test_rate_limited_says_how_long_to_wait_and_resends_later(page: Page, fake_shop: str, fake_chat: FakeChat):
    fake_chat.rate_limit_next = 1
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.notice).to_have_text("Слишком много сообщений, подождите 1 с")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=10000)
    frames = fake_chat.sent("message")
    assert len(frames) == 2 and frames[0]["client_msg_id"] == frames[1]["client_msg_id"]


def test_a_server_error_is_retried_with_the_same_id(page: Page, fake_shop: str, fake_chat: FakeChat):
    fake_chat.fail_next = 1
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.notice).to_contain_text("Что-то сломалось на нашей стороне")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=10000)
    first, again = fake_chat.sent("message")
    assert first["client_msg_id"] == again["client_msg_id"]


def test_a_refused_message_goes_back_into_the_input(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    expect(widget.input).to_have_attribute("maxlength", "2000")  # typing stops at the server's limit
    too_long = "а" * 2001  # set by a script, which maxlength does not stop
    widget.input.evaluate("(el, text) => { el.value = text; }", too_long)
    widget.input.press("Enter")
    expect(widget.notice).to_have_text("Сообщение слишком длинное: не больше 2000 символов.")
    expect(widget.input).to_have_value(too_long)
    expect(widget.messages("visitor")).to_have_count(0)


@pytest.mark.parametrize("refusal", ["origin_refused", "unknown_bot"])
def test_a_refused_socket_is_not_retried(page: Page, fake_shop: str, fake_chat: FakeChat, refusal: str):
    fake_chat.refuse = refusal
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    expect(widget.status).to_have_text(REFUSALS[refusal])
    time.sleep(2.5)  # the first reconnect would come after 0.5-1 s
    assert fake_chat.connections == 1


def test_history_comes_back_after_a_reload(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible()
    visitor = fake_chat.sent("hello")[0]["visitor_id"]

    page.reload()
    widget.open()
    expect(widget.messages("visitor")).to_have_text(["Вы:Можно ли вернуть товар?"])
    expect(widget.last("bot").locator(".src a")).to_have_text("Возврат товара")
    assert fake_chat.sent("hello")[-1] == {
        "type": "hello", "visitor_id": visitor, "last_seen_id": None, "page_url": f"{fake_shop}/",
    }


def test_a_returning_visitor_sees_an_operator_reply_arrive_while_the_panel_is_closed(
    page: Page, fake_shop: str, fake_chat: FakeChat
):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.messages("bot")).to_have_count(1)
    widget.input.press("Escape")
    page.goto(f"{fake_shop}/delivery/")  # the panel stays closed, the socket reopens quietly
    wait_for(lambda: fake_chat.connections == 2)
    expect(widget.panel).to_be_hidden()

    fake_chat.push("operator", "Здравствуйте, я Анна, оператор магазина.")
    expect(page.locator("spravka-widget .badge")).to_be_visible()
    expect(widget.launcher).to_have_attribute("aria-label", "Открыть чат (новое сообщение)")
    widget.open()
    expect(widget.last("operator")).to_have_text("Оператор:Здравствуйте, я Анна, оператор магазина.")
    expect(page.locator("spravka-widget .badge")).to_be_hidden()


def test_a_new_conversation_replaces_the_old_transcript(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.messages("bot")).to_have_count(1)
    fake_chat.conversation_id = 2
    fake_chat.drop_connections()
    expect(widget.messages("bot")).to_have_count(0, timeout=10000)
    expect(page.locator("spravka-widget .empty")).to_be_visible()


def test_shift_enter_makes_a_new_line_and_enter_sends(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    widget.input.type("Первая строка")
    widget.input.press("Shift+Enter")
    widget.input.type("вторая строка")
    widget.input.press("Enter")
    wait_for(lambda: fake_chat.sent("message"))
    assert fake_chat.sent("message")[0]["text"] == "Первая строка\nвторая строка"
    expect(widget.input).to_have_value("")


def test_the_shops_css_does_not_reach_inside(page: Page, fake_shop: str):
    page.goto(fake_shop)
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


def test_english_ui_with_data_lang(page: Page, fake_chat: FakeChat, shop_factory: ShopFactory):
    shop = shop_factory(snippet(fake_chat.url, "test-key", lang="en", title="TechnoHome"))
    page.goto(shop)
    widget = Widget(page)
    expect(widget.launcher).to_have_attribute("aria-label", "Open chat")
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")
    expect(page.locator("spravka-widget h2")).to_have_text("TechnoHome")
    expect(widget.launcher).to_have_attribute("aria-label", "Close chat")


def test_without_data_lang_the_widget_follows_the_pages_language(
    page: Page, fake_chat: FakeChat, shop_factory: ShopFactory
):
    english_page = '<script>document.documentElement.lang = "en-GB";</script>'
    page.goto(shop_factory(english_page + snippet(fake_chat.url, "test-key")))
    widget = Widget(page)
    expect(widget.launcher).to_have_attribute("aria-label", "Open chat")
    widget.open()
    expect(widget.input).to_have_attribute("placeholder", "Type a question…")

    page.goto(shop_factory(english_page + snippet(fake_chat.url, "test-key", lang="ru")))  # the tag wins
    expect(Widget(page).launcher).to_have_attribute("aria-label", "Открыть чат")


def test_on_a_phone_the_panel_fills_the_screen(page: Page, fake_shop: str):
    page.set_viewport_size(PHONE)
    page.goto(fake_shop)
    widget = Widget(page)
    widget.open()
    assert widget.panel.bounding_box() == {"x": 0, "y": 0, "width": PHONE["width"], "height": PHONE["height"]}
    expect(widget.launcher).to_be_hidden()  # covered by the panel: closing is the header's button
    page.get_by_role("button", name="Закрыть чат").last.click()
    expect(widget.panel).to_be_hidden()
    expect(widget.launcher).to_be_focused()
