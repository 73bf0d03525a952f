"""The copilot in the operator's inbox, two browser pages on the real app (uvicorn on the test
database, Redis channel layer): the operator opens a waiting conversation, sees the passages the
bot's search found for the visitor's question with their links, puts one in the composer with
«Вставить», sends it, and the visitor's widget gets the text with the link. With a model (the
fake Messages API), «Черновик ответа» offers a checked draft with its source, and says why when
the draft is refused.

Refresh docs/screenshots/inbox-copilot.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_copilot_live.py"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.chat.conftest import KNOWLEDGE
from tests.e2e.conftest import DESKTOP, SCREENSHOTS, ShopFactory, committed, serving_app, snippet
from tests.e2e.test_widget_live import learn_pages
from tests.e2e.widget import Widget
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import FakeLLMServer, tool_use

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def helpdesk(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[dict]:
    """The demo shop with a bot that knows its pages, an operator «Анна» with a signed-in session."""
    from django.contrib.auth import get_user_model

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-copilot")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.save(update_fields=["site_url", "allowed_origins"])
        learn_pages(bot, origin)
        user = get_user_model().objects.create_user(
            username="anna@copilot.example", email="anna@copilot.example", password="e2e-anna-1", first_name="Анна"
        )
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
        client = Client()
        client.force_login(user)
        session = client.cookies["sessionid"].value
    yield {"bot": bot, "shop": origin, "session": session, "app": live_app}
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


@pytest.fixture
def inbox(browser: Browser, helpdesk: dict) -> Iterator[Page]:
    context: BrowserContext = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    context.add_cookies([{"name": "sessionid", "value": helpdesk["session"], "url": helpdesk["app"]}])
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert errors == [], f"JavaScript errors in the inbox: {errors}"


def _conversation_id(bot: Bot) -> int:
    from chat.models import Conversation

    found = committed(lambda: Conversation.objects.filter(bot=bot).exclude(state="closed").order_by("-pk").first())
    assert found is not None
    return int(found.pk)


def test_the_operator_answers_with_a_passage_and_its_link(page: Page, inbox: Page, helpdesk: dict, shots: Path):
    app, shop, bot = helpdesk["app"], helpdesk["shop"], helpdesk["bot"]
    page.goto(f"{shop}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=60000)
    widget.ask("Позовите оператора, пожалуйста")
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.", timeout=30000)

    inbox.goto(f"{app}/inbox/")
    row = inbox.locator("#waiting .conv").first
    expect(row).to_be_visible(timeout=10000)
    row.click()
    expect(inbox).to_have_url(f"{app}/inbox/c/{_conversation_id(bot)}/")

    copilot = inbox.locator("#copilot")
    expect(copilot.get_by_role("heading", name="Подсказки из знаний")).to_be_visible()
    expect(inbox.locator("#copilot-question")).to_have_text("Вопрос: Можно ли вернуть товар?", timeout=30000)
    first = copilot.locator(".copilot-passage").first
    expect(first.locator("a")).to_have_attribute("href", f"{shop}/returns/")
    expect(first.locator("p")).to_contain_text("14")
    expect(inbox.locator("#copilot-empty")).to_be_hidden()
    inbox.screenshot(path=str(shots / "inbox-copilot.png"))

    passage = first.locator("p").inner_text()
    first.get_by_role("button", name="Вставить").click()
    reply = inbox.locator("#reply-text")
    expect(reply).to_have_value(f"{passage}\n{shop}/returns/")
    expect(reply).to_be_focused()
    reply.press("End")
    reply.press_sequentially(" Хорошего дня!", delay=5)
    reply.press("Enter")  # a reply in a waiting conversation takes it

    said = widget.last("operator").locator(".bubble")
    expect(said).to_contain_text(f"{shop}/returns/", timeout=10000)
    expect(said).to_contain_text(passage.split("\n")[0][:40])
    expect(widget.last("operator").locator(".who")).to_have_text("Анна:")

    # The visitor asks again: the passages follow the new question, without a reload.
    widget.ask("А сколько стоит доставка?")
    expect(inbox.locator("#copilot-question")).to_have_text("Вопрос: А сколько стоит доставка?", timeout=30000)
    delivery = re.compile(f"^{re.escape(shop)}/delivery/")
    expect(copilot.locator(".copilot-passage a").first).to_have_attribute("href", delivery)

    # A question the knowledge does not cover: the panel says so in words.
    widget.ask("Какая завтра погода в Антарктиде?")
    expect(inbox.locator("#copilot-empty")).to_have_text(
        "По последнему вопросу в знаниях ничего не нашлось", timeout=30000)
    expect(copilot.locator(".copilot-passage")).to_have_count(0)


# --- the draft, on an app whose model is the fake Messages API ----------------------------------------

DRAFT = "Доставка по Москве — на следующий день, стоимость 300 ₽."


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def drafting(django_db_setup: None, django_db_blocker: DjangoDbBlocker, model: FakeLLMServer) -> Iterator[dict]:
    """The app with a model, a bot with three entries, a conversation waiting after a question
    (stored directly: the widget would ask the model too), and a signed-in operator."""
    from django.contrib.auth import get_user_model

    from chat import writes
    from chat.models import Conversation
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    with serving_app(django_db_blocker, LLM_PROVIDER="anthropic", ANTHROPIC_API_KEY=FAKE_ANTHROPIC_KEY,
                     ANTHROPIC_BASE_URL=model.url) as url, django_db_blocker.unblock():
        bot = Bot.objects.create(name="Демо-магазин", slug="e2e-copilot-draft", site_url="https://shop.example/")
        for key, title, text, link in KNOWLEDGE:
            entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=link,
                                                                kind=Entry.Kind.QA))
        embed_pending(bot_id=bot.pk)
        conversation = Conversation.objects.create(bot=bot, visitor_id="v_draft", state="waiting_operator")
        writes.message_store_visitor(conversation, text="Сколько стоит доставка по Москве?", client_msg_id="q-1",
                                     flags={}, intent="question")
        user = get_user_model().objects.create_user(
            username="olga@copilot.example", email="olga@copilot.example", password="e2e-olga-1", first_name="Ольга")
        Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
        client = Client()
        client.force_login(user)
        yield {"app": url, "conversation_id": conversation.pk, "session": client.cookies["sessionid"].value}
        bot.delete()
        user.delete()
        connections.close_all()


def test_a_draft_comes_with_its_source_and_a_refused_one_says_why(
    browser: Browser, drafting: dict, model: FakeLLMServer, shots: Path
):
    app = drafting["app"]
    context: BrowserContext = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    context.add_cookies([{"name": "sessionid", "value": drafting["session"], "url": app}])
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        tab.goto(f"{app}/inbox/c/{drafting['conversation_id']}/")
        copilot = tab.locator("#copilot")
        expect(copilot.locator(".copilot-passage a").first).to_have_attribute(
            "href", "https://shop.example/delivery", timeout=30000)

        said = {"intent": "question", "source": 0, "answer": DRAFT, "product_query": "", "fixed": ""}
        model.script(tool_use(said))
        copilot.get_by_role("button", name="Черновик ответа", exact=True).click()
        drafted = tab.locator("#copilot-draft-out .copilot-drafted")
        expect(drafted.locator("p")).to_have_text(DRAFT, timeout=30000)
        expect(drafted.locator("a")).to_have_attribute("href", "https://shop.example/delivery")
        expect(drafted.locator("a")).to_have_text("Доставка")
        tab.screenshot(path=str(shots / "inbox-copilot-draft.png"))
        drafted.get_by_role("button", name="Вставить").click()
        expect(tab.locator("#reply-text")).to_have_value(f"{DRAFT}\nhttps://shop.example/delivery")

        model.script(tool_use(said | {"answer": "Доставка по Москве стоит 450 ₽."}))
        copilot.get_by_role("button", name="Черновик ответа", exact=True).click()
        expect(tab.locator("#copilot-draft-out .copilot-refused")).to_have_text(
            "Черновик не прошёл проверку фактов: в нём было то, чего нет в источнике. "
            "Ответьте по подсказкам из знаний.", timeout=30000)
        expect(tab.locator("#copilot-draft-out")).not_to_contain_text("450")
    finally:
        context.close()
    assert errors == [], f"JavaScript errors in the inbox: {errors}"
