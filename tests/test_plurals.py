"""Counted texts say the count the way the language does: «1 разговор, 2 разговора, 5 разговоров,
11 разговоров, 21 разговор» and "1 conversation, 2 conversations".

Every counted text of the catalogs (every msgid_plural with a Russian msgid) is rendered by Django
for 1, 2, 5, 11 and 21 in Russian and in English, so a counted text added later is covered without
touching this file; a few known texts are checked word for word, in a template as pages render them."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.utils import translation

from core.plurals import plural_forms
from tests.test_translations import CYRILLIC, catalogs, entries, key_of, rel

COUNTS = (1, 2, 5, 11, 21)
RUSSIAN = {1: 0, 2: 1, 5: 2, 11: 2, 21: 0}  # the form each count takes
ENGLISH = {1: 0, 2: 1, 5: 1, 11: 1, 21: 1}


def counted_texts() -> list[tuple[str | None, str, str]]:
    """(context, singular, plural) of every counted text with a Russian msgid, from every catalog."""
    found = {(*key_of(message), message.id[1]) for po in catalogs() for message in entries(po)
             if isinstance(message.id, tuple) and CYRILLIC.search(message.id[0])}
    return sorted(found, key=lambda text: (text[1], text[0] or ""))


def forms(language: str) -> dict[tuple[str | None, str], tuple[str, ...]]:
    return {key_of(message): tuple(message.string) for po in catalogs(language) for message in entries(po)
            if isinstance(message.id, tuple)}


def rendered(text: tuple[str | None, str, str], n: int) -> str:
    context, singular, plural = text
    if context:
        return translation.npgettext(context, singular, plural, n)
    return translation.ngettext(singular, plural, n)


PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]")


def test_the_catalogs_have_counted_texts():
    texts = counted_texts()
    assert len(texts) >= 10
    assert ("подпись к числу", "разговор", "разговоров") in texts


@pytest.mark.parametrize("text", counted_texts(), ids=lambda text: text[1][:60])
@pytest.mark.parametrize(("language", "rule"), [("ru", RUSSIAN), ("en", ENGLISH)])
def test_a_counted_text_takes_the_form_of_its_count(text, language, rule):
    known = forms(language).get(text[:2])
    assert known, f"{text[1]!r} has no {language} forms (locale/{language}/...)"
    with translation.override(language):
        got = {n: rendered(text, n) for n in COUNTS}
    assert got == {n: known[form] for n, form in rule.items()}
    if language == "en":
        assert not any(CYRILLIC.search(form) for form in known), f"Russian in the English forms of {text[1]!r}"


@pytest.mark.parametrize(("language", "expected"), [
    ("ru", ["1 разговор через виджет за 30 дней.", "2 разговора через виджет за 30 дней.",
            "5 разговоров через виджет за 30 дней.", "11 разговоров через виджет за 30 дней.",
            "21 разговор через виджет за 30 дней."]),
    ("en", ["1 conversation through the widget in 30 days.", "2 conversations through the widget in 30 days.",
            "5 conversations through the widget in 30 days.", "11 conversations through the widget in 30 days.",
            "21 conversations through the widget in 30 days."]),
])
def test_a_template_counts_in_the_pages_language(language, expected):
    template = Template("{% load i18n %}{% blocktranslate count counter=n %}{{ counter }} разговор через виджет "
                        "за 30 дней.{% plural %}{{ counter }} разговоров через виджет за 30 дней."
                        "{% endblocktranslate %}")
    with translation.override(language):
        assert [template.render(Context({"n": n})) for n in COUNTS] == expected


@pytest.mark.parametrize(("language", "expected"), [
    ("ru", {1: "разговор", 2: "разговора", 5: "разговоров", 11: "разговоров", 21: "разговор",
            "down": {1: "ответ оценили плохо", 3: "ответа оценили плохо", 12: "ответов оценили плохо"},
            "review": {1: "ждёт проверки", 21: "ждёт проверки", 2: "ждут проверки", 5: "ждут проверки"}}),
    ("en", {1: "conversation", 2: "conversations", 5: "conversations", 11: "conversations", 21: "conversations",
            "down": {1: "answer rated down", 3: "answers rated down", 12: "answers rated down"},
            "review": {1: "awaiting review", 21: "awaiting review", 2: "awaiting review", 5: "awaiting review"}}),
])
def test_the_overviews_labels_agree_with_their_numbers(language, expected):
    label = Template('{% load i18n %}{% blocktranslate count counter=n context "подпись к числу" %}разговор'
                     '{% plural %}разговоров{% endblocktranslate %}')
    down = Template('{% load i18n %}{% blocktranslate count counter=n context "подпись к числу" %}ответ оценили плохо'
                    '{% plural %}ответов оценили плохо{% endblocktranslate %}')
    review = Template('{% load i18n %}{% blocktranslate count counter=n context "подпись к числу" %}ждёт проверки'
                      '{% plural %}ждут проверки{% endblocktranslate %}')
    with translation.override(language):
        assert {n: label.render(Context({"n": n})) for n in COUNTS} == {n: expected[n] for n in COUNTS}
        assert {n: down.render(Context({"n": n})) for n in expected["down"]} == expected["down"]
        assert {n: review.render(Context({"n": n})) for n in expected["review"]} == expected["review"]


def test_a_script_gets_the_forms_by_the_browsers_plural_categories():
    """core.plurals: what a page gives static/owner/plural.js (Intl.PluralRules picks the category)."""
    with translation.override("ru"):
        ru = plural_forms(lambda n: translation.ngettext("%(n)s знак", "%(n)s знаков", n))
    with translation.override("en"):
        en = plural_forms(lambda n: translation.ngettext("%(n)s знак", "%(n)s знаков", n))
    assert ru == {"one": "%(n)s знак", "few": "%(n)s знака", "many": "%(n)s знаков", "other": "%(n)s знака"}
    assert en["one"] == "%(n)s character" and en["other"] == "%(n)s characters"


def test_every_counted_text_names_its_count():
    """A form that drops the count would read «разговора» where the page means «2 разговора»; the
    labels under a big number (context «подпись к числу») are the exception: the number is beside them."""
    problems = []
    for po in catalogs():
        for message in entries(po):
            if (not isinstance(message.id, tuple) or message.context == "подпись к числу"
                    or not CYRILLIC.search(message.id[0])):
                continue
            for form in message.string:
                if not PLACEHOLDER.search(form):
                    problems.append(f"{rel(po)}: {form!r}")
    assert not problems, "forms without their count:\n  " + "\n  ".join(problems)
