"""An owner's review session in a real browser against the real app (uvicorn on the test database):
five flagged dialogs, each of the three buttons, J/K, one undo; then a visitor on the shop gets
the correction with its link. Also the Gaps page, the charts page and the digest e-mail, for the
screenshots in docs/screenshots/ (SPRAVKA_SCREENSHOTS=1)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from tests.chat.conftest import KNOWLEDGE
from tests.e2e.conftest import SCREENSHOTS, ShopFactory, owner_page, snippet
from tests.e2e.widget import Widget

# The reach check searches the recent questions: on a loaded machine it may take longer than
# Playwright's default 5 s (it did once, at 2 workers beside other runs).
REACH_WAIT = 30_000

pytestmark = pytest.mark.django_db

PASSWORD = "pw-review-e2e-1"
FIXED = "Доставка по Москве стоит 350 ₽, привезём на следующий день."
ADDED = "Вертолётной площадки у нас нет: приезжайте на машине, парковка бесплатная."
QUESTIONS = [
    "Есть ли у вас парковка для вертолёта на крыше офиса?",  # «Добавить в знания»
    "Сколько стоит доставка по Москве?",  # «Исправить»
    "Можно ли вернуть товар?",  # «Всё верно»
    "Как можно оплатить заказ?",  # «Всё верно», undone, then decided again
    "Продаёте ли вы свадебные торты?",  # reached by J, back with K, «Всё верно»
]


def _ask(bot: Any, text: str, conversation: Any = None) -> Any:
    from chat import services

    if conversation is None:
        conversation = services.conversation_open(bot=bot, visitor_id=f"e2e-{uuid.uuid4().hex[:10]}")
    services.message_receive(conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex)
    return conversation


@pytest.fixture(scope="module")
def session_bot(
    live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker
) -> Iterator[dict[str, Any]]:
    """A bot with the chat fixtures' three entries, an owner with a password, five flagged answers
    (a confidence threshold above every score flags each answer as low confidence)."""
    from django.contrib.auth import get_user_model

    from bots.models import Bot, Membership
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    with django_db_blocker.unblock():
        user = get_user_model().objects.create_user(username="review-owner", email="review@shop.example",
                                                    password=PASSWORD, is_staff=True)
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-review", confidence_threshold=0.99)
    try:
        with django_db_blocker.unblock():
            Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
            origin = shop_factory(snippet(live_app, bot.public_key, title="ТехноДом"))
            bot.site_url, bot.allowed_origins = f"{origin}/", [origin]
            bot.save(update_fields=["site_url", "allowed_origins"])
            for key, title, text, url in KNOWLEDGE:
                entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url,
                                                                   kind=Entry.Kind.QA))
            embed_pending(bot_id=bot.pk)
            for question in QUESTIONS:
                _ask(bot, question)
        yield {"bot": bot, "user": user, "origin": origin}
    finally:  # a failed setup too: later tests of the run share this database
        with django_db_blocker.unblock():
            bot.delete()
            user.delete()
            connections.close_all()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def login(page: Page, app: str, next_path: str) -> None:
    page.goto(f"{app}/admin/login/?next={next_path}")
    page.fill("#id_username", "review-owner")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{app}{next_path}")  # loaded: the queue's keys work from here


def test_an_owner_reviews_five_dialogs_and_the_next_visitor_gets_the_correction(
    page: Page, live_app: str, session_bot: dict[str, Any], shots: Path
):
    login(page, live_app, "/admin/review/reviewitem/")
    position, answer = page.locator("#rq-position"), page.locator("#rq-dialog .rq-msg.visitor").first
    expect(position).to_have_text("1 из 5")
    expect(answer).to_have_text(re.compile("вертолёта"))
    expect(page.locator("#rq-when")).to_contain_text(re.compile(r"\b0,\d\d\b"))  # a decimal comma in Russian
    shots and page.screenshot(path=str(shots / "review-queue.png"))

    # 3: «Добавить в знания» — the typed answer, saved with the button.
    page.keyboard.press("3")
    expect(page.locator("#rq-text")).to_be_focused()
    expect(page.locator("#rq-text")).to_have_value("")
    page.fill("#rq-text", ADDED)
    page.click("#rq-editor button[type=submit]")  # first the reach, then the confirmation saves
    expect(page.locator("#rq-save")).to_contain_text("Подтвердить", timeout=REACH_WAIT)
    page.click("#rq-editor button[type=submit]")
    expect(page.locator("#rq-undo-text")).to_have_text("Сохранено: «Добавить в знания»")
    expect(position).to_have_text("1 из 4")
    expect(answer).to_have_text(re.compile("доставка по Москве"))

    # 2: «Исправить» — prefilled with the bot's answer, saved with Ctrl+Enter; empty is refused first.
    page.keyboard.press("2")
    prefilled = page.locator("#rq-text").input_value()
    assert "300" in prefilled
    page.fill("#rq-text", "")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#rq-error")).to_contain_text("пустой")
    page.locator("#rq-text").press_sequentially("Да")
    expect(page.locator("#rq-count")).to_have_text("2 знака")  # counted in Russian by static/owner/plural.js
    page.fill("#rq-text", FIXED)
    expect(page.locator("#rq-count")).to_have_text(f"{len(FIXED)} знаков")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#rq-save")).to_contain_text("Подтвердить", timeout=REACH_WAIT)
    shots and page.screenshot(path=str(shots / "review-fix.png"))
    page.keyboard.press("Control+Enter")
    expect(page.locator("#rq-undo-text")).to_have_text("Сохранено: «Исправить»")
    expect(answer).to_have_text(re.compile("вернуть товар"))

    # 1: «Всё верно»; then J skips ahead and K comes back.
    page.keyboard.press("1")
    expect(answer).to_have_text(re.compile("оплатить"))
    page.keyboard.press("j")
    expect(answer).to_have_text(re.compile("торты"))
    page.keyboard.press("k")
    expect(answer).to_have_text(re.compile("оплатить"))

    # One undo: the decision is taken back and the dialog is in front again.
    page.keyboard.press("1")
    expect(answer).to_have_text(re.compile("торты"))
    page.keyboard.press("u")
    expect(page.locator("#rq-undo-text")).to_have_text("Решение отменено, ответ снова в очереди.")
    expect(answer).to_have_text(re.compile("оплатить"))
    page.keyboard.press("1")
    expect(answer).to_have_text(re.compile("торты"))
    page.keyboard.press("1")
    expect(page.locator("#rq-empty")).to_be_visible()

    # The next visitor message on the shop: answered from the correction, with its link.
    page.goto(f"{session_bot['origin']}/")
    widget = Widget(page)
    widget.open()
    widget.ask("Сколько стоит доставка в Москве?")
    reply = widget.last("bot")
    expect(reply.locator(".bubble")).to_contain_text("350 ₽", timeout=30000)
    link = reply.locator(".src a")
    expect(link).to_have_attribute("href", re.compile(rf"/answers/{session_bot['bot'].public_key}/fix-[0-9a-f]+/$"))
    shots and page.screenshot(path=str(shots / "review-correction-in-widget.png"))
    href = link.get_attribute("href") or ""
    page.goto(live_app + href[href.index("/answers/"):])
    expect(page.locator("h1")).to_have_text(QUESTIONS[1])
    expect(page.locator(".answer")).to_have_text(FIXED)


@pytest.fixture(scope="module")
def digest_html(session_bot: dict[str, Any], django_db_blocker: DjangoDbBlocker) -> str:
    """More gap questions and a few weeks of earlier decisions, committed (module scope: outside any
    test transaction, so the app sees them and no lock is held); returns the digest's HTML."""
    from django.template.loader import render_to_string
    from django.utils import timezone

    from chat.models import Conversation, Message
    from feedback.digest import digest_context, digest_period
    from feedback.gaps import gaps_refresh
    from feedback.outcomes import outcomes_refresh
    from review.models import ReviewItem

    bot = session_bot["bot"]
    with django_db_blocker.unblock():
        for question in ["Есть ли подарочные сертификаты?", "Продаёте подарочные сертификаты?",
                         "Можно купить подарочный сертификат на 3000 ₽?", "Работаете ли вы с оптовиками?",
                         "Какие условия для оптовых покупателей?", "Есть ли у вас вакансии?"]:
            _ask(bot, question)
        history = [  # (weeks ago, decision, question, then asks for a person)
            (3, "fixed", "Можно ли вернуть товар без чека?", False),
            (3, "fixed", "Сколько дней идёт возврат денег?", True),
            (3, "correct", "Можно оплатить через СБП?", False),
            (2, "fixed", "Доставляете в Тверь?", True),
            (2, "correct", "Принимаете наличные курьеру?", False),
            (2, "correct", "Есть ли доставка курьером в Химки?", False),
            (1, "correct", "Вернёте деньги на карту?", False),
            (1, "correct", "Можно ли оплатить картой на сайте?", False),
            (1, "fixed", "Сколько идёт доставка в другие города?", True),
            (1, "correct", "Какой срок возврата товара?", False),
        ]
        for weeks_ago, decision, question, handed_off in history:
            before = ReviewItem.objects.filter(bot=bot).order_by("-id").values_list("id", flat=True).first() or 0
            conversation = _ask(bot, question)
            if handed_off:
                _ask(bot, "соедините с оператором", conversation=conversation)
            item = ReviewItem.objects.filter(bot=bot, id__gt=before).order_by("id").first()
            assert item is not None, question
            moment = timezone.now() - timedelta(weeks=weeks_ago)
            Message.objects.filter(conversation=conversation).update(created_at=moment)
            Conversation.objects.filter(pk=conversation.pk).update(created_at=moment, updated_at=moment)
            ReviewItem.objects.filter(pk=item.pk).update(
                status="decided", decision=decision, decided_at=moment, answered_at=moment,
            )
        gaps_refresh(bot=bot)
        outcomes_refresh(bot=bot)
        start, end = digest_period()
        html = render_to_string("feedback/digest.html", digest_context(bot=bot, start=start, end=end))
        connections.close_all()
    return html


