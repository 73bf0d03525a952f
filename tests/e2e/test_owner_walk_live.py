"""Issue 12's walk: a new owner, in Chromium against the real app (uvicorn), a real Celery worker and
the demo shop, from signing in to a working widget snippet, in Russian and in English.

Sign in (the English owner turns the page English with the header's switch) → `/start/`: the site
is checked (robots.txt and the sitemap shown) → the bot is created and its crawl's progress bar
moves to done without a reload → the widget on the setup page answers with a link to its source →
one question hit-tested: ranked passages → a batch test set of three questions saved and run: its
progress, then its results → the bot gets a model (the fake Messages API) and a voice slider and a
dictionary term show their difference side by side in the preview → back to setup: the snippet
copied (the clipboard read back) and the allowed origins saved as a list; the copied tag on the
shop's own page (another origin) brings up the widget, which answers a visitor.

In English every page's chrome (headers, tabs, buttons, labels) has no Cyrillic; the shop's own
data (its pages, the bot's answers, the questions typed) stays Russian.

Refresh docs/screenshots/owner-walk-*.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_owner_walk_live.py"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connections, transaction
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.chrome import russian_chrome
from tests.e2e.conftest import ShopFactory, owner_page, serving_app
from tests.e2e.widget import Widget
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import FakeLLMServer, tool_use

# transaction=True: every row (the account, then what the app and the worker write) is committed,
# so the app's process, the worker and the test see each other's writes.
pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "e2e-walk-pass-1"
CRAWL_TIMEOUT = 180_000  # ms: 36 pages fetched and embedded on a busy 2-core machine
RUN_TIMEOUT = 90_000
HIT_QUESTION = "Сколько стоит доставка по Москве?"
TRY_QUESTION = "Можно ли вернуть товар?"
UNKNOWN = "Есть ли у вас парковка для вертолёта на крыше офиса?"
SET_NAME = "Частые вопросы"
# The model's two answers (no number in them: the fact check would want it in the cited entry).
SLOW, BRIEF = ("Доставка по Москве — нашими собственными курьерами. Будем рады помочь с любым вопросом о вашем заказе!",
               "Доставка по Москве — нашими курьерами.")
NEW_ORIGIN = "https://www.tehnodom.example"
TEXTS = {
    "ru": {"check": "Проверить сайт", "create": "Создать бота и прочитать сайт", "hit": "Проверить",
           "robots": "robots.txt найден и разрешает обход.", "sitemap": "Страниц в карте сайта: 36.",
           "done": "готово", "new_set": "Новый набор", "save": "Сохранить", "run": "Запустить",
           "progress": "Готово 0 из 3", "as_expected": "как ожидалось", "compare": "Сравнить",
           "now": "Сейчас", "edited": "С изменениями", "copied": "Скопировано.", "save_list": "Сохранить список",
           "saved_list": "Список сайтов виджета сохранён.", "testing": "Проверка бота", "voice": "Голос бота"},
    "en": {"check": "Check the site", "create": "Create the bot and read the site", "hit": "Check",
           "robots": "robots.txt found; it allows crawling.", "sitemap": "Pages in the sitemap: 36.",
           "done": "done", "new_set": "New set", "save": "Save", "run": "Run",
           "progress": "Done 0 of 3", "as_expected": "as expected", "compare": "Compare",
           "now": "Now", "edited": "With your changes", "copied": "Copied.", "save_list": "Save the list",
           "saved_list": "The widget's sites are saved.", "testing": "Testing the bot", "voice": "Bot voice"},
}
# Regions that show the shop's data as it is (crawled pages, the bot's answers, what the owner typed).
SHOP_DATA = ", ".join([
    ".source strong", ".spravka-progress-message", ".answer-text", ".answer-link", ".fake-button", ".entry-title",
    ".results tbody td:nth-child(2)", ".results .answer-cell", ".results tbody td:nth-child(5)", ".bubble",
    "#snippet-code", "#site-check .ok:first-child",
])


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def walk_app(django_db_setup: None, django_db_blocker: DjangoDbBlocker, model: FakeLLMServer) -> Iterator[str]:
    """The real app with the fake Messages API configured but not the default: a bot answers
    retrieval-only until its own model settings name the provider (as staff set them in the admin)."""
    with serving_app(django_db_blocker, ANTHROPIC_API_KEY=FAKE_ANTHROPIC_KEY, ANTHROPIC_BASE_URL=model.url) as url:
        yield url


@pytest.fixture(params=["ru", "en"])
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def tab(browser: Browser, walk_app: str) -> Iterator[Page]:
    # A Russian browser in both runs: the English owner turns the UI English with the switch.
    with owner_page(browser, walk_app, locale="ru-RU") as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        yield page


@contextmanager
def batch_results_held() -> Iterator[None]:
    """Hold the batch results table (a SHARE lock in a transaction of its own): a run the worker
    starts waits before storing its first answer, so the page is seen with the run in progress
    however fast the worker is. Released on leaving the block; the run then goes on."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        from django.db import connection

        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("LOCK TABLE insights_batchresult IN SHARE MODE")
                locked.set()
                release.wait(120)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold, name="hold-batch-results")
    holder.start()
    assert locked.wait(30), "could not lock the batch results table"
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def shop_data(bot: Any) -> list[str]:
    """The shop's own texts the pages may show: its name, its pages and entries, the chat, the set."""
    from chat.models import Message
    from knowledge.models import Entry, Source
    from owner.insights.models import BatchResult, SetQuestion

    data = [bot.name, HIT_QUESTION, TRY_QUESTION, UNKNOWN, SET_NAME, SLOW, BRIEF, "доставка", "курьерская доставка"]
    data += [t for t in Source.objects.filter(bot=bot).values_list("title", flat=True) if t]
    for title, text in Entry.objects.filter(bot=bot).values_list("title", "text"):
        data += [title, text]
    data += list(Message.objects.filter(conversation__bot=bot).values_list("text", flat=True))
    data += list(SetQuestion.objects.filter(question_set__bot=bot).values_list("question", flat=True))
    for answer, title in BatchResult.objects.filter(run__bot=bot).values_list("answer", "cited_title"):
        data += [answer, title]
    return sorted({d for d in data if d}, key=len, reverse=True)


