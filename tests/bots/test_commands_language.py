"""Management commands speak the installation's language (SPRAVKA_LANGUAGE, Russian by default):
the same command in Russian and, with English active, in English.

Cross-cutting: the language of two commands (createbot, apikey) set by SPRAVKA_LANGUAGE."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_createbot_and_apikey_in_russian_and_in_english():
    assert "Бот «lang-ru» создан" in run("createbot", "lang-ru", "--site", "https://ru.example/")
    assert "У бота нет ключей API" in run("apikey", "lang-ru", "--list")
    with translation.override("en"):
        assert "Bot “lang-en” created. Widget key:" in run("createbot", "lang-en", "--site", "https://en.example/")
        assert "The bot has no API keys." in run("apikey", "lang-en", "--list")
        with pytest.raises(CommandError, match="Bot “nobody” not found"):
            run("crawl", "nobody")
    with pytest.raises(CommandError, match="Бот «nobody» не найден"):
        run("crawl", "nobody")