def test_gaps_charts_and_digest_pages(
    page: Page, live_app: str, session_bot: dict[str, Any], digest_html: str, shots: Path
):
    bot = session_bot["bot"]
    login(page, live_app, "/admin/feedback/gap/")
    expect(page.locator(".gaps-table")).to_be_visible()
    certificates = page.locator(".gaps-table tbody tr", has_text="подарочные сертификаты")
    expect(certificates.locator(".gaps-count")).to_have_text("3")
    shots and page.screenshot(path=str(shots / "gaps.png"), full_page=True)

    page.goto(f"{live_app}/admin/feedback/outcome/?bot={bot.pk}")
    expect(page.locator("#chart-accuracy")).to_be_visible()
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 2")
    shots and page.screenshot(path=str(shots / "accuracy-charts.png"), full_page=True)

    page.set_content(digest_html)
    expect(page.locator("h1")).to_contain_text("ТехноДом")
    shots and page.screenshot(path=str(shots / "digest-email.png"), full_page=True)


ENGRAVING = "Делаете ли вы гравировку на технике?"
ENGRAVING_ANSWER = "Да, лазерную гравировку делаем на корпусах ноутбуков и телефонов за 990 ₽, срок — 2 дня."


@pytest.fixture(scope="module")
def operator_answered(session_bot: dict[str, Any], django_db_blocker: DjangoDbBlocker) -> Iterator[None]:
    """A handed-off conversation the operator answered (committed: the server must see it)."""
    from django.contrib.auth import get_user_model

    from bots.models import Membership
    from chat import handoff

    bot = session_bot["bot"]
    with django_db_blocker.unblock():
        operator = get_user_model().objects.create_user(username="review-operator", email="op@shop.example",
                                                        first_name="Анна", is_staff=True)
    try:
        with django_db_blocker.unblock():
            Membership.objects.create(bot=bot, user=operator, role=Membership.Role.OPERATOR)
            conversation = _ask(bot, ENGRAVING)
            _ask(bot, "Позовите оператора", conversation)
            handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
            for text in ("Здравствуйте! Сейчас уточню.", ENGRAVING_ANSWER):
                handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text=text,
                                              client_msg_id=uuid.uuid4().hex)
            handoff.conversation_finish(conversation_id=conversation.pk, operator=operator)
        yield
    finally:
        with django_db_blocker.unblock():
            operator.delete()


