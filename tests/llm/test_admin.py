"""Usage lines and journal rows in the admin: a superuser's, read-only (an owner reads their costs on
the owner page «Расходы»); per-bot model settings, scoped by bot membership."""

from __future__ import annotations

import pytest
from django.contrib.admin.sites import site
from django.forms import ModelChoiceField
from django.test import RequestFactory

from llm.journal import run_event_record
from llm.models import BotLLMSettings, RunEvent, Usage

pytestmark = pytest.mark.django_db


@pytest.fixture
def lines(bot, other_bot):
    mine = Usage.objects.create(bot=bot, route="chat", purpose="answer-mine", provider="anthropic", model="m")
    theirs = Usage.objects.create(bot=other_bot, route="chat", purpose="answer-theirs", provider="anthropic",
                                  model="m")
    return mine, theirs


def as_user(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-1")


def test_an_owner_reaches_neither_usage_lines_nor_the_journal_not_even_their_own(owner, lines):
    mine, _theirs = lines
    for model in (Usage, RunEvent):
        admin = site._registry[model]
        assert list(admin.get_queryset(as_user(owner))) == []
        assert not admin.has_module_permission(as_user(owner))
        assert not admin.has_view_permission(as_user(owner))
    assert not site._registry[Usage].has_view_permission(as_user(owner), mine)


def test_a_superuser_sees_every_bot(root, lines):
    assert set(site._registry[Usage].get_queryset(as_user(root))) == set(lines)


def test_usage_and_journal_are_read_only(owner, lines):
    for model in (Usage, RunEvent):
        admin = site._registry[model]
        assert not admin.has_add_permission(as_user(owner))
        assert not admin.has_change_permission(as_user(owner), None)
        assert not admin.has_delete_permission(as_user(owner), None)


def test_the_usage_page_is_a_superusers(client, owner, root, lines):
    client.force_login(owner)
    assert client.get("/admin/llm/usage/").status_code == 403
    missing = client.get(f"/admin/llm/usage/{lines[1].pk + 1000}/change/")
    assert client.get(f"/admin/llm/usage/{lines[0].pk}/change/").status_code == missing.status_code == 403

    client.force_login(root)
    page = client.get("/admin/llm/usage/")
    assert page.status_code == 200
    for line in lines:
        assert f"/admin/llm/usage/{line.pk}/change/" in page.text
    assert "Ответ в чате" in page.text and '<td class="field-route_shown">chat<' not in page.text  # never «chat»


def test_the_journal_page_is_a_superusers(client, owner, root, bot, other_bot):
    run_event_record(bot_id=bot.pk, kind="form_repair", ok=True, purpose="mine-purpose")
    run_event_record(bot_id=other_bot.pk, kind="llm_call", ok=True, purpose="their-purpose")
    mine, theirs = RunEvent.objects.get(bot=bot), RunEvent.objects.get(bot=other_bot)
    client.force_login(owner)
    assert client.get("/admin/llm/runevent/").status_code == 403

    client.force_login(root)
    page = client.get("/admin/llm/runevent/")
    assert page.status_code == 200
    assert f"/admin/llm/runevent/{mine.pk}/change/" in page.text
    assert f"/admin/llm/runevent/{theirs.pk}/change/" in page.text


def test_an_unknown_journal_kind_is_refused(bot):
    with pytest.raises(ValueError, match="unknown run event kind"):
        run_event_record(bot_id=bot.pk, kind="vibes", ok=True)


def test_searching_the_journal_by_conversation_survives_a_word(client, root, bot):
    run_event_record(bot_id=bot.pk, kind="llm_call", ok=True, purpose="p", conversation_id=42)
    client.force_login(root)

    assert client.get("/admin/llm/runevent/", {"q": "42"}).status_code == 200
    assert client.get("/admin/llm/runevent/", {"q": "слово"}).status_code == 200


def test_an_owner_may_set_models_only_for_their_own_bot(owner, bot, other_bot):
    admin = site._registry[BotLLMSettings]
    mine = BotLLMSettings.objects.create(bot=bot)
    theirs = BotLLMSettings.objects.create(bot=other_bot)

    assert admin.has_change_permission(as_user(owner), mine)
    assert not admin.has_change_permission(as_user(owner), theirs)
    field = admin.get_form(as_user(owner))().fields["bot"]
    assert isinstance(field, ModelChoiceField) and field.queryset is not None
    assert list(field.queryset) == [bot]
