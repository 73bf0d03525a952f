"""Leads into the CRM through a real Celery worker and the fake CRMs over real HTTP: a visitor leaves a
contact and the CRM gets the lead with the contact and the transcript exactly once, also when the first
attempt fails; a CRM down for good ends as failed with the reason, and «Отправить ещё раз» in the admin
sends it once the CRM is back; a refused key fails at once; the same contact twice makes one CRM lead."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from chat.models import Lead
from crm.models import CrmConnection, CrmDelivery
from tests.fakes.amocrm_api import FakeAmoCRM
from tests.fakes.bitrix24_api import FakeBitrix24

pytestmark = pytest.mark.django_db(transaction=True)
WAIT = 20.0


def _settled(lead: Lead, timeout: float = WAIT) -> CrmDelivery:
    """The lead's delivery once it is delivered or failed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = CrmDelivery.objects.filter(lead=lead).first()
        if found is not None and found.status in (CrmDelivery.Status.DELIVERED, CrmDelivery.Status.FAILED):
            return found
        time.sleep(0.05)
    raise AssertionError(f"the delivery of lead {lead.pk} did not settle: {CrmDelivery.objects.filter(lead=lead)}")


def test_amocrm_gets_the_lead_with_its_contact_and_the_transcript_once(
    amo: CrmConnection, fake_amocrm: FakeAmoCRM, leave_contact: Any, celery_worker_thread: object,
) -> None:
    lead = leave_contact(email="Maria@Example.com")
    delivery = _settled(lead)
    assert delivery.status == "delivered" and delivery.attempts == 1 and delivery.error == ""
    [made] = fake_amocrm.requests_to("/api/v4/leads/complex")
    [contact] = made.body[0]["_embedded"]["contacts"]
    assert contact["first_name"] == "Мария"
    assert {f["field_code"]: f["values"][0]["value"] for f in contact["custom_fields_values"]} == {
        "PHONE": "+79161234567", "EMAIL": "maria@example.com"}
    assert made.headers["authorization"] == f"Bearer {fake_amocrm.token}"
    [crm_lead] = fake_amocrm.leads.values()
    assert crm_lead["name"] == "Заявка с сайта: Мария"
    [note] = fake_amocrm.notes_of(delivery.crm_lead_id)
    assert "Посетитель: Сколько стоит доставка в Тверь?" in note and "Вопрос: Доставите диван в Тверь?" in note
    assert "Оператор скоро ответит" not in note  # system notes are not the conversation


def test_a_failed_first_attempt_is_retried_and_the_lead_made_once(
    amo: CrmConnection, fake_amocrm: FakeAmoCRM, leave_contact: Any, celery_worker_thread: object,
) -> None:
    fake_amocrm.fail_next(500, path="/leads/complex")
    fake_amocrm.fail_next(503, path="/notes")
    delivery = _settled(leave_contact())
    assert delivery.status == "delivered" and delivery.attempts == 3
    assert len(fake_amocrm.requests_to("/leads/complex", ok=True)) == 1
    assert len(fake_amocrm.leads) == 1
    assert len(fake_amocrm.notes_of(delivery.crm_lead_id)) == 1


def test_bitrix24_gets_the_lead_with_the_transcript_in_its_comments_once(
    bitrix: CrmConnection, fake_bitrix24: FakeBitrix24, leave_contact: Any, celery_worker_thread: object,
) -> None:
    fake_bitrix24.fail_next(500, path="crm.lead.add")
    delivery = _settled(leave_contact(name="Иван <b>", email="ivan@example.com", phone=""))
    assert delivery.status == "delivered" and delivery.attempts == 2
    [fields] = fake_bitrix24.leads.values()
    assert fields["TITLE"] == "Заявка с сайта: Иван <b>" and fields["NAME"] == "Иван <b>"
    assert fields["EMAIL"] == [{"VALUE": "ivan@example.com", "VALUE_TYPE": "WORK"}] and "PHONE" not in fields
    assert "Посетитель: Сколько стоит доставка в Тверь?" in fields["COMMENTS"]
    assert "Иван &lt;b&gt;" in fields["COMMENTS"]  # the visitor's text stays text in Bitrix24's HTML
    assert len(fake_bitrix24.requests_to("crm.lead.add", ok=True)) == 1


