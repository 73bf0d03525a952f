"""English is complete and in step with the source, for every catalog of the repository.

- every catalog (`locale/` and each app's `<app>/locale/`): every msgid translated, nothing fuzzy,
  the placeholders of each msgstr the same as its msgid's;
- every counted text (ngettext, {% blocktranslate count %}) has its three Russian forms in the Russian
  catalog (`locale/ru/`): without them gettext counts the English way, «2 разговоров»;
- its django.mo (built by `make install`) says exactly what its django.po says;
- every string the source marks for translation (gettext & co. in Python, {% translate %} and
  {% blocktranslate %} in templates) is in some catalog: a string added later without an English
  text fails here, named with its file and line;
- Django serves the English texts, and the Russian ones stay the source.
"""

from __future__ import annotations

import ast
import gettext
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.utils import translation
from django.utils.translation.template import templatize

from tests.conftest import REPO

SKIP_DIRS = {".venv", ".data", ".git", "node_modules", "tests", "bench", "demo", "migrations", "build"}
RU_FIX = ("add it to locale/ru/LC_MESSAGES/django.po by hand, msgstr[0..2] = the forms for 1, 2 and 5 "
          "(docs/translations.md, \"Counted texts\"), then `make install`")
FIX = ("fill it in {po} (cd to the folder above locale/ and run `../.venv/bin/python ../manage.py makemessages -l en`, "
       "or `.venv/bin/python manage.py makemessages -l en` for the root catalog), then `make install`")

# The keywords makemessages gives xgettext (and xgettext's own Python defaults): name -> (context, msgid, plural)
# positions of the arguments.
KEYWORDS: dict[str, tuple[int | None, int, int | None]] = {
    "_": (None, 0, None), "gettext": (None, 0, None), "gettext_lazy": (None, 0, None), "gettext_noop": (None, 0, None),
    "ngettext": (None, 0, 1), "ngettext_lazy": (None, 0, 1),
    "pgettext": (0, 1, None), "pgettext_lazy": (0, 1, None), "npgettext": (0, 1, 2), "npgettext_lazy": (0, 1, 2),
}


def walk(suffixes: tuple[str, ...]) -> Iterator[Path]:
    for path in sorted(REPO.rglob("*")):
        parts = path.relative_to(REPO).parts
        if path.suffix in suffixes and not SKIP_DIRS.intersection(parts[:-1]) and path.is_file():
            yield path


def catalogs(language: str = "*") -> list[Path]:
    found = [path for path in REPO.rglob(f"locale/{language}/LC_MESSAGES/django.po")
             if not {".venv", ".data"}.intersection(path.relative_to(REPO).parts)]
    return sorted(found)


def language_of(po: Path) -> str:
    return po.parent.parent.name


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


@dataclass(frozen=True)
class Marked:
    """One string the source marks for translation."""

    where: str  # file:line
    msgid: str
    context: str | None = None
    plural: str | None = None


def python_strings(path: Path) -> Iterator[Marked]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else None)
        if name not in KEYWORDS:
            continue
        ctx_at, id_at, plural_at = KEYWORDS[name]

        def literal(at: int | None, call: ast.Call = node) -> str | None:
            if at is None or at >= len(call.args):
                return None
            arg = call.args[at]
            return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None

        msgid = literal(id_at)
        if msgid:  # gettext(variable) translates what a literal elsewhere marked
            yield Marked(f"{rel(path)}:{node.lineno}", msgid, literal(ctx_at), literal(plural_at))


def template_strings(path: Path) -> Iterator[Marked]:
    """The strings of {% translate %} / {% blocktranslate %}, read the way makemessages reads them: Django's
    templatize turns the template into gettext() calls (the rest blanked out, lines kept)."""
    code = templatize(path.read_text(encoding="utf-8"), origin=str(path))
    code = "\n".join(line.lstrip() for line in code.splitlines())  # repr'd strings: no line is inside one
    tokens = [t for t in tokenize.generate_tokens(StringIO(code).readline)
              if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)]
    for i, token in enumerate(tokens):
        if token.type != tokenize.NAME or token.string not in KEYWORDS:
            continue
        if i + 1 >= len(tokens) or tokens[i + 1].string != "(":
            continue
        args: list[str | None] = []
        for arg in tokens[i + 2:]:
            if arg.string == ")":
                break
            if arg.string != ",":
                args.append(ast.literal_eval(arg.string) if arg.type == tokenize.STRING else None)
        ctx_at, id_at, plural_at = KEYWORDS[token.string]
        def pick(at: int | None, args: list[str | None] = args) -> str | None:
            return args[at] if at is not None and at < len(args) else None

        if pick(id_at):
            yield Marked(f"{rel(path)}:{token.start[0]}", pick(id_at) or "", pick(ctx_at), pick(plural_at))


