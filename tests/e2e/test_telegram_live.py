"""Telegram in a real browser against the real app (uvicorn on the test database), every call to
Telegram made by python-telegram-bot against the local fake Bot API (tests/fakes/telegram_api.py):

- the owner connects a bot on the channels page: a malformed token and one Telegram does not know
  are explained under the field and save nothing, the right one shows the bot, the token's last
  four characters only and sets the webhook with its secret; «Отключить» deletes the webhook; the
  English page says it all in English;
- a Telegram visitor (updates posted to the app's webhook as Telegram posts them, handled by a real
  Celery worker) is greeted on /start, gets an answer with its source page as a URL button, asks
  what the site does not say and presses «Позвать оператора»; the operator sees the chat in the
  real inbox with the Telegram badge and the visitor's Telegram name, takes it and replies (the
  reply reaches sendMessage under the operator's name, escaped), sees the visitor's next message
  while the bot keeps quiet, and hands the chat back to the bot, which answers again.

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_telegram_live.py"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from messengers import services
from messengers.models import Connection, InboundUpdate
from tests.e2e.conftest import DESKTOP, ShopFactory, owner_page, serving_app
from tests.e2e.test_widget_live import learn_pages
from tests.fakes import FAKE_TELEGRAM_TOKEN
from tests.fakes.telegram_api import Call, FakeTelegram, callback_update, start_update, text_update

# transaction=True: every row is committed, so the app's process, the Celery worker's threads and
# the test see each other's writes; the tables are flushed after each test.
pytestmark = pytest.mark.django_db(transaction=True)

# What the app calls itself: the webhook address is built from it, and an https address that is
# not this machine is one a messenger can post to (the page warns otherwise). The test posts the
# updates to the app's own http address, as a proxy in front of it would.
PUBLIC_URL = "https://help.tehnodom.example"
PASSWORD = "e2e-telegram-pass-1"
CHAT = 5550201
FIRST_NAME, LAST_NAME, USERNAME = "Иван", "Смирнов", "ivan_smirnov"  # the visitor's Telegram profile
FIRST_ANSWER = 60.0  # seconds: the first answer loads the speller and the embeddings on a busy machine
WAIT = 30.0
CYRILLIC = re.compile(r"[А-Яа-яЁё]")

GREETING = "Здравствуйте! Чем могу помочь?"
RETURNS = "Можно ли вернуть товар?"
OFF_TOPIC = "Какая завтра погода в Антарктиде?"
NO_ANSWER = "точного ответа у меня нет"
WAITING_NOTE = "<i>Оператор подключится в ближайшее время. Пока можете описать вопрос подробнее.</i>"
JOINED_NOTE = "<i>Оператор Анна на связи.</i>"
REPLY = "Вернём деньги за <b>любой</b> товар & без чека, если сохранили упаковку."
REPLY_SENT = "<b>Анна</b>\nВернём деньги за &lt;b&gt;любой&lt;/b&gt; товар &amp; без чека, если сохранили упаковку."
AFTER_REPLY = "Спасибо! А доставка в Тверь есть?"
RELEASED_NOTE = "<i>Оператор вернул разговор виртуальному помощнику. Я снова отвечаю на ваши вопросы.</i>"


def in_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a call on a thread of its own: python-telegram-bot runs its own event loop
    (asyncio.run), which Playwright's loop in the test's thread would refuse; the ORM connection
    it opens there is closed after it."""
    from concurrent.futures import ThreadPoolExecutor

    def run() -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result(timeout=60)


