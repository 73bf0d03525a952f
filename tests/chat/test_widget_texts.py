"""The widget's labels come from the catalogs: chat/widget_texts.py holds them in Russian, the en catalog
translates them, and `manage.py widget_texts` writes them into static/assistant/widget.js. These tests
keep the committed script equal to what the catalogs say (a label changed in the catalog and not
regenerated fails here), and never touch the database (no django_db mark: any query would fail)."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation
from django.utils.functional import Promise

from chat import widget_texts
from chat.widget_texts import LABELS, WIDGET_JS

PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _flat(table, prefix=()):
    for key, value in table.items():
        if isinstance(value, str | Promise):
            yield (*prefix, key), value
        else:
            yield from _flat(value, (*prefix, key))


def _check(path: Path) -> str:
    out = StringIO()
    call_command("widget_texts", "--check", "--path", str(path), stdout=out)
    return out.getvalue()


def test_the_committed_script_holds_what_the_catalogs_say():
    """The drift test: regenerate after changing a label or its English (docs/translations.md)."""
    source = WIDGET_JS.read_text(encoding="utf-8")
    assert widget_texts.drift(source) == []
    assert widget_texts.rewritten(source) == source
    with translation.override("en"):
        assert "the labels match the catalogs" in _check(WIDGET_JS)  # and the command agrees


def test_every_label_has_english_of_its_own_and_russian_as_written():
    russian, english = dict(_flat(widget_texts.texts("ru"))), dict(_flat(widget_texts.texts("en")))
    assert russian.keys() == english.keys() == dict(_flat(LABELS)).keys()
    same = {("lead_email",)}  # «E-mail» is the same word in both
    untranslated = [".".join(path) for path, text in english.items()
                    if not text.strip() or (text == russian[path]) != (path in same)]
    assert untranslated == [], f"labels without English in locale/en: {untranslated}"
    assert re.search("[а-яё]", " ".join(english.values()), re.I) is None
    assert all(re.search("[а-яё]", text, re.I) for path, text in russian.items() if path != ("lead_email",))
    # A few word for word: the widget's own English survives the shared words of other pages.
    assert english[("you",)] == "You" and english[("title",)] == "Assistant" and english[("cards",)] == "Products"
    assert russian[("err", "rate_limited")] == "Слишком много сообщений, подождите {n} с"


def test_placeholders_survive_in_every_language():
    tables = widget_texts.catalog_texts()
    assert set(tables) == {"ru", "en"}
    russian = dict(_flat(tables["ru"]))
    for language, table in tables.items():
        for path, text in _flat(table):
            assert PLACEHOLDER.findall(text) == PLACEHOLDER.findall(russian[path]), (language, path, text)
    assert "{n}" in tables["en"]["csat_star"] and "{n}" in tables["en"]["err"]["rate_limited"]  # type: ignore[index]


def _labelled(code: str):
    """The key of every `label(node, "key"[, attr])` call: its second argument at the call's own depth."""
    for call in re.finditer(r"\blabel\(", code):
        depth, arg = 0, ""
        args: list[str] = []
        for char in code[call.end():]:
            if char in "([{" or (char in ")]}" and depth):
                depth += 1 if char in "([{" else -1
            elif char == ")":
                break
            elif char == "," and not depth:
                args, arg = [*args, arg.strip()], ""
                continue
            arg += char
        args.append(arg.strip())
        if len(args) > 1 and re.fullmatch(r'"[a-z_]+"', args[1]):
            yield args[1].strip('"')


def test_every_label_the_script_reads_is_generated():
    """`T.name`, `T.err.code` and `label(node, "name")` in the script's own code: each has a label."""
    source = WIDGET_JS.read_text(encoding="utf-8")
    found = widget_texts.region(source)
    code = source[:found.start] + source[found.end:]
    keys = set(re.findall(r"\bT\.([a-z_]+)\b", code)) | set(_labelled(code))
    keys -= {"err"}
    assert keys, "the script reads no labels?"
    assert keys - LABELS.keys() == set()
    assert "TEXTS = {" not in code  # the one table is the generated one


