"""A new owner, in a real browser against the real app (uvicorn) and a real Celery worker, from
signing in to a working widget snippet: onboarding checks the demo shop's robots.txt and sitemap,
the bot is created and its crawl moves live on the setup page, the widget on that page answers
from the crawled pages with a link, the snippet is copied, a document is uploaded with progress,
and the overview shows the conversation. In Russian and in English (the English run asserts the
page structure and the dashboard's own catalog).

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_dashboard_live.py"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import owner_page
from tests.e2e.widget import Widget

# transaction=True: every row (the account, then what the app and the worker write) is committed,
# so the app's process and the test see each other's writes.
pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "e2e-dash-pass-1"
CRAWL_TIMEOUT = 180_000  # ms: 36 pages on a busy 2-core machine
TEXTS = {
    "ru": {"check": "Проверить сайт", "create": "Создать бота и прочитать сайт",
           "sitemap": "Страниц в карте сайта: 36.", "robots": "robots.txt найден и разрешает обход.",
           "copied": "Скопировано.", "snippet": "Код для сайта", "conversations": "разговор",
           "imported": "создано 1"},
    "en": {"check": "Check the site", "create": "Create the bot and read the site",
           "sitemap": "Pages in the sitemap: 36.", "robots": "robots.txt found; it allows crawling.",
           # The root catalog (LOCALE_PATHS) wins over the app catalog for the same msgid.
           "copied": "Copied.", "snippet": "Code for the site", "conversations": "conversation",
           "imported": "1 created"},
}
MANUAL_MD = "# Подарочная упаковка\n\nУпакуем любой заказ в подарочную бумагу за 150 ₽.\n"


@pytest.fixture(params=["ru", "en"])
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def owner_tab(browser: Browser, live_app: str, language: str) -> Iterator[tuple[BrowserContext, Page]]:
    """A browser profile in the owner's language, allowed to use the clipboard on the app's pages."""
    with owner_page(browser, live_app, locale="ru-RU" if language == "ru" else "en-US") as tab:
        yield tab.context, tab


def test_a_new_owner_goes_from_login_to_a_working_widget_snippet(
    owner_tab: tuple[BrowserContext, Page], live_app: str, demo_site: str, language: str, shots: Path,
    celery_worker_thread: object, django_user_model, tmp_path: Path,
):
    from bots.models import Bot

    _ctx, page = owner_tab
    words = TEXTS[language]
    email = f"new-{language}@shop.example"
    django_user_model.objects.create_user(email, email=email, password=PASSWORD)

    # Sign in: nobody's bot yet, so onboarding.
    page.goto(f"{live_app}/accounts/login/")
    page.fill("#id_username", email)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{live_app}/start/")

    # The site's address is checked first: robots.txt and the sitemap, shown before anything is created.
    page.fill("#id_url", demo_site)
    page.fill("#id_name", "ТехноДом")
    page.get_by_role("button", name=words["check"]).click()
    check = page.locator("#site-check")
    expect(check).to_contain_text(words["robots"])
    expect(check).to_contain_text(words["sitemap"])
    assert not Bot.objects.filter(memberships__user__username=email).exists()  # nothing created by a check
    if language == "ru":
        page.screenshot(path=str(shots / "onboarding-check.png"), full_page=True)

    # Created: the setup page, with the crawl's progress moving without a reload.
    page.get_by_role("button", name=words["create"]).click()
    expect(page).to_have_url(re.compile(rf"{re.escape(live_app)}/b/[\w-]+/setup/$"))
    bot = Bot.objects.get(name="ТехноДом", memberships__user__username=email)
    box = page.locator("#site .spravka-progress")
    expect(box).to_be_visible()
    expect(box.locator('[data-count="fetched"] span')).not_to_have_text("0", timeout=CRAWL_TIMEOUT)
    if language == "ru":
        page.screenshot(path=str(shots / "onboarding-crawl.png"), full_page=True)
    # Fetching is over once the embed queue has the pages (embedding) or everything is done;
    # pages answer by their words as soon as they are stored.
    expect(box).to_have_attribute("data-status", re.compile("embedding|done"), timeout=CRAWL_TIMEOUT)
    expect(box.locator('[data-count="fetched"] span')).to_have_text("36")

    # Try the bot on the page: the real widget answers from the crawled page, with its link.
    widget = Widget(page)
    widget.open()
    widget.ask("Можно ли вернуть товар?")
    answer = widget.last("bot")
    expect(answer.locator(".src a").first).to_have_attribute("href", re.compile(re.escape(demo_site) + "/returns/"),
                                                             timeout=60_000)
    if language == "ru":
        page.screenshot(path=str(shots / "onboarding-try.png"))
    widget.launcher.click()  # close the panel again

    # The snippet: copied to the clipboard exactly as shown, with this bot's key.
    expect(page.locator("#snippet-title")).to_have_text(words["snippet"])
    page.locator("#copy-snippet").click()
    expect(page.locator("#copy-status")).to_have_text(words["copied"])
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#snippet-code").text_content()
    assert f'data-bot="{bot.public_key}"' in copied and "/static/assistant/widget.js" in copied
    if language == "ru":
        page.locator("#snippet").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "onboarding-snippet.png"), full_page=True)

    # Knowledge: a document uploaded with XHR progress becomes entries.
    manual = tmp_path / "Упаковка.md"
    manual.write_text(MANUAL_MD, encoding="utf-8")
    page.goto(f"{live_app}/b/{bot.slug}/knowledge/")
    page.set_input_files("#id_file", str(manual))
    page.locator("#upload-form button[type=submit]").click()
    expect(page.locator("#upload-status")).to_contain_text(words["imported"], timeout=30_000)
    expect(page.locator("#documents table")).to_contain_text("Упаковка.md", timeout=10_000)  # the page reloads

    # A Q/A pair added, then edited in place (a new version of the same entry).
    page.fill("#id_question", "Есть ли подарочная упаковка?")
    page.fill("#id_answer", "Да, 150 ₽.")
    page.locator("#qa-add button[type=submit]").click()
    row = page.locator("#qa-list .qa-row").first
    expect(row).to_contain_text("Есть ли подарочная упаковка?")
    row.locator("summary").click()
    row.locator("textarea").fill("Да, за 150 ₽, к любому заказу.")
    row.locator("button[value=save]").click()
    expect(page.locator("#qa-list .qa-row").first).to_contain_text("Да, за 150 ₽, к любому заказу.")
    if language == "ru":
        page.screenshot(path=str(shots / "dashboard-knowledge.png"), full_page=True)

    # The overview counts the conversation the owner just had with the widget.
    page.goto(f"{live_app}/")
    expect(page).to_have_url(f"{live_app}/b/{bot.slug}/")
    expect(page.locator('[data-stat="conversations"]')).to_have_text("1")
    expect(page.locator(".stat").first.locator(".label")).to_have_text(words["conversations"])  # one: singular

    # The embed queue finishes the crawl (every page searchable by meaning too): the run is done,
    # and no task is left writing into the bot when the test's rows are flushed.
    page.goto(f"{live_app}/b/{bot.slug}/setup/")
    expect(page.locator("#site .spravka-progress")).to_have_attribute("data-status", "done", timeout=CRAWL_TIMEOUT)
    expect(page.locator('#site .spravka-progress [data-count="embedded"] span')).to_have_text("36")


def test_the_overview_draws_its_charts_and_a_bad_address_is_explained(
    page: Page, live_app: str, shots: Path, django_user_model,
):
    from bots.models import Bot, Membership
    from knowledge.models import Entry, Source
    from tests.owner.dashboard.conftest import seed_activity

    email = "charts@shop.example"
    user = django_user_model.objects.create_user(email, email=email, password=PASSWORD)
    bot = Bot.objects.create(name="ТехноДом", slug="e2e-charts", site_url="https://tehnodom.example/")
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    source = Source.objects.create(bot=bot, kind="manual", title="Вопросы и ответы")
    Entry.objects.create(bot=bot, source=source, kind="qa", title="Есть ли самовывоз?", text="Да.")
    topics = [("Доставляете ли в Казань?", 9), ("Можно ли оплатить долями?", 6), ("Есть ли пункт выдачи в Туле?", 4),
              ("Работаете ли 31 декабря?", 2)]
    for (days_ago, count), (topic, asked) in zip(((1, 6), (8, 4), (15, 5), (22, 3)), topics, strict=True):
        seed_activity(bot, days_ago=days_ago, conversations=count, gap=topic, gap_count=asked)

    page.goto(f"{live_app}/accounts/login/")
    page.fill("#id_username", email)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{live_app}/b/e2e-charts/")
    expect(page.locator('[data-stat="conversations"]')).to_have_text("18")
    for chart in ("chart-accuracy", "chart-outcomes", "chart-gaps"):  # Chart.js (a deferred script) drew each canvas
        page.wait_for_function(f"() => window.Chart && !!Chart.getChart(document.getElementById('{chart}'))")
    page.screenshot(path=str(shots / "dashboard-overview.png"), full_page=True)
    page.get_by_role("link", name="7 дн.").click()
    expect(page.locator('[data-stat="conversations"]')).to_have_text("6")

    # A second bot from the header's "new bot" flow: an unreachable address is named, the typed one kept.
    page.goto(f"{live_app}/start/")
    page.fill("#id_url", "http://127.0.0.1:9/")
    page.get_by_role("button", name="Проверить сайт").click()
    expect(page.locator(".check-error")).to_contain_text("Сайт недоступен")
    expect(page.locator("#id_url")).to_have_value("http://127.0.0.1:9/")
    page.screenshot(path=str(shots / "onboarding-error.png"))
