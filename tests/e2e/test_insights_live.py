"""An owner in a real browser against the real app and a real Celery worker: hit testing shows the
passages and the answer, a batch test runs with its progress bar, and after an entry changes the
set re-runs by itself and the page shows what changed. Then the usage and members pages.

Refresh docs/screenshots/{hit-testing,batch-diff,usage,members}.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_insights_live.py"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from tests.e2e.conftest import SCREENSHOTS

# transaction=True: every row the test writes is committed, so the app's process and the worker see it.
pytestmark = pytest.mark.django_db(transaction=True)

ENTRIES = [
    ("delivery", "Доставка", "Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ "
     "доставка бесплатная. В другие города отправляем транспортной компанией, срок 2–5 дней.",
     "https://shop.example/delivery"),
    ("return", "Возврат товара", "Вернуть товар можно в течение 14 дней после покупки, если сохранены упаковка "
     "и чек. Деньги вернём на карту в течение 10 дней.", "https://shop.example/return"),
    ("payment", "Оплата", "Оплатить заказ можно картой на сайте, через СБП или наличными курьеру при получении.",
     "https://shop.example/payment"),
]
QUESTIONS = ("Сколько стоит доставка по Москве? | https://shop.example/delivery | 300\n"
             "Можно ли вернуть товар?\n"
             "Как оплатить заказ?\n"
             "Есть ли у вас парковка для вертолёта на крыше офиса?\n"
             "Привет!")


def shot(page: Page, name: str) -> None:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


@pytest.fixture
def shop(django_user_model):
    from bots.models import Bot, Membership
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    bot = Bot.objects.create(name="Ромашка", slug="e2e-insights", site_url="https://shop.example/")
    user = django_user_model.objects.create_user(username="owner@romashka.example", email="owner@romashka.example",
                                                 password="e2e-pass-7", is_staff=True)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    entries = {}
    for key, title, text, url in ENTRIES:
        entries[key], _ = entry_upsert(bot=bot, source=None,
                                       draft=EntryDraft(key=key, title=title, text=text, url=url, kind=Entry.Kind.QA))
    embed_pending(bot_id=bot.pk)
    return {"bot": bot, "user": user, "entries": entries}


def test_an_owner_hit_tests_runs_a_batch_and_sees_the_diff_after_an_entry_changes(
    page: Page, live_app: str, shop: dict, celery_worker_thread: object, settings: Any,
):
    from knowledge.services import entry_edit
    from owner.insights.models import BatchRun, QuestionSet

    settings.INSIGHTS_RERUN_DELAY = 1  # the change is made here, in the test's process: its delay applies
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_app}/accounts/login/?next=/b/e2e-insights/testing/")
    page.fill("#id_username", "owner@romashka.example")
    page.fill("#id_password", "e2e-pass-7")
    page.press("#id_password", "Enter")
    expect(page.locator("h1")).to_have_text("Проверка бота")
    expect(page.locator('.tabs a[aria-current="page"]')).to_have_text("Проверка")

    # Hit testing: the passages with their score parts and the answer, nothing stored.
    page.fill("#question", "Сколько стоит доставка по Москве?")
    page.get_by_role("button", name="Проверить").click()
    expect(page.locator(".answer-card")).to_have_attribute("data-route", "search", timeout=60000)
    expect(page.locator(".answer-text")).to_contain_text("300 ₽")
    cited = page.locator(".passages tr.cited")
    expect(cited).to_have_count(1)
    expect(cited.locator(".entry-title")).to_have_text("Доставка")
    assert page.locator(".passages tbody tr").count() == 3
    shot(page, "hit-testing.png")

    # A batch test: saved, run on the worker with a progress bar, answers shown when done.
    page.get_by_role("link", name="Новый набор").click()
    page.fill("#set-name", "Частые вопросы")
    page.fill("#set-questions", QUESTIONS)
    page.get_by_role("button", name="Сохранить").click()
    expect(page.locator("h1")).to_have_text("Частые вопросы")
    page.get_by_role("button", name="Запустить").click()
    expect(page.locator(".run .status-done")).to_be_visible(timeout=90000)
    expect(page.locator(".results tbody tr")).to_have_count(5)
    expect(page.get_by_text("Это первый прогон набора")).to_be_visible()

    # The owner changes an entry and switches another off: the set re-runs by itself.
    question_set = QuestionSet.objects.get(bot=shop["bot"])
    entry_edit(entry=shop["entries"]["delivery"], changes={
        "text": "Доставка по Москве — на следующий день, стоимость 450 ₽. Бесплатно от 7000 ₽."})
    entry_edit(entry=shop["entries"]["return"], changes={"active": False})
    deadline = time.monotonic() + 90
    while not question_set.runs.filter(trigger="knowledge", status=BatchRun.Status.DONE).exists():
        assert time.monotonic() < deadline, "the set was not re-run after the knowledge changed"
        time.sleep(0.3)
    page.reload()
    expect(page.locator(".run .auto-note")).to_contain_text("изменена запись «Доставка»")
    expect(page.locator('.results tr[data-change="text"]')).to_have_count(1)
    expect(page.locator('.results tr[data-change="unanswered"]')).to_have_count(1)
    expect(page.locator('.results tr[data-change="text"]')).to_contain_text("450")
    expect(page.locator(".diff-summary")).to_contain_text("без ответа стало: 1")
    shot(page, "batch-diff.png")


def test_the_usage_and_members_pages(page: Page, live_app: str, shop: dict):
    from bots.services import membership_add
    from llm import budget
    from llm.models import Usage

    bot = shop["bot"]
    now = timezone.now()
    lines = [(0, "chat", "claude-haiku-4-5", "0.41"), (1, "chat", "claude-haiku-4-5", "0.35"),
             (1, "review_reply", "claude-sonnet-4-6", "0.62"), (3, "chat", "claude-haiku-4-5", "0.28"),
             (6, "chat", "claude-haiku-4-5", "0.19")]
    for days_ago, route, model, cost in lines:
        Usage.objects.create(bot=bot, route=route, purpose="answer", provider="anthropic", model=model,
                             input_tokens=52_000, output_tokens=9_000, cost_usd=Decimal(cost),
                             created_at=now - timedelta(days=days_ago))
    budget.budget_set(bot=bot, limit=Decimal("3"))
    membership_add(bot=bot, email="operator@romashka.example", role="operator")

    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_app}/accounts/login/?next=/b/e2e-insights/usage/")
    page.fill("#id_username", "owner@romashka.example")
    page.fill("#id_password", "e2e-pass-7")
    page.press("#id_password", "Enter")
    expect(page.locator("h1")).to_have_text("Расходы на модель")
    expect(page.locator("#budget-state")).to_have_text("в пределах")
    page.fill("#id_budget", "0,3")  # the Russian decimal comma; today's $0.41 is over it
    page.get_by_role("button", name="Сохранить бюджет").click()
    expect(page.locator("#budget-state")).to_have_text("исчерпан")
    expect(page.locator(".budget-over[role=status]")).to_be_visible()
    expect(page.locator("#usage-chart")).to_be_visible()
    assert page.evaluate("() => window.Chart.getChart('usage-chart').data.datasets.length") == 2
    shot(page, "usage.png")

    page.goto(f"{live_app}/b/e2e-insights/members/")
    page.fill("#invite-email", "new.operator@romashka.example")
    page.get_by_role("button", name="Отправить приглашение").click()
    expect(page.locator(".messages")).to_contain_text("Приглашение отправлено на new.operator@romashka.example")
    expect(page.locator(".invitations")).to_contain_text("new.operator@romashka.example")
    expect(page.locator(".history")).to_contain_text("Приглашение: new.operator@romashka.example — оператор")
    expect(page.locator(".members tbody tr")).to_have_count(2)
    shot(page, "members.png")