def look(page: Page, language: str, bot: Any, shots: Path, step: str | None = None) -> None:
    """The page is in the walk's language (in English: no Russian in its chrome); `step`: a screenshot."""
    expect(page.locator("html")).to_have_attribute("lang", re.compile(f"^{language}"))
    if language == "en":
        left = russian_chrome(page, shop_data(bot) if bot is not None else [], skip=SHOP_DATA)
        assert left == [], f"{page.url}: Russian in the English page's chrome: {left}"
    if step:
        page.screenshot(path=str(shots / f"owner-walk-{step}-{language}.png"), full_page=True)


def test_a_new_owner_walks_from_login_to_a_working_widget_snippet(
    tab: Page, walk_app: str, model: FakeLLMServer, demo_site: str, language: str, shots: Path,
    celery_worker_thread: object, django_user_model: Any, shop_factory: ShopFactory,
):
    from bots.models import Bot
    from llm.models import BotLLMSettings

    page, words = tab, TEXTS[language]
    email = f"walk-{language}@tehnodom.example"
    django_user_model.objects.create_user(email, email=email, password=PASSWORD)

    # Sign in; the English owner switches the language on the login page (a cookie from then on).
    page.goto(f"{walk_app}/accounts/login/")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    if language == "en":
        page.select_option("#language-login", "en")
        expect(page.locator("input[type=submit]")).to_have_value("Log in")
    look(page, language, None, shots)
    page.fill("#id_username", email)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{walk_app}/start/")  # no bot yet: onboarding

    # The site is checked first: robots.txt and the sitemap, before anything is created.
    page.fill("#id_url", demo_site)
    page.fill("#id_name", "ТехноДом")
    page.get_by_role("button", name=words["check"]).click()
    check = page.locator("#site-check")
    expect(check).to_contain_text(words["robots"])
    expect(check).to_contain_text(words["sitemap"])
    assert not Bot.objects.filter(memberships__user__username=email).exists()
    look(page, language, None, shots, "check")

    # Created: the setup page, its crawl moving to done without a reload.
    page.get_by_role("button", name=words["create"]).click()
    expect(page).to_have_url(re.compile(rf"{re.escape(walk_app)}/b/[\w-]+/setup/$"))
    bot = Bot.objects.get(name="ТехноДом", memberships__user__username=email)
    box = page.locator("#site .spravka-progress")
    expect(box).to_be_visible()
    assert int(box.locator("progress").get_attribute("value") or 0) < 100
    page.evaluate("window.__sameSetupPage = true")
    expect(box).to_have_attribute("data-status", "done", timeout=CRAWL_TIMEOUT)
    expect(box.locator("progress")).to_have_js_property("value", 100)
    expect(box.locator(".spravka-progress-label")).to_contain_text(words["done"])
    expect(box.locator('[data-count="embedded"] span')).to_have_text("36")
    assert page.evaluate("window.__sameSetupPage") is True  # the bar moved by itself, not by a reload

    # Try the bot on the page: the real widget answers from the crawled page, with its link.
    widget = Widget(page)
    widget.open()
    widget.ask(TRY_QUESTION)
    expect(widget.last("bot").locator(".src a").first).to_have_attribute(
        "href", re.compile(re.escape(demo_site) + "/returns/"), timeout=60_000)
    look(page, language, bot, shots, "try")
    widget.launcher.click()  # closed again

    # Hit testing: one question, the ranked passages with their scores.
    page.locator(f'.tabs a[href="/b/{bot.slug}/testing/"]').click()
    expect(page.locator("h1")).to_have_text(words["testing"])
    page.fill("#question", HIT_QUESTION)
    page.get_by_role("button", name=words["hit"], exact=True).click()
    expect(page.locator(".answer-card")).to_have_attribute("data-route", "search", timeout=60_000)
    rows = page.locator(".passages tbody tr")
    expect(rows.first.locator("td").first).to_have_text("1")
    scores = [float(s.replace(",", ".")) for s in page.locator(".passages .score strong").all_inner_texts()]
    assert len(scores) >= 2 and scores == sorted(scores, reverse=True), scores
    expect(page.locator(".passages tr.cited")).to_have_count(1)
    look(page, language, bot, shots, "hit")

    # A batch test set of three questions, saved and run: its progress, then its results.
    page.get_by_role("link", name=words["new_set"]).click()
    look(page, language, bot, shots)
    page.fill("#set-name", SET_NAME)
    page.fill("#set-questions", f"{TRY_QUESTION} | {demo_site}/returns/\n{HIT_QUESTION}\n{UNKNOWN}")
    page.get_by_role("button", name=words["save"], exact=True).click()
    expect(page.locator("h1")).to_have_text(SET_NAME)
    with batch_results_held():
        page.get_by_role("button", name=words["run"], exact=True).click()
        progress = page.locator(".run .progress-box")
        expect(progress.locator("progress")).to_be_visible()
        expect(progress.locator(".progress-label")).to_have_text(words["progress"])
        look(page, language, bot, shots)
    expect(page.locator(".run .status-done")).to_be_visible(timeout=RUN_TIMEOUT)  # the page reloads itself
    results = page.locator(".results tbody tr")
    expect(results).to_have_count(3)
    expect(results.nth(0).locator("td").nth(4).locator("a")).to_have_attribute(
        "href", re.compile(re.escape(demo_site) + "/returns/"))
    expect(results.nth(0)).to_contain_text(words["as_expected"])
    look(page, language, bot, shots, "batch")

    # The bot gets a model; the voice page: a slider and a dictionary term, compared before saving.
    BotLLMSettings.objects.create(bot=bot, provider=BotLLMSettings.Provider.ANTHROPIC)
    page.locator(f'.tabs a[href="/b/{bot.slug}/voice/"]').click()
    expect(page.locator("h1")).to_have_text(words["voice"])
    brevity = page.locator("#slider_brevity")
    brevity.focus()
    brevity.press("End")  # the keyboard moves a range input: level 5
    expect(page.locator("#slider_brevity-level")).to_have_text("5")
    page.locator("input[name=term]").last.fill("доставка")
    page.locator("input[name=replacement]").last.fill("курьерская доставка")
    page.fill("#question", HIT_QUESTION)
    answer = {"intent": "question", "source": 0, "product_query": "", "fixed": ""}
    model.script(tool_use({**answer, "answer": SLOW}), tool_use({**answer, "answer": BRIEF}))
    page.get_by_role("button", name=words["compare"]).click()
    current, edited = page.locator("#side-current"), page.locator("#side-edited")
    expect(current.locator("h3")).to_have_text(words["now"])
    expect(edited.locator("h3")).to_have_text(words["edited"])
    expect(current.locator(".answer")).to_have_text(SLOW)
    expect(edited.locator(".answer")).to_have_text("Курьерская доставка по Москве — нашими курьерами.")
    assert len(model.requests[-2].body["system"]) == 1  # the saved voice adds nothing yet
    assert "Отвечайте предельно коротко" in model.requests[-1].body["system"][1]["text"]
    expect(page.locator("#slider_brevity")).to_have_value("5")  # the edits stay in the form, unsaved
    bot.refresh_from_db()
    assert bot.voice == {}
    look(page, language, bot, shots, "voice")

    # Back to setup: the snippet copied to the clipboard as shown; the allowed origins as a list.
    page.locator(f'.tabs a[href="/b/{bot.slug}/setup/"]').click()
    page.locator("#copy-snippet").click()
    expect(page.locator("#copy-status")).to_have_text(words["copied"])
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#snippet-code").text_content()
    assert f'data-bot="{bot.public_key}"' in copied and f'src="{walk_app}/static/assistant/widget.js"' in copied
    shop = shop_factory(copied)  # the shop's own pages (another origin) with the copied tag in them
    origins = page.locator("#origins textarea")
    expect(origins).to_have_value(demo_site)  # the crawled site's, from onboarding
    origins.fill(f"{demo_site}\n{shop}/\n\n{NEW_ORIGIN}/returns/\n")
    page.get_by_role("button", name=words["save_list"]).click()
    expect(page.locator(".messages")).to_contain_text(words["saved_list"])
    expect(origins).to_have_value(f"{demo_site}\n{shop}\n{NEW_ORIGIN}")
    bot.refresh_from_db()
    assert bot.allowed_origins == [demo_site, shop, NEW_ORIGIN]
    page.locator("#snippet").scroll_into_view_if_needed()
    look(page, language, bot, shots, "snippet")

    # The snippet works: on the shop's page the widget answers a visitor, with the source's link.
    visitor = page.context.new_page()
    visitor.goto(f"{shop}/returns/")
    on_shop = Widget(visitor)
    on_shop.open()
    on_shop.ask(TRY_QUESTION)
    expect(on_shop.last("bot").locator(".src a").first).to_have_attribute(
        "href", re.compile(re.escape(demo_site) + "/returns/"), timeout=60_000)