def marked_strings() -> list[Marked]:
    found = [m for path in walk((".py",)) for m in python_strings(path)]
    templates = [p for p in walk((".html", ".txt")) if "templates" in p.relative_to(REPO).parts]
    return found + [m for path in templates for m in template_strings(path)]


def entries(po: Path) -> list:
    with po.open("rb") as handle:
        return [message for message in read_po(handle, locale=language_of(po)) if message.id]


def key_of(message) -> tuple[str | None, str]:
    return message.context, message.id if isinstance(message.id, str) else message.id[0]


CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
# Russian counts three ways: 1, 21 разговор; 2, 22 разговора; 5, 11, 12 разговоров.
RUSSIAN_FORMS = {1: 0, 21: 0, 101: 0, 2: 1, 4: 1, 22: 1, 0: 2, 5: 2, 11: 2, 12: 2, 14: 2, 111: 2}


PLACEHOLDERS = re.compile(r"%\(\w+\)[sdfr]|%[sdf]|\{\w*\}")


def test_every_catalog_is_found():
    found = {rel(po) for po in catalogs()}
    assert {"locale/en/LC_MESSAGES/django.po", "bots/locale/en/LC_MESSAGES/django.po",
            "routes/locale/en/LC_MESSAGES/django.po"} <= found


@pytest.mark.parametrize("po", catalogs(), ids=rel)
def test_every_entry_is_translated_and_none_is_fuzzy(po):
    problems = []
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=language_of(po))
    if catalog.fuzzy:
        problems.append("the header is marked fuzzy (remove `#, fuzzy` above msgid \"\")")
    for message in catalog:
        if not message.id:
            continue
        shown = message.id if isinstance(message.id, str) else message.id[0]
        where = ", ".join(f"{file}:{line}" for file, line in message.locations[:2]) or "no reference"
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy:
            problems.append(f"fuzzy: {shown!r} ({where})")
        if isinstance(message.id, (tuple, list)) and len(strings) != catalog.num_plurals:
            problems.append(f"{len(strings)} forms, the language has {catalog.num_plurals}: {shown!r} ({where})")
        if not all(strings):
            problems.append(f"no English: {shown!r} ({where})")
            continue
        ids = tuple(message.id) if isinstance(message.id, (tuple, list)) else (str(message.id),)
        for index, text in enumerate(strings):  # a plural's forms: the singular's placeholders, then the plural's
            source = ids[min(index, len(ids) - 1)]
            if set(PLACEHOLDERS.findall(str(text))) != set(PLACEHOLDERS.findall(source)):
                problems.append(f"placeholders differ: {shown!r} -> {text!r} ({where})")
    assert not problems, f"{rel(po)}:\n  " + "\n  ".join(problems) + "\n" + FIX.format(po=rel(po))


@pytest.mark.parametrize("po", catalogs(), ids=rel)
def test_the_compiled_catalog_matches_its_source(po):
    mo = po.with_suffix(".mo")
    assert mo.exists(), f"{rel(mo)} is missing: `make install` compiles it"
    with mo.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = []
    for message in entries(po):
        got: str | tuple[str, ...]
        want: str | tuple[str, ...]
        if isinstance(message.id, tuple):  # a count of each form: 1, 2, 5 (Russian has three)
            got = tuple(compiled.npgettext(message.context, message.id[0], message.id[1], n) if message.context
                        else compiled.ngettext(message.id[0], message.id[1], n) for n in (1, 2, 5))
            want = tuple(message.string[compiled.plural(n)] for n in (1, 2, 5))  # type: ignore[attr-defined]
        else:
            got = compiled.pgettext(message.context, message.id) if message.context else compiled.gettext(message.id)
            want = str(message.string)
        if got != want:
            stale.append(repr(message.id))
    assert not stale, f"{rel(mo)} is stale (run `make install`) for: " + ", ".join(stale[:10])


def test_a_text_has_one_english_in_every_catalog():
    """Django merges the catalogs into one (locale/ first, then the apps in INSTALLED_APPS order), so
    the same Russian text translated two ways shows only one of them: the other catalog's page says
    what its author did not write. Give a text one English everywhere, or a context (pgettext)."""
    seen: dict[tuple[str, str | None, str], tuple[str, object]] = {}
    clashes = []
    for po in catalogs():
        for message in entries(po):
            key = (language_of(po), *key_of(message))
            if key in seen and seen[key][1] != message.string:
                clashes.append(f"{key[2]!r}: {seen[key][1]!r} in {seen[key][0]}, {message.string!r} in {rel(po)}")
            seen.setdefault(key, (rel(po), message.string))
    assert not clashes, "one text, two translations:\n  " + "\n  ".join(clashes)