def wait_until(condition: Callable[[], object], timeout: float = WAIT, what: str = "the condition") -> None:
    """Poll server state (the database), where Playwright's expect cannot look."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not hold within {timeout:.0f} s"
        time.sleep(0.05)


# ----- fixtures --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def telegram() -> Iterator[FakeTelegram]:
    """The fake Bot API for the whole module, the shared test bot registered."""
    fake = FakeTelegram().start()
    fake.add_bot(FAKE_TELEGRAM_TOKEN)
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def app(django_db_setup: None, django_db_blocker: DjangoDbBlocker, telegram: FakeTelegram) -> Iterator[str]:
    """The real app calling the fake Bot API, known to itself by a public https address."""
    with serving_app(django_db_blocker, TELEGRAM_API_BASE=telegram.url, SPRAVKA_PUBLIC_URL=PUBLIC_URL,
                     MESSENGER_RETRY_BASE="0.2") as url:
        yield url


@pytest.fixture
def here(settings: Any, telegram: FakeTelegram) -> FakeTelegram:
    """This process (the Celery worker's threads) calls the same fake as the app, retries quickly;
    the fake's record starts empty."""
    settings.TELEGRAM_API_BASE = telegram.url
    settings.SPRAVKA_PUBLIC_URL = PUBLIC_URL
    settings.MESSENGER_RETRY_BASE = 0.2
    telegram.clear()
    return telegram


@pytest.fixture
def owner_bot(app: str, here: FakeTelegram, django_user_model: Any) -> Iterator[Bot]:
    bot = Bot.objects.create(name="ТехноДом", slug="e2e-telegram", site_url="https://tehnodom.example/")
    user = django_user_model.objects.create_user("owner@tehnodom.example", email="owner@tehnodom.example",
                                                 password=PASSWORD)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    yield bot
    bot.delete()
    user.delete()


@pytest.fixture
def helpdesk(app: str, here: FakeTelegram, shop_factory: ShopFactory, django_user_model: Any) -> Iterator[dict]:
    """A bot that knows the demo shop's pages, connected to Telegram, and its operator «Анна»
    with a signed-in session."""
    origin = shop_factory("")
    bot = Bot.objects.create(name="ТехноДом", slug="e2e-telegram-desk", site_url=f"{origin}/",
                             allowed_origins=[origin])
    learn_pages(bot, origin)
    user = django_user_model.objects.create_user("anna@tehnodom.example", email="anna@tehnodom.example",
                                                 password=PASSWORD, first_name="Анна")
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
    client = Client()
    client.force_login(user)
    connection = in_thread(services.telegram_connect, bot=bot, token=FAKE_TELEGRAM_TOKEN)
    yield {"bot": bot, "shop": origin, "session": client.cookies["sessionid"].value, "connection": connection}
    bot.delete()
    user.delete()


def session_of(page: Page, app: str) -> str:
    """The signed-in session of `page`, for another browser profile (another language)."""
    (session,) = [cookie["value"] for cookie in page.context.cookies(app) if cookie["name"] == "sessionid"]
    return session


def sign_in(page: Page, app: str, username: str, next_path: str) -> None:
    page.goto(f"{app}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{app}{next_path}")
    page.wait_for_load_state("load")  # the stylesheet too, before anything is measured or shot


# ----- the owner's channels page ---------------------------------------------------------------------------


def test_the_owner_connects_telegram_and_disconnects_it(
    browser: Browser, app: str, owner_bot: Bot, here: FakeTelegram, shots: Path,
):
    telegram = here
    card_path = f"/b/{owner_bot.slug}/channels/"
    with owner_page(browser, app) as page:
        sign_in(page, app, "owner@tehnodom.example", card_path)
        card = page.locator("#telegram")
        badge = card.locator("h2 .badge")
        expect(page.locator("h1")).to_have_text("Мессенджеры")
        expect(page.locator(".tabs a[aria-current=page]")).to_have_text("Мессенджеры")
        expect(badge).to_have_text("не подключён")
        expect(card.locator("ol.howto li")).to_have_count(3)
        expect(card.locator("ol.howto")).to_contain_text("@BotFather")
        expect(page.locator("#public-url")).to_have_count(0)  # https and not this machine: nothing to warn about
        token = card.locator("#id_token")
        field_errors = card.locator("#token-errors")

        # Not a token at all: said under the field; Telegram is not even asked, nothing is saved.
        token.fill("123:это-не-токен")
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(field_errors).to_contain_text("не похоже на токен Telegram")
        expect(badge).to_have_text("не подключён")
        assert telegram.calls == []
        assert not Connection.objects.filter(bot=owner_bot).exists()
        page.wait_for_load_state("load")  # the stylesheets too: a layout measured before them is unstyled
        # The token field is drawn like the owner pages' other fields (a password input), not the browser's default.
        box = token.bounding_box()
        assert box is not None and box["width"] >= 400, box
        assert token.evaluate("e => getComputedStyle(e).borderRadius") == "6px"
        page.screenshot(path=str(shots / "channels-telegram-error.png"), full_page=True)

        # Well-formed but unknown to Telegram (getMe answers 401): said so, nothing saved.
        unknown = "7000000999:AAUnknownTokenUnknownTokenUnknown"
        token.fill(unknown)
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(field_errors).to_contain_text("Telegram не знает этот токен")
        assert [(call.method, call.token, call.status) for call in telegram.calls] == [("getMe", unknown, 401)]
        assert not Connection.objects.filter(bot=owner_bot).exists()
        assert unknown not in page.content()  # a password field: the token is not sent back

        # The right one: checked, the webhook set with a secret, the bot shown; the token never again.
        token.fill(FAKE_TELEGRAM_TOKEN)
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(page).to_have_url(f"{app}{card_path}")
        expect(page.locator(".messages")).to_contain_text("Telegram подключён: @spravka_test_bot")
        expect(badge).to_have_text("подключён")
        connection = Connection.objects.get(bot=owner_bot, kind=Connection.Kind.TELEGRAM)
        webhook_url = f"{PUBLIC_URL}/messengers/telegram/{connection.webhook_key}/"
        assert connection.webhook_url == webhook_url
        assert telegram.webhook(FAKE_TELEGRAM_TOKEN)["url"] == webhook_url
        assert telegram.webhook(FAKE_TELEGRAM_TOKEN)["secret_token"] == connection.secret
        assert [call.method for call in telegram.calls] == ["getMe", "getMe", "setWebhook"]
        facts = card.locator("dl.facts")
        expect(facts.get_by_role("link", name="@spravka_test_bot")).to_have_attribute(
            "href", "https://t.me/spravka_test_bot")
        expect(facts.locator("code").first).to_have_text("…" + FAKE_TELEGRAM_TOKEN[-4:])
        expect(facts).to_contain_text(webhook_url)
        html = page.content()
        assert FAKE_TELEGRAM_TOKEN not in html and FAKE_TELEGRAM_TOKEN.split(":", 1)[1] not in html
        assert connection.secret not in html
        expect(card.locator("details")).not_to_have_attribute("open", "")  # «Заменить токен» stays folded
        expect(card.locator("details summary")).to_have_text("Заменить токен")
        page.wait_for_load_state("load")
        assert_one_line_of_tabs(page)
        page.screenshot(path=str(shots / "channels-telegram.png"), full_page=True)

        # In English: the card's own words are English.
        with owner_page(browser, app, locale="en-US") as english:
            english.context.add_cookies([{"name": "sessionid", "value": session_of(page, app), "url": app}])
            english.set_extra_http_headers({"Accept-Language": "en-US,en"})
            english.goto(f"{app}{card_path}")
            expect(english.locator("h1")).to_have_text("Messengers")
            expect(english.locator(".tabs a[aria-current=page]")).to_have_text("Messengers")
            en_card = english.locator("#telegram")
            expect(en_card.locator("h2 .badge")).to_have_text("connected")
            expect(en_card.locator("details summary")).to_have_text("Replace the token")
            en_card.locator("details summary").click()
            expect(en_card.locator("label[for=id_token]")).to_have_text("Bot token")
            expect(en_card.get_by_role("button", name="Check and connect")).to_be_visible()
            words = en_card.inner_text()
            assert not CYRILLIC.search(words), words
            assert not CYRILLIC.search(english.locator("#widget-count").inner_text())

        # «Отключить»: the webhook deleted, the token forgotten, the how-to back.
        card.get_by_role("button", name="Отключить").click()
        expect(page).to_have_url(f"{app}{card_path}")
        expect(page.locator(".messages")).to_contain_text("Telegram отключён")
        expect(badge).to_have_text("не подключён")
        expect(card.locator("ol.howto li")).to_have_count(3)
        expect(card.locator("dl.facts")).to_have_count(0)
        delete = telegram.calls_of("deleteWebhook")
        assert [call.token for call in delete] == [FAKE_TELEGRAM_TOKEN]
        assert telegram.webhook(FAKE_TELEGRAM_TOKEN) == {}
        connection.refresh_from_db()
        assert connection.status == Connection.Status.DISCONNECTED and connection.token_sealed == ""

        # The English page before connecting: the how-to and the form in English too.
        with owner_page(browser, app, locale="en-US") as english:
            english.context.add_cookies([{"name": "sessionid", "value": session_of(page, app), "url": app}])
            english.set_extra_http_headers({"Accept-Language": "en-US,en"})
            english.goto(f"{app}{card_path}")
            en_card = english.locator("#telegram")
            expect(en_card.locator("h2 .badge")).to_have_text("not connected")
            expect(en_card.locator("details summary")).to_have_text("Connect")
            expect(en_card.get_by_role("button", name="Check and connect")).to_be_visible()
            words = en_card.inner_text()
            assert not CYRILLIC.search(words), words


TAB_TOPS = ("[...document.querySelectorAll('.tabs > a, .tabs > details > summary')]"
            ".map(e => Math.round(e.getBoundingClientRect().top))")


def assert_one_line_of_tabs(page: Page) -> None:
    """The owner's tabs, «Мессенджеры» among them, keep one line at 1280 px and nothing overflows."""
    tops = page.evaluate(TAB_TOPS)
    assert len(set(tops)) == 1, f"the tabs wrap: {tops}"
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    header = page.locator("header.top").bounding_box()
    assert header is not None and header["height"] < 60, header


# ----- a Telegram visitor, the bot and an operator ---------------------------------------------------------


class Visitor:
    """A Telegram user writing to the bot: posts updates to the app's webhook as Telegram does."""

    def __init__(self, app: str, connection: Connection, telegram: FakeTelegram) -> None:
        self.url = f"{app}/messengers/telegram/{connection.webhook_key}/"
        self.secret = connection.secret
        self.telegram = telegram
        self.update_id = 100

    def post(self, update: dict[str, Any]) -> None:
        response = httpx.post(self.url, content=json.dumps(update, ensure_ascii=False).encode(),
                              headers={"Content-Type": "application/json",
                                       "X-Telegram-Bot-Api-Secret-Token": self.secret}, timeout=30)
        assert response.status_code == 200, response.text
        assert response.json() == {"ok": True}

    def next_id(self) -> int:
        self.update_id += 1
        return self.update_id

    def start(self) -> int:
        update_id = self.next_id()
        self.post(start_update(update_id, CHAT, first_name=FIRST_NAME, last_name=LAST_NAME, username=USERNAME))
        return update_id

    def says(self, text: str) -> int:
        update_id = self.next_id()
        self.post(text_update(update_id, CHAT, text, first_name=FIRST_NAME, last_name=LAST_NAME, username=USERNAME))
        return update_id

    def presses(self, data: str, *, under: int, text: str) -> int:
        update_id = self.next_id()
        self.post(callback_update(update_id, CHAT, data, message_id=under, message_text=text, first_name=FIRST_NAME,
                                  last_name=LAST_NAME, username=USERNAME))
        return update_id

    def received(self, count: int, timeout: float = WAIT) -> list[Call]:
        """The chat's first `count` sendMessage calls (all answered 200), once they arrived."""
        calls = self.telegram.wait_for("sendMessage", count=count, chat_id=CHAT, timeout=timeout)
        assert [call.status for call in calls] == [200] * len(calls)
        return calls


# The vertical middle of each element's text (not of its box, which a flex row may stretch).
TEXT_CENTERS = """selectors => selectors.map(selector => {
  const range = document.createRange();
  range.selectNodeContents(document.querySelector(selector));
  const box = range.getBoundingClientRect();
  return box.top + box.height / 2;
})"""


def handled(update_id: int) -> bool:
    return InboundUpdate.objects.filter(update_id=update_id, status=InboundUpdate.Status.HANDLED).exists()


def buttons(call: Call) -> list[dict[str, str]]:
    return [button for row in call.params.get("reply_markup", {}).get("inline_keyboard", []) for button in row]


def returns_page(shop: str) -> re.Pattern[str]:
    return re.compile(re.escape(f"{shop}/returns/") + r"(#[\w-]+)?$")


def test_a_telegram_visitor_reaches_an_operator_in_the_inbox_and_back(
    browser: Browser, app: str, helpdesk: dict, here: FakeTelegram, shots: Path, celery_worker_thread: object,
):
    telegram, shop = here, helpdesk["shop"]
    visitor = Visitor(app, helpdesk["connection"], telegram)

    # /start: the greeting.
    visitor.start()
    greeting = visitor.received(1)[0]
    assert greeting.params["text"] == GREETING

    # A question the shop's pages answer: the answer with its page as a URL button.
    visitor.says(RETURNS)
    answer = visitor.received(2, timeout=FIRST_ANSWER)[1]
    assert answer.params["parse_mode"] == "HTML"
    links = [button for button in buttons(answer) if "url" in button]
    assert links and returns_page(shop).match(links[0]["url"]), buttons(answer)
    assert not any("callback_data" in button for button in buttons(answer))
    assert telegram.calls_of("sendChatAction", chat_id=CHAT)  # «печатает…» while it was made

    # The operator's inbox is open before the visitor asks for a person.
    with owner_page(browser, app) as inbox:
        inbox.context.add_cookies([{"name": "sessionid", "value": helpdesk["session"], "url": app}])
        inbox.goto(f"{app}/inbox/")
        expect(inbox.locator("#waiting [data-empty]")).to_be_visible()

        # What the site does not say: the no-answer with «Позвать оператора»; pressed.
        visitor.says(OFF_TOPIC)
        no_answer = visitor.received(3, timeout=FIRST_ANSWER)[2]
        assert NO_ANSWER in no_answer.params["text"]
        assert buttons(no_answer)[-1] == {"text": "Позвать оператора", "callback_data": "operator"}
        visitor.presses("operator", under=3, text=no_answer.params["text"])
        assert visitor.received(4)[3].params["text"] == WAITING_NOTE
        assert telegram.wait_for("answerCallbackQuery", timeout=WAIT)  # the button's spinner stopped

        # The inbox hears of it without a reload: the Telegram badge before the visitor's Telegram name.
        row = inbox.locator("#waiting .conv").first
        expect(row).to_be_visible(timeout=15_000)
        expect(row.locator(".conv-channel[data-channel=telegram]")).to_have_text("Telegram")
        expect(row.locator(".conv-who")).to_have_text("Telegram Иван Смирнов")
        expect(inbox).to_have_title("(1) Входящие — Spravka")
        row.click()
        expect(inbox).to_have_url(re.compile(rf"{re.escape(app)}/inbox/c/\d+/$"))
        inbox.wait_for_load_state("load")
        expect(inbox.locator(".chat-head h1")).to_have_text("Иван Смирнов")
        expect(inbox.locator(".chat-meta .conv-channel[data-channel=telegram]")).to_have_text("Telegram")
        centers = inbox.evaluate(TEXT_CENTERS, ["#chat-state", ".chat-meta .conv-channel"])
        assert abs(centers[0] - centers[1]) <= 1.5, centers  # the badge's word on the line of the others
        # The row as the server draws it on this page load: the same badge and name.
        expect(inbox.locator("#waiting .conv .conv-who")).to_have_text("Telegram Иван Смирнов")
        expect(inbox.locator(".msg.visitor.unanswered")).to_contain_text(OFF_TOPIC)
        inbox.screenshot(path=str(shots / "inbox-telegram.png"))

        # «Взять»: the visitor hears who answers; the reply goes out under the operator's name, escaped.
        inbox.get_by_role("button", name="Взять").click()
        expect(inbox.locator("#chat-state")).to_have_text("у оператора")
        assert visitor.received(5)[4].params["text"] == JOINED_NOTE
        reply = inbox.locator("#reply-text")
        reply.fill(REPLY)
        reply.press("Enter")
        sent = visitor.received(6)[5]
        assert sent.params["text"] == REPLY_SENT and sent.params["parse_mode"] == "HTML"
        expect(inbox.locator(".msg.operator").last).to_contain_text(REPLY)  # shown as text, not markup

        # The visitor writes again: it reaches the operator's transcript, and the bot keeps quiet.
        update_id = visitor.says(AFTER_REPLY)
        expect(inbox.locator(".msg.visitor").last).to_contain_text(AFTER_REPLY, timeout=15_000)
        wait_until(lambda: handled(update_id), what=f"update {update_id} handled")
        assert len(telegram.calls_of("sendMessage", chat_id=CHAT)) == 6  # nothing sent for it
        inbox.screenshot(path=str(shots / "inbox-telegram-conversation.png"))

        # «Вернуть боту»: the visitor is told, the bot answers the question left while the operator
        # had it («А доставка в Тверь есть?»), and then the next question as ever.
        inbox.get_by_role("button", name="Вернуть боту").click()
        assert visitor.received(7)[6].params["text"] == RELEASED_NOTE
        owed = visitor.received(8)[7]
        expect(inbox.locator(".msg.bot")).to_have_count(3, timeout=15_000)  # the operator sees it too
        visitor.says(RETURNS)
        again = visitor.received(9)[8]
        assert any(returns_page(shop).match(button.get("url", "")) for button in buttons(again)), buttons(again)
        expect(inbox.locator(".msg.bot")).to_have_count(4, timeout=15_000)

    texts = telegram.sent_texts(CHAT)
    assert texts == [GREETING, answer.params["text"], no_answer.params["text"], WAITING_NOTE, JOINED_NOTE,
                     REPLY_SENT, RELEASED_NOTE, owed.params["text"], again.params["text"]]
    assert AFTER_REPLY not in "".join(texts)  # a visitor's own words are never sent back
