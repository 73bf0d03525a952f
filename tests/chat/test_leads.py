"""The contact form: no consent, no lead; phones as E.164; a bad field named and nothing saved;
a visitor erased in one action; retention; the form offered when nobody came."""

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from chat import leads, services
from chat.exceptions import InvalidField, LeadUnavailable
from chat.frames import LeadForm
from chat.models import Conversation, Lead, Message

pytestmark = pytest.mark.django_db
POLICY = "https://shop.example/privacy/"


@pytest.fixture
def shop_with_policy(shop):
    shop.privacy_policy_url = POLICY
    shop.save(update_fields=["privacy_policy_url"])
    return shop


def _form(**fields: Any) -> LeadForm:
    values: dict[str, Any] = {
        "name": "Мария", "phone": "8 (916) 123-45-67", "email": "", "question": "Есть ли доставка в Тверь?",
        "consent": True,
    }
    return LeadForm(**(values | fields))


def _conversation(bot, visitor_id="v_lead"):
    return services.conversation_open(bot=bot, visitor_id=visitor_id)


def test_a_lead_keeps_the_contact_and_the_consent_it_was_given_with(shop_with_policy):
    conversation = _conversation(shop_with_policy)
    lead, [note] = leads.lead_submit(conversation=conversation, form=_form())
    assert lead.phone == "+79161234567" and lead.name == "Мария" and lead.question == "Есть ли доставка в Тверь?"
    assert lead.consent_policy_url == POLICY and "согласие на обработку" in lead.consent_text
    assert abs((timezone.now() - lead.consented_at).total_seconds()) < 60
    assert note.role == "system" and note.text == "Спасибо, Мария! Мы свяжемся с вами: +79161234567."
    conversation.refresh_from_db()
    assert (conversation.visitor_name, conversation.visitor_contact) == ("Мария", "+79161234567")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"consent": False}, "consent"),
        ({"name": "   "}, "name"),
        ({"name": "Я" * 201}, "name"),
        ({"phone": "", "email": ""}, "phone"),
        ({"phone": "12"}, "phone"),
        ({"phone": "+7 000 000"}, "phone"),
        ({"phone": "", "email": "мария@"}, "email"),
    ],
)
def test_a_bad_field_is_named_and_nothing_is_saved(shop_with_policy, fields, field):
    conversation = _conversation(shop_with_policy)
    with pytest.raises(InvalidField) as caught:
        leads.lead_submit(conversation=conversation, form=_form(**fields))
    assert caught.value.field == field and caught.value.code == "invalid_field" and caught.value.message
    assert not Lead.objects.exists() and not Message.objects.exists()


def test_an_email_alone_is_enough(shop_with_policy):
    form = _form(phone="", email="Maria@Mail.RU")
    lead, _ = leads.lead_submit(conversation=_conversation(shop_with_policy), form=form)
    assert lead.email == "maria@mail.ru" and lead.phone == ""


def test_without_a_privacy_policy_no_contact_is_taken(shop):
    with pytest.raises(LeadUnavailable):
        leads.lead_submit(conversation=_conversation(shop), form=_form())
    assert not Lead.objects.exists()


def test_erasing_a_visitor_removes_their_conversations_and_leads_only(shop_with_policy):
    mine = _conversation(shop_with_policy, "v_gone")
    services.message_receive(conversation=mine, text="Привет", client_msg_id="c1")
    leads.lead_submit(conversation=mine, form=_form())
    kept = _conversation(shop_with_policy, "v_kept")
    services.message_receive(conversation=kept, text="Привет", client_msg_id="c1")
    counts = leads.visitor_erase(bot=shop_with_policy, visitor_id="v_gone")
    assert counts == {"conversations": 1, "messages": 3, "leads": 1}  # question, answer, thank-you note
    assert not Conversation.objects.filter(visitor_id="v_gone").exists() and not Lead.objects.exists()
    assert Message.objects.filter(conversation=kept).count() == 2


def test_retention_deletes_what_is_older_than_the_bots_limit(shop_with_policy):
    shop_with_policy.retention_days = 30
    shop_with_policy.save(update_fields=["retention_days"])
    old = _conversation(shop_with_policy, "v_old")
    leads.lead_submit(conversation=old, form=_form())
    fresh = _conversation(shop_with_policy, "v_fresh")
    long_ago = timezone.now() - dt.timedelta(days=31)
    Conversation.objects.filter(pk=old.pk).update(updated_at=long_ago)
    Lead.objects.update(created_at=long_ago)
    counts = leads.retention_purge(bot=shop_with_policy)
    assert counts["conversations"] == 1 and counts["leads"] == 1
    assert list(Conversation.objects.values_list("pk", flat=True)) == [fresh.pk]


def test_nobody_took_it_in_time_so_the_form_is_offered_once(shop_with_policy, owner_on_hand):
    from chat.tasks import offer_leads_to_waiting

    conversation = _conversation(shop_with_policy)
    services.conversation_handoff(conversation=conversation, reason="button")
    assert offer_leads_to_waiting() == 0  # not yet: the bot allows 5 minutes
    Conversation.objects.filter(pk=conversation.pk).update(waiting_since=timezone.now() - dt.timedelta(minutes=6))
    assert offer_leads_to_waiting() == 1
    assert offer_leads_to_waiting() == 0  # once per wait
    note = Message.objects.filter(conversation=conversation, role="system").last()
    assert note is not None
    assert note.text.startswith("Операторы пока заняты")
    assert note.buttons == [{"id": "lead", "label": "Оставить контакт"}]
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.WAITING_OPERATOR  # an operator may still take it