def test_every_marked_string_of_the_source_has_english():
    known: set[tuple[str | None, str]] = set()
    for po in catalogs("en"):  # the Russian catalog holds counted texts only: it is no English
        for message in entries(po):
            if all(message.string if isinstance(message.string, tuple) else (message.string,)):
                known.add((message.context, message.id if isinstance(message.id, str) else message.id[0]))
    marked = marked_strings()
    assert len(marked) > 500  # the scan reads Python and templates alike
    missing = [m for m in marked if (m.context, m.msgid) not in known]
    report = "\n  ".join(f"{m.where}: {m.msgid!r}" + (f" (context {m.context!r})" if m.context else "")
                         for m in missing)
    assert not missing, ("strings marked for translation that no catalog translates:\n  " + report
                         + "\nAdd them with makemessages and " + FIX.format(po="the catalog of their app"))


def test_the_russian_catalog_counts_the_russian_way():
    """One Russian catalog, with gettext's three-form rule for Russian: the English two-form fallback
    (n != 1) would write «2 разговоров» and «21 разговоров»."""
    assert [rel(po) for po in catalogs("ru")] == ["locale/ru/LC_MESSAGES/django.po"]
    po = REPO / "locale/ru/LC_MESSAGES/django.po"
    with po.open("rb") as handle:
        catalog = read_po(handle, locale="ru")
    assert catalog.num_plurals == 3
    with po.with_suffix(".mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    assert {n: compiled.plural(n) for n in RUSSIAN_FORMS} == RUSSIAN_FORMS  # type: ignore[attr-defined]


def test_every_counted_text_has_its_russian_forms():
    """Every counted text the source marks (ngettext, {% blocktranslate count %}) with a Russian msgid
    is in the Russian catalog with three forms: for 1 the msgid itself, for 5 the msgid_plural (the
    source writes the forms of 1 and 5), for 2 the third one («2 разговора»)."""
    russian = {key_of(message): message for message in entries(REPO / "locale/ru/LC_MESSAGES/django.po")
               if isinstance(message.id, tuple)}
    problems = []
    for marked in marked_strings():
        if not marked.plural or not CYRILLIC.search(marked.msgid):
            continue
        message = russian.get((marked.context, marked.msgid))
        if message is None:
            problems.append(f"{marked.where}: {marked.msgid!r} has no Russian forms")
        elif message.id[1] != marked.plural or message.string[0] != marked.msgid or message.string[2] != marked.plural:
            problems.append(f"{marked.where}: {marked.msgid!r}: the forms for 1 and 5 differ from the source's "
                            f"({message.string[0]!r}, {message.string[2]!r} for {marked.msgid!r}, {marked.plural!r})")
    assert not problems, "\n  ".join(["counted texts without their Russian forms:", *problems]) + "\n" + RU_FIX


def test_the_scan_reads_python_and_templates(tmp_path):
    """The scanner itself: a plain call, a lazy one, a plural and a context in Python; translate and
    blocktranslate (with a variable and a plural) in a template."""
    source = tmp_path / "x.py"
    source.write_text('from django.utils.translation import gettext as _, ngettext, pgettext_lazy\n'
                      '_("Раз")\nngettext("%(n)s день", "%(n)s дней", 2)\npgettext_lazy("месяц", "май")\n_(name)\n')
    template = tmp_path / "x.html"
    template.write_text('{% load i18n %}<p>{% translate "Два" %}</p>\n'
                        '{% blocktranslate with n=count %}Три {{ n }}{% endblocktranslate %}\n'
                        '{% blocktranslate count n=count %}{{ n }} день{% plural %}{{ n }} дней{% endblocktranslate %}')
    import tests.test_translations as me

    original = me.REPO
    me.REPO = tmp_path
    try:
        found = [(m.msgid, m.context, m.plural) for m in [*python_strings(source), *template_strings(template)]]
    finally:
        me.REPO = original
    assert found == [("Раз", None, None), ("%(n)s день", None, "%(n)s дней"), ("май", "месяц", None),
                     ("Два", None, None), ("Три %(n)s", None, None), ("%(n)s день", None, "%(n)s дней")]


def test_django_serves_the_english_texts():
    with translation.override("en"):
        assert translation.gettext("Вход") == "Sign in"  # bots/locale
        assert translation.gettext("Входящие") == "Inbox"  # locale/
        assert translation.gettext("журнал") == "journal"  # routes/locale
    with translation.override("ru"):
        assert translation.gettext("Вход") == "Вход"
        assert [translation.npgettext("подпись к числу", "разговор", "разговоров", n) for n in (1, 2, 5, 21)] == [
            "разговор", "разговора", "разговоров", "разговор"]  # locale/ru
