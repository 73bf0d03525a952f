"""The bot's settings page in the admin names its three search numbers as a shop owner reads them
and says in one line what each changes, in Russian and in English, with the value in its field."""

from __future__ import annotations

from html import escape

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

WORDS = {
    "ru": ["Когда бот отвечает", "Насколько уверенным должен быть бот, чтобы ответить (порог совпадения)",
           "иначе говорит «нет точного ответа» и предлагает оператора",
           "Ниже какой уверенности ответ идёт на проверку (порог уверенности)",
           "попадает в «Очередь проверки», где вы подтверждаете или исправляете его",
           "Насколько ваши исправления важнее страниц сайта (перевес поправки)",
           "так исправление побеждает страницу, на которой бот ошибся"],
    "en": ["When the bot answers", "How sure the bot must be to answer (match threshold)",
           "otherwise it says it has no exact answer and offers an operator",
           "Below what certainty an answer goes to review (confidence threshold)",
           "it goes to the review queue, where you confirm or correct it",
           "How much your corrections outweigh the site's pages (correction bonus)",
           "so the correction beats the page the bot got wrong"],
}


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_each_threshold_is_named_and_explained_with_its_value(client, owner, bot, lang):
    client.force_login(owner)
    page = client.get(reverse("admin:bots_bot_change", args=[bot.pk]), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for text in WORDS[lang]:
        assert escape(text) in page, text
    # the value in its field (a number input: a dot in every language), the line that explains it beside
    assert 'name="match_threshold" value="0.485"' in page and 'aria-describedby="id_match_threshold_helptext"' in page
