"""Texts that owner templates put into JavaScript (inline handlers, inline scripts) go through
`escapejs`: a translation with a quote or a `</script>` must neither break the page's script nor
inject one. The page-level check renders the real delete confirmations; the scan keeps every owner
template honest.

Cross-cutting: every owner template's texts in JavaScript."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.conf import settings

from bots.models import Membership
from owner.insights.sets import question_set_save

pytestmark = pytest.mark.django_db

# An inline handler's value, up to the quote that ends it (not one inside a template tag).
HANDLER = re.compile(r"""\son[a-z]+="((?:{%.*?%}|{{.*?}}|[^"])*)\"""")
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>(.*?)</script>", re.S)
ESCAPED_BLOCK = re.compile(r"{%\s*filter escapejs\s*%}.*?{%\s*endfilter\s*%}", re.S)
TEMPLATE_TEXT = re.compile(r"{%\s*(?:trans|translate|blocktrans|blocktranslate)\b[^%]*%}|{{(?:(?!}}).)*}}")


def owner_templates() -> list[Path]:
    base = Path(settings.BASE_DIR)
    roots = [base / "templates" / "owner", *sorted((base / "owner").glob("*/templates"))]
    return [path for root in roots for path in sorted(root.glob("**/*.html"))]


def unescaped_in_js(source: str) -> list[str]:
    found = []
    for code in [*HANDLER.findall(source), *INLINE_SCRIPT.findall(source)]:
        for text in TEMPLATE_TEXT.findall(ESCAPED_BLOCK.sub("", code)):
            if text.startswith("{{") and "|escapejs" in text:
                continue
            found.append(text)
    return found


def test_no_owner_template_puts_a_text_into_javascript_without_escapejs():
    templates = owner_templates()
    assert len(templates) > 10
    assert {str(path): found for path in templates if (found := unescaped_in_js(path.read_text()))} == {}


def test_the_scan_catches_what_it_should():
    assert unescaped_in_js("""<form onsubmit="return confirm('{% translate "Удалить?" %}')">""")
    assert unescaped_in_js("<script>var name = '{{ bot.name }}';</script>")
    assert not unescaped_in_js("""<form onsubmit="return confirm('{{ text|escapejs }}')">""")
    assert not unescaped_in_js("<script>{% filter escapejs %}{% translate 'x' %}{% endfilter %}</script>")
    assert not unescaped_in_js('<script src="{{ widget_src }}" data-bot="{{ bot.public_key }}"></script>')


def confirm_of(page: str, form_marker: str) -> str:
    tag = next(tag for tag in re.findall(r"<form[^>]*>", page) if form_marker in tag)
    handler = HANDLER.search(tag)
    assert handler is not None, tag
    return html.unescape(handler.group(1))


@pytest.mark.parametrize(("language", "text"), [("ru", "Удалить набор вместе с прогонами?"),
                                                 ("en", "Delete the set with its runs?")])
def test_the_delete_set_confirmation_is_a_js_string_in_the_persons_language(owner_client, bot, language, text):
    saved = question_set_save(bot=bot, name="Проверка", text="Как вернуть?")
    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    page = owner_client.get(f"/b/{bot.slug}/testing/sets/{saved.pk}/edit/").content.decode()
    assert confirm_of(page, 'id="set-delete"') == f"return confirm('{text}')"


def test_the_remove_member_confirmation_is_a_js_string(owner_client, bot, django_user_model):
    other = django_user_model.objects.create_user("second@shop.example", password="pw-second-1")
    Membership.objects.create(bot=bot, user=other, role=Membership.Role.OPERATOR)
    page = owner_client.get(f"/b/{bot.slug}/members/").content.decode()
    assert confirm_of(page, "onsubmit") == "return confirm('Удалить участника?')"
