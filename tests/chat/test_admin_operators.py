"""The owner's side of operators in the admin: the schedule on the bot's page, leads (read-only,
CSV), erasing a visitor in one action, the webhook log; nothing of another tenant's."""

import csv
import io

import pytest
from django.urls import reverse

from chat import leads, services
from chat.frames import LeadForm
from chat.models import Conversation, Lead, Message

pytestmark = pytest.mark.django_db


def _lead(bot, visitor_id, name="Мария"):
    bot.privacy_policy_url = "https://shop.example/privacy/"
    bot.save(update_fields=["privacy_policy_url"])
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id)
    services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    form = LeadForm(name=name, phone="+7 916 123-45-67", email="", question="Доставка?", consent=True)
    return leads.lead_submit(conversation=conversation, form=form)[0]


def test_an_owner_sets_the_operators_schedule_on_the_bots_page(client, owner, bot):
    client.force_login(owner)
    page = client.get(reverse("admin:bots_bot_change", args=[bot.pk])).content.decode()
    assert "Часы работы операторов" in page and "opening_hours-TOTAL_FORMS" in page
    assert "memberships-TOTAL_FORMS" not in page  # accounts stay with the superuser


def test_leads_are_read_only_and_exported_as_csv(client, owner, bot, other_bot):
    mine = _lead(bot, "v_mine")
    _lead(other_bot, "v_theirs", name="Чужой")
    client.force_login(owner)
    page = client.get(reverse("admin:chat_lead_changelist")).content.decode()
    assert "Мария" in page and "Чужой" not in page
    assert client.get(reverse("admin:chat_lead_add")).status_code == 403
    response = client.post(reverse("admin:chat_lead_changelist"), {
        "action": "export_csv", "_selected_action": [str(lead.pk) for lead in Lead.objects.all()],
    })
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [row[2] for row in rows[1:]] == ["Мария"]  # the other tenant's lead is not exported
    assert rows[1][3] == mine.phone


def test_erasing_a_visitor_removes_their_conversations_and_leads(client, owner, bot):
    _lead(bot, "v_forget")
    kept = services.conversation_open(bot=bot, visitor_id="v_keep")
    forget = Conversation.objects.get(visitor_id="v_forget")
    client.force_login(owner)
    response = client.post(reverse("admin:chat_conversation_changelist"), {
        "action": "erase_visitors", "_selected_action": [str(forget.pk)],
    }, follow=True)
    assert "Удалено: разговоров — 1" in response.content.decode()
    assert not Conversation.objects.filter(visitor_id="v_forget").exists() and not Lead.objects.exists()
    assert Conversation.objects.filter(pk=kept.pk).exists()
    assert not Message.objects.filter(conversation__visitor_id="v_forget").exists()
