"""Transcripts in the admin: an owner reads their own bot's conversations, and nothing can be edited."""

import pytest
from django.urls import reverse

from assistant.chat import services

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
    assert "v_mine" in page and "v_theirs" not in page


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
