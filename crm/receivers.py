"""What the CRM hears from the chat: a visitor left their contact (`lead_created`, after commit);
the lead is queued for the bot's CRM, if it has one, and sent from a worker."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from chat.signals import lead_created
from crm import delivery


@receiver(lead_created, dispatch_uid="crm.lead_created")
def send_to_crm(*, lead_id: int, **_: Any) -> None:
    delivery.delivery_for_lead(lead_id=lead_id)
