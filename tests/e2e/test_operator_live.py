"""A visitor in the widget and an operator in the inbox, two browser pages on the real app (uvicorn
on the test database, Redis channel layer): the whole handoff cycle, and the contact form out of
working hours.

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_operator_live.py"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from tests.e2e.conftest import DESKTOP, SCREENSHOTS, ShopFactory, committed, snippet
from tests.e2e.test_widget_live import learn_pages
from tests.e2e.widget import NO_ANSWER, Widget, wait_for

pytestmark = pytest.mark.django_db

OFF_TOPIC = "Какая завтра погода в Антарктиде?"
# Records what the inbox shows as browser notifications (the real API still does the work).
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  if (!Real) return;
  window.__notes = [];
  function Recorded(title, options) { window.__notes.push(title); return new Real(title, options); }
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  window.Notification = Recorded;
})();
"""


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
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-operators")
        origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
        bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
        bot.privacy_policy_url = f"{origin}/privacy/"
        bot.save(update_fields=["site_url", "allowed_origins", "privacy_policy_url"])
        learn_pages(bot, origin)
        user = get_user_model().objects.create_user(
            username="anna@e2e.example", email="anna@e2e.example", password="e2e-anna-1", first_name="Анна"
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
    """The operator's own browser: signed in, notifications allowed."""
    context: BrowserContext = browser.new_context(viewport=DESKTOP, locale="ru-RU")
    context.grant_permissions(["notifications"], origin=helpdesk["app"])
    context.add_cookies([{"name": "sessionid", "value": helpdesk["session"], "url": helpdesk["app"]}])
    context.add_init_script(RECORD_NOTIFICATIONS)
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


def test_a_visitor_reaches_a_person_and_back(page: Page, inbox: Page, helpdesk: dict, shots: Path):
    app, shop, bot = helpdesk["app"], helpdesk["shop"], helpdesk["bot"]
    inbox.goto(f"{app}/inbox/")
    expect(inbox.locator("#waiting [data-empty]")).to_be_visible()
    expect(inbox.locator("#waiting-count")).to_be_hidden()

    page.goto(f"{shop}/delivery/")
    widget = Widget(page)
    widget.open()
    widget.ask(OFF_TOPIC)  # its no-answer is the server's first spelling pass: it loads the dictionary
    expect(widget.last("bot").locator(".bubble")).to_contain_text(NO_ANSWER, timeout=60000)
    widget.last("bot").get_by_role("button", name="Позвать оператора").click()
    expect(widget.status).to_have_text("Ждём оператора. Он ответит здесь же.")

    # The inbox hears of it without a reload: a row, the count in the tab title, a notification.
    row = inbox.locator("#waiting .conv").first
    expect(row).to_be_visible(timeout=10000)
    expect(row.locator(".conv-preview")).to_contain_text("точного ответа у меня нет")
    expect(inbox).to_have_title("(1) Входящие — Spravka")
    assert inbox.evaluate("() => window.__notes") == ["Посетитель ждёт оператора — ТехноДом"]
    inbox.screenshot(path=str(shots / "inbox-waiting.png"))

    row.click()
    conversation_id = _conversation_id(bot)
    expect(inbox).to_have_url(f"{app}/inbox/c/{conversation_id}/")
    expect(inbox.locator(".msg.visitor.unanswered")).to_contain_text(OFF_TOPIC)  # what the bot could not answer
    expect(inbox.locator("#visitor-page")).to_have_attribute("href", f"{shop}/delivery/")
    inbox.get_by_role("button", name="Взять").click()
    expect(widget.last("system").locator(".bubble")).to_have_text("Оператор Анна на связи.", timeout=10000)
    expect(widget.status).to_have_text("К разговору подключился оператор.")
    expect(inbox.locator("#chat-state")).to_have_text("у оператора")

    reply = inbox.locator("#reply-text")
    reply.press_sequentially("Здравствуйте! Пог", delay=20)
    expect(widget.page.locator("spravka-widget .typing")).to_be_visible(timeout=5000)
    expect(widget.page.locator("spravka-widget .typing .sr")).to_have_text("Оператор печатает…")
    reply.press_sequentially("оду смотрят на сайтах метеослужб, а мы подскажем по заказу.", delay=5)
    reply.press("Enter")
    operator_says = widget.last("operator")
    expect(operator_says.locator(".bubble")).to_have_text(
        "Здравствуйте! Погоду смотрят на сайтах метеослужб, а мы подскажем по заказу.", timeout=10000
    )
    expect(operator_says.locator(".who")).to_have_text("Анна:")

    widget.ask("Спасибо! А доставка в Тверь есть?")
    expect(inbox.locator(".msg.visitor").last).to_contain_text("доставка в Тверь", timeout=10000)
    page.wait_for_timeout(1500)
    expect(widget.messages("bot")).to_have_count(1)  # the bot stayed silent while the operator held it
    page.screenshot(path=str(shots / "widget-operator.png"))
    inbox.screenshot(path=str(shots / "inbox-conversation.png"))

    inbox.get_by_role("button", name="Вернуть боту").click()
    expect(widget.status).to_have_text("", timeout=10000)
    widget.ask("Можно ли вернуть товар?")
    expect(widget.last("bot").locator(".src a")).to_be_visible(timeout=30000)  # the bot answers again


def test_out_of_hours_the_visitor_leaves_a_contact_with_consent(page: Page, inbox: Page, helpdesk: dict, shots: Path):
    from bots.services import opening_hours_set
    from chat.models import Lead

    bot, shop, app = helpdesk["bot"], helpdesk["shop"], helpdesk["app"]
    night = [(day, dt.time(0, 0), dt.time(0, 1)) for day in range(7)]  # one minute a day: closed now
    committed(opening_hours_set, bot=bot, rows=night)
    try:
        page.goto(f"{shop}/")
        widget = Widget(page)
        widget.open()
        widget.ask("Позовите оператора, пожалуйста")
        answer = widget.last("bot")
        expect(answer.locator(".bubble")).to_contain_text("Сейчас операторы не работают", timeout=30000)
        answer.get_by_role("button", name="Оставить контакт").click()
        form = page.locator("spravka-widget form.lead")
        expect(form).to_be_visible()
        expect(form.locator("[name=question]")).to_have_value("Позовите оператора, пожалуйста")
        form.locator("[name=name]").fill("Мария")
        form.locator("[name=phone]").fill("8 916 123 45 67")
        form.get_by_role("button", name="Отправить").click()
        expect(form.locator(".field-error").last).to_have_text("Без согласия мы не можем сохранить контакт.")
        expect(form.locator("a")).to_have_attribute("href", f"{shop}/privacy/")
        page.screenshot(path=str(shots / "widget-lead-form.png"))
        form.locator("[name=phone]").fill("12")
        form.locator("[name=consent]").check()
        form.get_by_role("button", name="Отправить").click()
        expect(form.locator("[name=phone]")).to_have_attribute("aria-invalid", "true")  # the server named the field
        form.locator("[name=phone]").fill("8 916 123 45 67")
        form.get_by_role("button", name="Отправить").click()
        expect(widget.last("system").locator(".bubble")).to_have_text(
            "Спасибо, Мария! Мы свяжемся с вами: +79161234567.", timeout=10000
        )
        expect(form).to_be_hidden()

        wait_for(lambda: committed(Lead.objects.filter(bot=bot, phone="+79161234567").exists))
        inbox.goto(f"{app}/inbox/leads/")
        expect(inbox.locator("table.leads")).to_contain_text("+79161234567")
        inbox.screenshot(path=str(shots / "inbox-leads.png"))
    finally:
        committed(opening_hours_set, bot=bot, rows=[])
