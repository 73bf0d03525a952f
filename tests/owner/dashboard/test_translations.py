"""The dashboard's English catalog is complete (every msgid has an English msgstr), compiled
(django.mo says the same as django.po) and served by Django for English.

Cross-cutting: a repository check of owner/dashboard/locale, not of one module."""

from __future__ import annotations

import ast
import gettext
import re

from django.utils import translation

from tests.conftest import REPO

FOLDER = REPO / "owner" / "dashboard" / "locale" / "en" / "LC_MESSAGES"


def po_entries() -> dict[str, str]:
    entries: dict[str, str] = {}
    text = FOLDER.joinpath("django.po").read_text(encoding="utf-8")
    for block in text.split("\n\n"):
        joined = "\n".join(line for line in block.splitlines() if not line.startswith("#"))
        found = re.fullmatch(r'msgid ((?:".*"\n?)+)msgstr ((?:".*"\n?)+)', joined.strip() + "\n")
        if found:
            msgid, msgstr = ("".join(ast.literal_eval(part) for part in group.split("\n") if part)
                             for group in found.groups())
            if msgid:
                entries[msgid] = msgstr
    return entries


def test_every_string_has_an_english_text_and_the_compiled_catalog_matches():
    entries = po_entries()
    assert len(entries) >= 100
    assert [msgid for msgid, msgstr in entries.items() if not msgstr] == []
    with FOLDER.joinpath("django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for msgid, msgstr in entries.items():
        assert compiled.gettext(msgid) == msgstr, f"django.mo is stale for {msgid!r}: msgfmt -o django.mo django.po"


def test_every_translated_string_of_the_templates_is_in_the_catalog():
    entries = po_entries()
    pattern = re.compile(r'{% translate "([^"]+)"|{% translate \'([^\']+)\'')
    for template in (REPO / "owner" / "dashboard" / "templates").rglob("*.html"):
        for found in pattern.finditer(template.read_text(encoding="utf-8")):
            msgid = found.group(1) or found.group(2)
            assert msgid in entries, f"{template.name}: {msgid!r} is not in the catalog (makemessages -l en)"


def test_django_serves_the_english_texts():
    with translation.override("en"):
        assert translation.gettext("Проверить сайт") == "Check the site"
    with translation.override("ru"):
        assert translation.gettext("Проверить сайт") == "Проверить сайт"