def test_an_operators_answer_goes_into_the_knowledge_from_the_gaps_page(
    page: Page, live_app: str, session_bot: dict[str, Any], operator_answered: None,
    django_db_blocker: DjangoDbBlocker, shots: Path,
):
    from knowledge.models import Entry

    bot = session_bot["bot"]
    login(page, live_app, "/admin/feedback/gap/")
    proposal = page.locator(".gaps-proposal", has_text="гравировк")
    expect(proposal.locator("textarea")).to_have_value(ENGRAVING_ANSWER)  # small talk left out
    proposal.locator("textarea").fill(ENGRAVING_ANSWER + " Шрифт — на выбор.")
    shots and page.screenshot(path=str(shots / "gaps-operator-answer.png"), full_page=True)
    proposal.get_by_role("button", name="Добавить в справку").click()
    expect(page.locator(".messagelist")).to_contain_text("Добавлено в справку")
    expect(page.locator(".gaps-proposal", has_text="гравировк")).to_have_count(0)
    with django_db_blocker.unblock():
        assert Entry.objects.filter(bot=bot, kind=Entry.Kind.QA, text__endswith="Шрифт — на выбор.").count() == 1


FRAME = {  # the tab each admin page an owner works in marks, and the inbox's way back, per language
    "ru-RU": {"review": "Очередь проверки", "gaps": "Пробелы в знаниях", "more": "Ещё", "back": "Кабинет владельца",
              "position": "{} из {}", "overview": "Обзор"},
    "en-US": {"review": "Review queue", "gaps": "Knowledge gaps", "more": "More", "back": "Owner dashboard",
              "position": "{} of {}", "overview": "Overview"},
}


