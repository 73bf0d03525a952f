"""The commerce commands speak the installation's language (SPRAVKA_LANGUAGE): Russian by default,
English when it is `en`. (The reasons a feed or a shop's API give come from the commerce services.)

Cross-cutting: the language of the commerce commands (importcatalog, orderendpoint) and of the services'
reasons."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from tests.knowledge.catalog.test_catalog import CSV

pytestmark = pytest.mark.django_db

ENGLISH = override_settings(LANGUAGE_CODE="en")  # what SPRAVKA_LANGUAGE=en sets


def run(*args, **options) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def test_importcatalog_in_english_and_in_russian(bot, tmp_path):
    feed = tmp_path / "feed.csv"
    feed.write_text(CSV, encoding="utf-8")
    russian = run("importcatalog", bot.slug, str(feed))
    assert "Каталог загружен за " in russian and "добавлено 1" in russian and "пропущено 1" in russian
    with pytest.raises(CommandError, match=r"Бот «nobody» не найден\."):
        run("importcatalog", "nobody", str(feed))
    with ENGLISH:
        english = run("importcatalog", bot.slug, str(feed))
        assert "Catalog loaded in " in english and "0 added, 0 changed, 0 removed, 1 skipped" in english
        assert "\n  skipped " in english  # each skipped row, with its reason
        with pytest.raises(CommandError, match=r"Bot “nobody” not found\."):
            run("importcatalog", "nobody", str(feed))
        with pytest.raises(CommandError, match=r"File “.*nope\.csv” not found\."):
            run("importcatalog", bot.slug, str(tmp_path / "nope.csv"))


def test_orderendpoint_in_english(bot, shop_api):
    with ENGLISH:
        printed = run("orderendpoint", bot.slug, shop_api.template, header=["X-Api-Key: s3cret-key-123"],
                      status="/status", date="/delivery/date", tracking="/tracking_url", check="48213")
        assert f"Order source for “{bot.slug}” saved: {shop_api.template} (headers: X-Api-Key)" in printed
        assert "Check 48213: found, code 200" in printed and "date 2026-12-05" in printed
        assert "link https://track.example/RU48213" in printed and "s3cret" not in printed
        printed = run("orderendpoint", bot.slug, shop_api.template, clear_headers=True)
        assert "(headers: none)" in printed
    assert "(заголовки: нет)" in run("orderendpoint", bot.slug, shop_api.template)