def test_check_names_the_language_and_key_of_a_hand_edit(tmp_path: Path):
    copy = tmp_path / "widget.js"
    shutil.copyfile(WIDGET_JS, copy)
    original = WIDGET_JS.read_bytes()
    source = copy.read_text(encoding="utf-8")
    edited = source.replace('empty: "The message is empty.",', 'empty: "Nothing to send.",', 1)
    edited = edited.replace('      choice_bot: "Спросить бота",\n', "", 1)
    assert edited.count("\n") == source.count("\n") - 1
    copy.write_text(edited, encoding="utf-8")

    with translation.override("en"), pytest.raises(CommandError) as refused:
        _check(copy)
    message = str(refused.value)
    assert 'en err.empty: the script says "Nothing to send.", the catalogs "The message is empty."' in message
    assert 'ru choice_bot: missing from the script, the catalogs say "Спросить бота"' in message
    assert "run manage.py widget_texts" in message
    assert copy.read_text(encoding="utf-8") == edited  # --check changes nothing

    call_command("widget_texts", "--path", str(copy), stdout=StringIO())
    assert copy.read_text(encoding="utf-8") == source
    assert _check(copy)
    assert WIDGET_JS.read_bytes() == original  # the real script was never touched


def test_the_rest_of_the_script_is_kept_byte_for_byte(tmp_path: Path):
    copy = tmp_path / "widget.js"
    source = WIDGET_JS.read_text(encoding="utf-8")
    found = widget_texts.region(source)
    copy.write_text(source[:found.start] + widget_texts.INDENT + widget_texts.START + "\n  // stale\n"
                    + widget_texts.INDENT + widget_texts.END + "\n" + source[found.end:], encoding="utf-8")
    with translation.override("en"), pytest.raises(CommandError, match="not one the generator writes"):
        _check(copy)
    call_command("widget_texts", "--path", str(copy), stdout=StringIO())
    assert copy.read_text(encoding="utf-8") == source


def test_a_script_without_its_markers_is_refused_and_left_alone(tmp_path: Path):
    copy = tmp_path / "widget.js"
    source = WIDGET_JS.read_text(encoding="utf-8").replace(widget_texts.END, "// the end")
    copy.write_text(source, encoding="utf-8")
    with translation.override("ru"), pytest.raises(CommandError, match="в скрипте должна быть одна строка"):
        call_command("widget_texts", "--path", str(copy), stdout=StringIO())
    assert copy.read_text(encoding="utf-8") == source
    with translation.override("ru"), pytest.raises(CommandError, match="Не удалось прочитать"):
        call_command("widget_texts", "--path", str(tmp_path / "missing.js"), stdout=StringIO())


def test_strings_are_written_as_json_and_read_back_the_same():
    """Quotes, backslashes, line breaks and the two line separators JSON leaves raw: still one
    JavaScript string literal each, and the region reads back to the same texts."""
    tricky = 'Say "hi" \\ back\nthen\u2028go\u2029on </script>'
    table: dict[str, widget_texts.Texts] = {
        "ru": {"title": tricky, "err": {"other": "ок"}},
        "en": {"title": "x", "err": {"other": "ok"}},
    }
    region = widget_texts.render(table)
    assert "\u2028" not in region and "\u2029" not in region
    assert '"Say \\"hi\\" \\\\ back\\nthen\\u2028go\\u2029on </script>"' in region
    script = f"(function () {{\n{region}}})();\n"
    assert widget_texts.parsed(script) == {("ru", "title"): tricky, ("ru", "err", "other"): "ок",
                                           ("en", "title"): "x", ("en", "err", "other"): "ok"}
    assert widget_texts.drift(script, table) == []
    assert widget_texts.render(table) == region  # deterministic
