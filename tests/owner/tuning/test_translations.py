"""The English catalogs of the voice layer and its pages: every entry translated, compiled in step
with its source, and served by Django, so an English owner reads English pages and errors.

Cross-cutting: a repository check of the voice layer's and its pages' catalogs, not of one module."""

from __future__ import annotations

import gettext

import pytest
from babel.messages.pofile import read_po

from bots.models import Bot
from tests.conftest import REPO

CATALOGS = [REPO / "voice" / "locale" / "en" / "LC_MESSAGES",
            REPO / "owner" / "tuning" / "locale" / "en" / "LC_MESSAGES"]


@pytest.mark.parametrize("folder", CATALOGS, ids=["voice", "tuning"])
def test_every_entry_is_translated_and_compiled(folder):
    with folder.joinpath("django.po").open("rb") as handle:
        entries = [m for m in read_po(handle) if m.id]
    with folder.joinpath("django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    assert len(entries) >= 25
    for message in entries:
        assert message.string, f"no English for {message.id!r}"
        assert compiled.gettext(str(message.id)) == message.string, f"django.mo is stale for {message.id!r}"


@pytest.mark.django_db
def test_the_voice_page_and_its_errors_in_english(client, owner, bot):
    client.force_login(owner)
    client.cookies["django_language"] = "en"
    page = client.get(f"/b/{bot.slug}/voice/").content.decode()
    assert "<h1>Bot voice</h1>" in page and "Formality" in page and "As in the main rules: brief and polite." in page
    response = client.post(f"/b/{bot.slug}/voice/", {"revision": "0", "slider_formality": "9", "action": "save",
                                                     "conditions": "x" * 3000})
    page = response.content.decode()
    assert "«Formality»: the level is a whole number from 1 to 5, not «9»." in page
    assert "Conditions: at most 2000 characters, and here are 3000. Please shorten them." in page
    assert Bot.objects.get(pk=bot.pk).voice == {}
    assert "Experiments" in client.get(f"/b/{bot.slug}/experiments/").content.decode()
