"""core/texts.py: a message stored untranslated is shown in the reader's language; what rows held
before (plain Russian text) is shown as it was."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext_noop

from core.texts import russian, shown, stored, stored_pair

TOO_LARGE = stored(gettext_noop("страница больше %(size)s"), size=stored(gettext_noop("%(size)s КБ"), size=9.8))


def test_a_stored_text_is_translated_when_shown_with_nested_parameters_and_local_decimals():
    with translation.override("en"):
        assert shown(TOO_LARGE) == "the page is larger than 9.8 KB"
    with translation.override("ru"):
        assert shown(TOO_LARGE) == "страница больше 9,8 КБ"
    assert russian(TOO_LARGE) == "страница больше 9,8 КБ"


def test_a_whole_float_has_no_decimals_and_lines_are_joined():
    lines = [stored(gettext_noop("Пропущено:")), stored(gettext_noop("таймаут %(seconds)s с"), seconds=20.0)]
    with translation.override("en"):
        assert shown(lines) == "Skipped:\ntimed out after 20 s"


def test_a_plain_string_from_before_is_shown_as_it_is_in_any_language():
    with translation.override("en"):
        assert shown("старый текст: страница больше 4 КБ") == "старый текст: страница больше 4 КБ"
        assert shown(None) == shown("") == shown([]) == ""


def test_a_text_missing_from_the_catalog_or_its_parameters_stays_readable():
    with translation.override("en"):
        assert shown(stored("Текст, которого нет в каталоге: %(n)s", n=3)) == "Текст, которого нет в каталоге: 3"
        assert shown({"msgid": "HTTP %(status)s", "params": {}}) == "HTTP %(status)s"  # never raises


def test_the_pair_for_two_columns_keeps_russian_and_the_stored_value():
    assert stored_pair(TOO_LARGE, 12) == ("страница бол", TOO_LARGE)
    assert stored_pair("просто текст", 500) == ("просто текст", None)
    assert stored_pair("", 500) == ("", None)