def test_the_same_contact_again_adds_a_note_to_its_crm_lead(
    amo: CrmConnection, fake_amocrm: FakeAmoCRM, leave_contact: Any, celery_worker_thread: object,
) -> None:
    first = _settled(leave_contact("v_first"))
    second = _settled(leave_contact("v_second", phone="+7 916 123-45-67", question="А в Клин?"))
    assert len(fake_amocrm.leads) == 1
    assert second.attached and second.crm_lead_id == first.crm_lead_id and second.status == "delivered"
    notes = fake_amocrm.notes_of(first.crm_lead_id)
    assert len(notes) == 2 and "А в Клин?" in notes[1]


def test_bitrix24_adds_the_same_contacts_transcript_to_the_timeline(
    bitrix: CrmConnection, fake_bitrix24: FakeBitrix24, leave_contact: Any, celery_worker_thread: object,
) -> None:
    first = _settled(leave_contact("v_first", email="a@example.com"))
    second = _settled(leave_contact("v_second", phone="", email="A@example.com", question="А в Клин?"))
    assert len(fake_bitrix24.leads) == 1 and second.crm_lead_id == first.crm_lead_id
    [comment] = fake_bitrix24.comments_of(first.crm_lead_id)
    assert "А в Клин?" in comment


def test_a_crm_down_for_good_fails_with_the_reason_and_is_sent_again_from_the_admin(
    amo: CrmConnection, fake_amocrm: FakeAmoCRM, leave_contact: Any, celery_worker_thread: object, owner: Any,
) -> None:
    fake_amocrm.down(500)
    lead = leave_contact()
    delivery = _settled(lead)
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("failed", 3, 500), delivery.error
    assert "amoCRM отвечает ошибкой 500" in delivery.error and "попытки кончились" in delivery.error
    assert Lead.objects.filter(pk=lead.pk).exists()  # the lead stays in Spravka
    assert not fake_amocrm.leads
    amo.refresh_from_db()
    assert amo.status == "failing" and "500" in amo.last_error

    fake_amocrm.up()
    client = Client()
    client.force_login(owner)
    answer = client.post("/admin/crm/crmdelivery/", {"action": "send_again", "_selected_action": [delivery.pk]},
                         follow=True)
    assert answer.status_code == 200 and "1 отправка поставлена в очередь." in answer.content.decode()
    delivery = _settled(lead)
    assert delivery.status == "delivered" and delivery.attempts == 1
    assert len(fake_amocrm.leads) == 1 and len(fake_amocrm.notes_of(delivery.crm_lead_id)) == 1
    amo.refresh_from_db()
    assert amo.status == "active"


def test_a_refused_key_fails_at_once_with_words_the_owner_understands(
    amo: CrmConnection, fake_amocrm: FakeAmoCRM, leave_contact: Any, celery_worker_thread: object,
) -> None:
    fake_amocrm.token = "revoked"
    delivery = _settled(leave_contact())
    assert delivery.status == "failed" and delivery.attempts == 1 and delivery.response_status == 401
    assert "amoCRM не принимает ключ" in delivery.error and "подключите CRM заново" in delivery.error
    assert len(fake_amocrm.requests_to("/leads/complex")) == 1


def test_a_bot_without_a_crm_sends_nothing(policy_shop: Any, leave_contact: Any, celery_worker_thread: object) -> None:
    lead = leave_contact()
    assert Lead.objects.filter(pk=lead.pk).exists() and not CrmDelivery.objects.exists()
