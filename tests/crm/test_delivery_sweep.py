"""The sweep queues a lead whose queueing for the CRM was lost (the process stopped between the lead's
commit and its signal), once; never one that came before the CRM was connected, nor a fresh one the
signal is still queueing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from chat.models import Lead
from crm import delivery
from crm.models import CrmConnection, CrmDelivery

pytestmark = pytest.mark.django_db


def _lead(bot: Any, name: str, minutes_ago: int) -> Lead:
    lead = Lead.objects.create(bot=bot, visitor_id=f"v_{name}", name=name, phone="+79161234567",
                               consent_text="Согласен", consent_policy_url="https://shop.example/privacy/",
                               consented_at=timezone.now())
    Lead.objects.filter(pk=lead.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return lead


def test_a_lead_whose_queueing_was_lost_is_queued_once(amo: CrmConnection, policy_shop: Any) -> None:
    CrmConnection.objects.filter(pk=amo.pk).update(connected_at=timezone.now() - timedelta(hours=2))
    lost = _lead(policy_shop, "lost", minutes_ago=30)
    _lead(policy_shop, "fresh", minutes_ago=1)
    _lead(policy_shop, "before", minutes_ago=180)
    assert delivery.leads_sweep() == 1
    assert list(CrmDelivery.objects.values_list("lead_id", "status")) == [(lost.pk, "pending")]
    assert delivery.leads_sweep() == 0


def test_nothing_is_swept_for_a_disconnected_crm(amo: CrmConnection, policy_shop: Any) -> None:
    CrmConnection.objects.filter(pk=amo.pk).update(connected_at=timezone.now() - timedelta(hours=2),
                                                   status=CrmConnection.Status.DISCONNECTED)
    _lead(policy_shop, "lost", minutes_ago=30)
    assert delivery.leads_sweep() == 0 and not CrmDelivery.objects.exists()
