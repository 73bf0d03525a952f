"""An owner tunes the bot's voice in Chromium, on the real app (uvicorn) talking to the fake
Messages API: a slider moved and a dictionary row added show side by side in the preview before
saving; then an A/B experiment started from its page shows its verdict and chart after simulated
traffic through the real chat services.

Refresh docs/screenshots/voice-preview.png and experiments.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_voice_live.py"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.chat.conftest import DELIVERY_QUESTION, KNOWLEDGE, UNKNOWN_QUESTION
from tests.e2e.conftest import serving_app
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import FakeLLMServer, tool_use

pytestmark = pytest.mark.django_db

PASSWORD = "e2e-voice-pass-1"
SLUG = "e2e-voice"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def voice_app(django_db_setup: None, django_db_blocker: DjangoDbBlocker, model: FakeLLMServer) -> Iterator[str]:
    """The real app under uvicorn on the test database, with the fake Messages API as its model."""
    with serving_app(django_db_blocker, LLM_PROVIDER="anthropic", ANTHROPIC_API_KEY=FAKE_ANTHROPIC_KEY,
                     ANTHROPIC_BASE_URL=model.url) as url:
        yield url


@pytest.fixture(scope="module")
def shop(voice_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, object]]:
    """An owner and their shop bot with its three entries, committed so that the app sees them."""
    from bots.models import Bot
    from bots.services import membership_add
    from knowledge.drafts import EntryDraft
    from knowledge.indexing import embed_pending
    from knowledge.models import Entry
    from knowledge.services import entry_upsert

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="Демо-магазин", slug=SLUG, site_url="https://shop.example/",
                                 allowed_origins=[voice_app])
        owner = membership_add(bot=bot, email="owner@e2e-voice.example", role="owner", password=PASSWORD)
        for key, title, text, url in KNOWLEDGE:
            entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, url=url,
                                                                kind=Entry.Kind.QA))
        embed_pending(bot_id=bot.pk)
        user = owner.membership.user
    yield {"bot": bot, "username": user.username}
    with django_db_blocker.unblock():
        bot.delete()
        user.delete()
        connections.close_all()


def _sign_in(page: Page, url: str, username: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    page.wait_for_load_state()


def _answer(text: str) -> dict[str, object]:
    return {"intent": "question", "source": 0, "answer": text, "product_query": "", "fixed": ""}


def test_an_owner_sees_a_slider_and_a_dictionary_change_side_by_side_before_saving(
    page: Page, voice_app: str, shop: dict, model: FakeLLMServer, shots: Path, django_db_blocker: DjangoDbBlocker,
):
    from bots.models import Bot

    page.set_viewport_size({"width": 1280, "height": 1000})
    _sign_in(page, voice_app, str(shop["username"]))
    page.goto(f"{voice_app}/b/{SLUG}/voice/")
    expect(page.locator("h1")).to_have_text("Голос бота")
    brevity = page.locator("#slider_brevity")
    expect(page.locator("#slider_brevity-meaning")).to_have_text("Как в основных правилах: коротко и вежливо.")
    brevity.focus()
    brevity.press("End")  # the keyboard moves a range input: level 5
    expect(page.locator("#slider_brevity-level")).to_have_text("5")
    expect(page.locator("#slider_brevity-meaning")).to_have_text(
        "Отвечайте предельно коротко: одно предложение, только главное."
    )
    page.fill("#conditions", "Всегда предлагайте самовывоз.")
    expect(page.locator("#conditions-count")).to_contain_text("29 из 2000 знаков")
    page.locator("input[name=term]").last.fill("доставка")
    page.locator("input[name=replacement]").last.fill("курьерская доставка")
    page.click("#add-row")
    expect(page.locator("input[name=term]")).to_have_count(2)
    page.fill("#question", DELIVERY_QUESTION)
    model.script(
        tool_use(_answer("Доставка по Москве — на следующий день, стоимость 300 ₽. Будем рады помочь с любым вопросом "
                         "о вашем заказе!")),
        tool_use(_answer("Доставка по Москве — 300 ₽.")),
    )
    page.click("#preview-button")
    current, edited = page.locator("#side-current"), page.locator("#side-edited")
    expect(current.locator(".answer")).to_contain_text("Доставка по Москве — на следующий день")
    expect(edited.locator(".answer")).to_have_text("Курьерская доставка по Москве — 300 ₽.")
    edited.locator("summary").click()
    expect(edited.locator("pre.prompt")).to_contain_text("Отвечайте предельно коротко")
    expect(edited.locator("pre.prompt")).to_contain_text("Всегда предлагайте самовывоз.")
    expect(page.locator("#slider_brevity")).to_have_value("5")  # the edits stay in the form, unsaved
    assert "Отвечайте предельно коротко" in model.requests[-1].body["system"][1]["text"]
    assert len(model.requests[-2].body["system"]) == 1  # the saved voice is still the untuned one
    with django_db_blocker.unblock():
        assert Bot.objects.get(slug=SLUG).voice == {}
    page.screenshot(path=str(shots / "voice-preview.png"), full_page=True)

    page.click("#save-button")
    expect(page.locator(".messages")).to_contain_text("Настройки голоса сохранены")
    with django_db_blocker.unblock():
        saved = Bot.objects.get(slug=SLUG).voice
    assert saved["sliders"]["brevity"] == 5 and saved["preferred"] == [["доставка", "курьерская доставка"]]


def test_an_owner_starts_an_experiment_and_reads_its_verdict(
    page: Page, voice_app: str, shop: dict, shots: Path, django_db_blocker: DjangoDbBlocker,
):
    from bots.models import Bot
    from chat import services

    page.set_viewport_size({"width": 1280, "height": 1000})
    _sign_in(page, voice_app, str(shop["username"]))
    page.goto(f"{voice_app}/b/{SLUG}/experiments/")
    expect(page.locator(".empty")).to_contain_text("Экспериментов ещё не было")
    page.fill("#name", "Строгий порог совпадения")
    page.select_option("#kind", "threshold")
    expect(page.locator("fieldset[data-kind=threshold]")).to_be_visible()
    expect(page.locator("fieldset[data-kind=voice]")).to_be_hidden()
    page.fill("#variant_match_threshold", "1.5")
    page.click("text=Начать эксперимент")
    expect(page.locator(".errorlist")).to_contain_text("«Порог совпадения» — число от 0 до 1")
    page.fill("#variant_match_threshold", "0.99")
    page.click("text=Начать эксперимент")
    expect(page.locator("#verdict")).to_contain_text("Данных пока мало")
    # Simulated traffic through the real services (retrieval only in this process), committed from
    # a thread of its own (outside this test's transaction) so that the app sees it: arm B's
    # threshold lets no entry through, arm A answers three questions in four.
    def traffic() -> None:
        try:
            bot = Bot.objects.get(slug=SLUG)
            for n in range(240):
                conversation = services.conversation_open(bot=bot, visitor_id=f"e2e{n}")
                question = UNKNOWN_QUESTION if n % 4 == 0 else DELIVERY_QUESTION
                services.message_receive(conversation=conversation, text=question, client_msg_id="c1")
        finally:
            connections.close_all()

    with django_db_blocker.unblock():
        worker = threading.Thread(target=traffic)
        worker.start()
        worker.join(300)
    page.reload()
    expect(page.locator("#verdict")).to_contain_text("Вариант А лучше по показателю «бот ответил»")
    expect(page.locator("#chart-arms")).to_be_visible()
    page.wait_for_function("() => window.Chart && Chart.getChart('chart-arms')")
    page.screenshot(path=str(shots / "experiments.png"), full_page=True)
    page.click("text=Остановить, оставить вариант А")
    expect(page.locator(".messages")).to_contain_text("Эксперимент остановлен")
    with django_db_blocker.unblock():
        assert "experiment" not in Bot.objects.get(slug=SLUG).voice


def test_in_english_the_page_and_the_preview_speak_english(
    page: Page, voice_app: str, shop: dict, model: FakeLLMServer, shots: Path,
):
    page.set_viewport_size({"width": 1280, "height": 1000})
    _sign_in(page, voice_app, str(shop["username"]))
    page.goto(f"{voice_app}/b/{SLUG}/voice/")
    page.select_option("#language", "en")
    expect(page.locator("h1")).to_have_text("Bot voice")
    formality = page.locator("#slider_formality")
    formality.focus()
    formality.press("Home")  # level 1
    expect(page.locator("#slider_formality-meaning")).to_have_text(
        "Be informal, like talking to a friend: plain everyday words."
    )
    page.fill("#question", "Can you help me with my purchase?")
    talk = {"intent": "smalltalk", "source": -1, "product_query": "", "fixed": ""}
    model.script(
        tool_use({**talk, "answer": "Good afternoon. I will gladly help you with your purchase."}),
        tool_use({**talk, "answer": "Hey! Sure thing, let's sort out your purchase."}),
    )
    page.click("text=Compare")
    expect(page.locator("#side-current h3")).to_have_text("Now")
    expect(page.locator("#side-edited h3")).to_have_text("With your changes")
    expect(page.locator("#side-edited .answer")).to_contain_text("Hey!")
    assert "Be informal, like talking to a friend" in model.requests[-1].body["system"][1]["text"]
    page.screenshot(path=str(shots / "voice-preview-en.png"), full_page=False)