def _owner_header(tab: Page, slug: str, words: dict[str, str]) -> None:
    """The dashboard's header, not the admin's: the bot's tabs, no admin branding, breadcrumbs or sidebar."""
    nav = tab.locator("header.top nav.tabs")
    expect(nav.get_by_role("link", name=words["overview"], exact=True)).to_have_attribute("href", f"/b/{slug}/")
    expect(tab.locator("#site-name, #nav-sidebar, .breadcrumbs")).to_have_count(0)


@pytest.mark.parametrize("locale", ["ru-RU", "en-US"])
def test_the_queue_gaps_and_inbox_wear_the_dashboards_header_and_lead_back(
    browser: Browser, live_app: str, session_bot: dict[str, Any], digest_html: str, shots: Path, locale: str,
):
    """The review queue and Gaps keep the admin's views and keys under the dashboard's header and tabs,
    their own tab marked; the inbox leads back to the overview (screenshots at 1024 and 1280 px). After
    the decisions above the queue holds the digest's new questions; Gaps holds their topics."""
    bot, words = session_bot["bot"], FRAME[locale]
    lang = locale[:2]
    with owner_page(browser, live_app, locale=locale) as tab:
        login(tab, live_app, f"/admin/review/reviewitem/?bot={bot.pk}")
        _owner_header(tab, bot.slug, words)
        current = tab.locator('header.top nav.tabs a[aria-current="page"]')
        expect(current).to_have_count(1)
        expect(current).to_have_text(words["review"])
        # The queue's keys still work under the new header: J moves to the next dialog.
        total = int(re.split(r"\D+", tab.locator("#rq-position").inner_text().strip())[-1])
        assert total >= 2
        expect(tab.locator("#rq-position")).to_have_text(words["position"].format(1, total))
        tab.keyboard.press("j")
        expect(tab.locator("#rq-position")).to_have_text(words["position"].format(2, total))
        for width in (1024, 1280):
            tab.set_viewport_size({"width": width, "height": 800})
            tab.screenshot(path=str(shots / f"frame-queue-{width}-{lang}.png"))

        tab.goto(f"{live_app}/admin/feedback/gap/?bot={bot.pk}")
        _owner_header(tab, bot.slug, words)
        expect(tab.locator("header.top details.more.has-current summary")).to_have_text(words["more"])
        expect(tab.locator('header.top a[aria-current="page"]')).to_have_text(words["gaps"])
        expect(tab.locator(".gaps-table")).to_be_visible()
        for width in (1024, 1280):
            tab.set_viewport_size({"width": width, "height": 800})
            tab.screenshot(path=str(shots / f"frame-gaps-{width}-{lang}.png"))

        tab.goto(f"{live_app}/inbox/")
        back = tab.locator("header.top").get_by_role("link", name=words["back"])
        for width in (1024, 1280):
            tab.set_viewport_size({"width": width, "height": 800})
            tab.screenshot(path=str(shots / f"frame-inbox-{width}-{lang}.png"))
        back.click()
        expect(tab).to_have_url(f"{live_app}/b/{bot.slug}/")  # one bot: its overview

        # The icon browsers ask for on every page, of the app and of the demo shop, is there.
        for origin in (live_app, session_bot["origin"]):
            icon = tab.request.get(f"{origin}/favicon.ico")
            assert icon.ok and icon.headers["content-type"].startswith("image/"), (origin, icon.status)
