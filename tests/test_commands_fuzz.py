"""Any argument a person (or a script) passes to a management command gets a result or a clear
CommandError, never a traceback; every admin form field that takes text or a URL answers a bad
value with a form error, never a 500. Property-based (hypothesis)."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.django_db

NASTY = st.text(
    alphabet=st.one_of(
        st.sampled_from(["\x00", "\ud800", "\u202e", "\n", " ", "/", ":", ".", "@", "-", "я"]),
        st.characters(exclude_categories=()),
    ),
    max_size=40,
)
def _as_posted(value: str) -> str:
    """What a server receives of a text typed into a form: UTF-8 on the wire, so a lone surrogate
    arrives as the replacement character (the test client refuses to send one at all)."""
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


SOME = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _run(*args, **options):
    """The command's printed result, or the text of its CommandError."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err, **options)
    except CommandError as error:
        assert str(error), "a CommandError must say what is wrong"
        return str(error)
    return out.getvalue()


@SOME
@given(slug=NASTY, site=NASTY, owner=NASTY, name=NASTY)
def test_createbot_takes_any_arguments(slug, site, owner, name):
    _run("createbot", slug, site=site, owner=owner, name=name)


@SOME
@given(slug=NASTY, question=NASTY)
def test_search_and_ask_take_any_arguments(bot, slug, question):
    _run("search", slug or bot.slug, question, json=True)
    _run("ask", bot.slug if slug == "" else slug, question)


@SOME
@given(text=NASTY)
def test_classify_takes_any_text(text):
    _run("classify", text)


@SOME
@given(slug=NASTY, path=NASTY)
def test_imports_take_any_path(bot, slug, path):
    for command in ("importqa", "loadpassages"):
        _run(command, slug or bot.slug, path or "/nonexistent.csv")


BOT_FORM_TEXT = ["name", "site_url", "timezone", "privacy_policy_url", "webhook_url", "allowed_origins"]


def _bot_form(bot, **changes):
    data = {
        "name": bot.name, "slug": bot.slug, "site_url": bot.site_url, "language": "ru", "timezone": "Europe/Moscow",
        "allowed_origins": "", "handoff_enabled": "on", "match_threshold": "0.48", "confidence_threshold": "0.67",
        "fix_bonus": "0.06", "operator_alert_minutes": "2", "lead_offer_minutes": "5", "privacy_policy_url": "",
        "retention_days": "365", "webhook_url": "",
        "opening_hours-TOTAL_FORMS": "0", "opening_hours-INITIAL_FORMS": "0",
        "holidays-TOTAL_FORMS": "0", "holidays-INITIAL_FORMS": "0",
    }
    return data | changes


@SOME
@given(field=st.sampled_from(BOT_FORM_TEXT), value=NASTY)
def test_the_bot_form_answers_any_text_with_a_form_error_or_saves(client, owner, bot, field, value):
    client.force_login(owner)
    data = _bot_form(bot, **{field: _as_posted(value)})
    response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]), data)
    assert response.status_code in (200, 302), response.status_code
    bot.refresh_from_db()
    for url in (bot.site_url, bot.privacy_policy_url, bot.webhook_url):
        assert url == "" or url.startswith(("http://", "https://"))
    assert "\x00" not in bot.name


@SOME
@given(field=st.sampled_from(["title", "text", "url", "key"]), value=NASTY)
def test_the_entry_form_answers_any_text_with_a_form_error_or_saves(client, owner, bot, field, value):
    from knowledge.models import Entry

    client.force_login(owner)
    data = {"bot": bot.pk, "kind": "qa", "title": "Вопрос", "text": "Ответ", "url": "", "weight": "0.8",
            "active": "on", "key": ""} | {field: _as_posted(value)}
    response = client.post(reverse("admin:knowledge_entry_add"), data)
    assert response.status_code in (200, 302), response.status_code
    for entry in Entry.objects.filter(bot=bot):
        assert entry.url == "" or entry.url.startswith(("http://", "https://"))


@SOME
@given(template=NASTY, header=NASTY, pointer=NASTY, pattern=NASTY)
def test_orderendpoint_takes_any_arguments(bot, template, header, pointer, pattern):
    _run("orderendpoint", bot.slug, template, header=[header], status=pointer, date=pointer, pattern=pattern)
    _run("orderendpoint", bot.slug, "https://shop.example/api/orders/{number}", status=pointer or "/status",
         tracking=pointer, pattern=pattern or r"\d{4,12}")
