"""Transcripts in the admin: an owner reads their own bot's conversations, and nothing can be edited."""

import pytest
from django.urls import reverse
from django.utils import translation

from chat import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversations(bot, other_bot):
    mine = services.conversation_open(bot=bot, visitor_id="v_mine")
    services.message_receive(conversation=mine, text="Мой вопрос про доставку", client_msg_id="c1")
    theirs = services.conversation_open(bot=other_bot, visitor_id="v_theirs")
    services.message_receive(conversation=theirs, text="Чужой секретный вопрос", client_msg_id="c1")
    return mine, theirs


def test_an_owner_lists_only_their_own_conversations(client, owner, conversations, django_assert_max_num_queries):
    client.force_login(owner)
    with django_assert_max_num_queries(12):
        page = client.get(reverse("admin:chat_conversation_changelist")).content.decode()
    mine, theirs = conversations
    assert reverse("admin:chat_conversation_change", args=[mine.pk]) in page
    assert reverse("admin:chat_conversation_change", args=[theirs.pk]) not in page
    assert mine.visitor_label in page  # «Посетитель, 2 декабря, 12:04»: never the widget's id
    assert "v_mine" not in page and "v_theirs" not in page


def test_a_transcript_is_read_only(client, owner, conversations):
    mine, _theirs = conversations
    client.force_login(owner)
    page = client.get(reverse("admin:chat_conversation_change", args=[mine.pk])).content.decode()
    assert "Мой вопрос про доставку" in page
    assert 'name="_save"' not in page
    response = client.post(reverse("admin:chat_conversation_change", args=[mine.pk]), {"state": "closed"})
    assert response.status_code == 403


@pytest.mark.parametrize("view", ["change", "delete"])
def test_an_owner_cannot_open_another_bots_conversation(client, owner, conversations, view):
    _mine, theirs = conversations
    client.force_login(owner)
    response = client.get(reverse(f"admin:chat_conversation_{view}", args=[theirs.pk]))
    assert response.status_code in (302, 403, 404)
    assert "Чужой секретный вопрос" not in response.content.decode()


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_transcript_shows_intents_flags_links_and_sources_as_a_person_reads_them(client, owner, knowledge, lang):
    """No machine word in the transcript: not `purchase`, not `{"unanswered": true}`, not a bare id."""
    from chat.models import Message

    conversation = services.conversation_open(bot=owner.memberships.get().bot, visitor_id="v_words")
    _asked, answered, _ = services.message_receive(conversation=conversation, text="Сколько стоит доставка по Москве?",
                                                   client_msg_id="c1")
    _asked, unanswered, _ = services.message_receive(conversation=conversation, text="Какой у вас курс биткоина?",
                                                     client_msg_id="c2")
    assert answered is not None and answered.source_entry_id == knowledge["delivery"].pk and answered.links
    assert unanswered is not None and unanswered.flag("unanswered")
    # A link the page must not turn into a script (a model's or an old row's): shown as nothing.
    Message.objects.filter(pk=unanswered.pk).update(links=[{"url": "javascript:alert(1)", "title": "<b>x</b>"}])

    client.force_login(owner)
    page = client.get(reverse("admin:chat_conversation_change", args=[conversation.pk]),
                      HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    words = {"ru": ("условия покупки", "нет точного ответа", "намерение", "отметки"),
             "en": ("purchase terms", "no exact answer", "intent", "flags")}[lang]
    for word in words:
        assert word in page.lower(), word
    assert f'<td class="field-intent_shown">{answered.intent}</td>' not in page
    assert '"unanswered"' not in page and "low_confidence" not in page
    assert 'href="https://shop.example/delivery"' in page
    entry_url = reverse("admin:knowledge_entry_change", args=[knowledge["delivery"].pk])
    assert f'href="{entry_url}">#{knowledge["delivery"].pk}</a>' in page
    assert "javascript:" not in page and "<b>x</b>" not in page


def test_every_flag_has_a_label():
    from chat.contracts import FLAG_LABELS, FLAG_NAMES

    assert set(FLAG_LABELS) == set(FLAG_NAMES)


@pytest.mark.parametrize(("lang", "start"), [("ru", "Посетитель, "), ("en", "Visitor, ")])
def test_conversations_and_contacts_name_the_visitor_never_by_their_id(client, owner, conversations, lang, start):
    from chat.models import Lead

    mine, _theirs = conversations
    lead = Lead.objects.create(bot=mine.bot, conversation=mine, visitor_id=mine.visitor_id, name="Мария",
                               phone="+79161234567", consent_text="Согласен", consent_policy_url="https://x.example/p",
                               consented_at=mine.created_at)
    client.force_login(owner)
    with translation.override(lang):
        label = mine.visitor_label
    assert label.startswith(start)
    pages = [client.get(reverse(name, args=args), HTTP_ACCEPT_LANGUAGE=lang).content.decode() for name, args in (
        ("admin:chat_conversation_changelist", []), ("admin:chat_conversation_change", [mine.pk]),
        ("admin:chat_lead_change", [lead.pk]))]
    for page in pages:
        assert label in page, page[:200]
        assert "v_mine" not in page
