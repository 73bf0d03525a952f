"""Words an owner knows on the voice and experiments pages: every slider and threshold says what it
changes in one line, with its value in sight, in Russian and in English; without a model the pages
say that tone and conditions change nothing yet and name what works (thresholds, the dictionary)."""

from __future__ import annotations

from html import escape

import pytest

from tests.owner.tuning.test_views_experiments import _url as experiments_url

pytestmark = pytest.mark.django_db

WORDS = {
    "ru": {
        "sliders": ["Как бот обращается к посетителю", "Сколько сочувствия бот добавляет", "Длина ответа:",
                    "Настойчивость", "Насколько прямо бот советует"],
        "tone_needs_model": "Модель не подключена, поэтому сейчас тон ответов не меняет.",
        "thresholds": ["Насколько уверенным должен быть бот, чтобы ответить (порог совпадения)",
                       "Ниже какой уверенности ответ идёт на проверку (порог уверенности)",
                       "Бот отвечает, только если нашёл в знаниях запись", "попадает в «Очередь проверки»",
                       "Сейчас у бота: 0,485.", "Сейчас у бота: 0,67."],
        "no_model": ["Модель не подключена: бот отвечает записями знаний как они есть",
                     "Без модели работают пороги", "Словарь и запрещённые слова на странице «Голос»",
                     "Тон и условия действуют только с подключённой моделью.", "тон (слайдеры) — нужна модель"],
        "first_without": "Без модели начните с порогов",
        "first_with": "Начните с тона",
        "jargon": ["Ассертивность"],
    },
    "en": {
        "sliders": ["How the bot addresses the visitor", "How much sympathy the bot adds", "The answer's length:",
                    "Assertiveness", "How directly the bot advises"],
        "tone_needs_model": "No model is connected, so tone does not change the answers now.",
        "thresholds": ["How sure the bot must be to answer (match threshold)",
                       "Below what certainty an answer goes to review (confidence threshold)",
                       "The bot answers only when it finds a knowledge entry", "it goes to the review queue",
                       "The bot's current value: 0.485.", "The bot's current value: 0.67."],
        "no_model": ["No model is connected: the bot answers with knowledge entries as they are",
                     "Without a model the thresholds work", "The dictionary and forbidden words on the Voice page",
                     "Tone and conditions work only with a connected model.", "— needs a model"],
        "first_without": "Without a model, start with the thresholds",
        "first_with": "Start with the tone",
        "jargon": [],
    },
}


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_each_slider_says_what_it_changes_and_that_it_needs_a_model(owner_client, bot, lang):
    words = WORDS[lang]
    page = owner_client.get(f"/b/{bot.slug}/voice/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for text in words["sliders"]:
        assert escape(text) in page, text
    assert page.count('class="help slider-hint"') == 4
    assert 'id="slider_brevity-level">3</span> / 5' in page  # the value stays in sight
    assert words["tone_needs_model"] in page
    for text in words["jargon"]:
        assert text not in page


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_without_a_model_the_experiments_page_names_what_works_and_starts_with_thresholds(owner_client, bot, lang):
    words = WORDS[lang]
    page = owner_client.get(experiments_url(bot), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    first = words["first_without"]
    assert isinstance(first, str)
    for text in [*words["thresholds"], *words["no_model"], first]:
        assert escape(text) in page or text in page, text  # a translated template text is not escaped
    assert words["first_with"] not in page
    assert '<option value="threshold" selected>' in page  # the form opens on what can change answers
    assert 'id="variant_brevity-level">3</span> / 5' in page


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_with_a_model_the_page_suggests_tone_and_warns_of_nothing(owner_client, bot, fake_llm, lang):
    words = WORDS[lang]
    page = owner_client.get(experiments_url(bot), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    assert words["first_with"] in page and words["first_without"] not in page
    assert 'id="no-model"' not in page and words["no_model"][3] not in page
    assert '<option value="voice" selected>' in page
    for text in words["thresholds"]:
        assert escape(text) in page or text in page, text
