"""`manage.py gaps` speaks the installation's language (SPRAVKA_LANGUAGE) and writes its dates the
way that language does; `--json` is the same in both."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from feedback.models import Gap

pytestmark = pytest.mark.django_db

ENGLISH = override_settings(LANGUAGE_CODE="en")  # what SPRAVKA_LANGUAGE=en sets


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_gaps_in_russian_and_in_english(bot):
    assert run("gaps", bot.slug) == "Пробелов нет: на все вопросы бот ответил уверенно.\n"
    with ENGLISH:
        assert run("gaps", bot.slug) == "No gaps: the bot answered every question with confidence.\n"
    seen = datetime(2026, 3, 5, 12, tzinfo=UTC)
    Gap.objects.create(bot=bot, title="Есть ли парковка?", count=3, first_seen=seen, last_seen=seen)
    assert run("gaps", bot.slug).rstrip("\n").endswith("Есть ли парковка?  (последний раз 05.03.2026)")
    as_json = run("gaps", bot.slug, "--json")
    with ENGLISH:
        assert run("gaps", bot.slug).rstrip("\n").endswith("Есть ли парковка?  (last seen 03/05/2026)")
        assert json.loads(run("gaps", bot.slug, "--json")) == json.loads(as_json)
