"""The English catalog of these pages is compiled and in step with its source: every entry of
django.po is in django.mo with the same text, and Django serves it for English."""

from __future__ import annotations

import ast
import gettext
import re

from django.utils import translation

from tests.conftest import REPO

FOLDER = REPO / "assistant" / "bots" / "locale" / "en" / "LC_MESSAGES"


def po_entries() -> dict[str, str]:
    """msgid -> msgstr of django.po (one-line entries with continuation lines)."""
    entries: dict[str, str] = {}
    text = FOLDER.joinpath("django.po").read_text(encoding="utf-8")
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        joined = "\n".join(lines)
        found = re.fullmatch(r'msgid ((?:".*"\n?)+)msgstr ((?:".*"\n?)+)', joined.strip() + "\n")
        if found:
            msgid, msgstr = ("".join(ast.literal_eval(part) for part in group.split("\n") if part) for group in
                             found.groups())
            if msgid:
                entries[msgid] = msgstr
    return entries


def test_the_compiled_catalog_matches_its_source():
    entries = po_entries()
    with FOLDER.joinpath("django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    assert len(entries) >= 10
    for msgid, msgstr in entries.items():
        assert compiled.gettext(msgid) == msgstr, f"django.mo is stale for {msgid!r}: msgfmt -o django.mo django.po"


def test_django_serves_the_english_texts():
    with translation.override("en"):
        assert translation.gettext("Вход") == "Sign in"
    with translation.override("ru"):
        assert translation.gettext("Вход") == "Вход"
