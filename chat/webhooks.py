"""Signed webhooks to the owner's URL: handoff.waiting, handoff.taken, conversation.closed,
lead.created. docs/operator-protocol.md ("Webhooks") is the contract for the receiving side.

What must stay true:
- A delivery row is written in the same transaction as the change it reports, and sent only after
  commit (a Celery task), so a rolled-back change is never announced and a committed one is never
  lost: a failed attempt is retried with backoff and every attempt is recorded on the row.
- The body is signed with the bot's own secret: `X-Spravka-Signature: sha256=<hex HMAC-SHA256>`
  of the exact bytes sent; the receiver recomputes it over the raw body.
- The request goes through the crawler's SSRF-safe client (core/http.py): a webhook URL that
  points into a private network is refused like a crawl would be (CRAWL_ALLOWED_NETWORKS opens
  an intranet receiver).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any, Final

from celery import shared_task
from celery.app.task import Task
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from bots.models import Bot
from chat import frames
from chat.models import Conversation, Lead, WebhookDelivery
from core.http import AddressRefused, FetchError, SafeClient
from core.texts import stored, stored_pair

logger = logging.getLogger("spravka.chat")

HANDOFF_WAITING: Final = "handoff.waiting"
HANDOFF_TAKEN: Final = "handoff.taken"
CONVERSATION_CLOSED: Final = "conversation.closed"
LEAD_CREATED: Final = "lead.created"
EVENTS: Final = (HANDOFF_WAITING, HANDOFF_TAKEN, CONVERSATION_CLOSED, LEAD_CREATED)
# The events as the admin's log of deliveries shows them (the codes are the webhook's contract).
EVENT_WORDS: Final[dict[str, Any]] = {
    HANDOFF_WAITING: _("посетитель ждёт оператора"), HANDOFF_TAKEN: _("оператор взял разговор"),
    CONVERSATION_CLOSED: _("разговор завершён"), LEAD_CREATED: _("посетитель оставил контакт"),
}


def event_words(event: str) -> str:
    return str(EVENT_WORDS.get(event, event))
SIGNATURE_HEADER: Final = "X-Spravka-Signature"
EVENT_HEADER: Final = "X-Spravka-Event"
DELIVERY_HEADER: Final = "X-Spravka-Delivery"


class DeliveryFailed(Exception):
    """An attempt that may succeed later (network error, timeout, 5xx, 429)."""


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def lead_json(lead: Lead) -> dict[str, Any]:
    return {
        "id": lead.pk, "name": lead.name, "phone": lead.phone, "email": lead.email, "question": lead.question,
        "consent": {"text": lead.consent_text, "policy_url": lead.consent_policy_url, "at": lead.consented_at},
        "created_at": lead.created_at,
    }


def webhook_emit(*, bot: Bot, event: str, conversation: Conversation | None = None, lead: Lead | None = None) -> None:
    """Record an event for the bot's webhook (inside the caller's transaction) and send it after
    commit. Nothing happens when the bot has no webhook URL."""
    if not bot.webhook_url:
        return
    payload: dict[str, Any] = {"event": event, "bot": bot.slug, "occurred_at": timezone.now()}
    if conversation is not None:
        payload["conversation"] = frames.conversation_json(conversation)
    if lead is not None:
        payload["lead"] = lead_json(lead)
    delivery = WebhookDelivery.objects.create(
        bot=bot, event=event, url=bot.webhook_url, payload=json.loads(json.dumps(payload, cls=DjangoJSONEncoder)),
    )
    transaction.on_commit(lambda: webhook_deliver.delay(delivery.pk))


def _body(delivery: WebhookDelivery) -> bytes:
    return json.dumps({"id": delivery.pk, **delivery.payload}, ensure_ascii=False, sort_keys=True).encode()


def webhook_attempt(*, delivery_id: int, final: bool) -> bool:
    """One attempt at a delivery; True when delivered (or nothing left to do). Raises
    DeliveryFailed when a later attempt may succeed and this is not the `final` one."""
    delivery = WebhookDelivery.objects.select_related("bot").filter(pk=delivery_id).first()
    if delivery is None or delivery.status == WebhookDelivery.Status.DELIVERED:
        return True
    body = _body(delivery)
    headers = {
        "Content-Type": "application/json", SIGNATURE_HEADER: sign(delivery.bot.webhook_secret, body),
        EVENT_HEADER: delivery.event, DELIVERY_HEADER: str(delivery.pk),
    }
    delivery.attempts += 1
    retryable = False
    try:
        with SafeClient(timeout=settings.WEBHOOK_TIMEOUT) as client:
            response = client.post(delivery.url, content=body, headers=headers)
        delivery.response_status, delivery.error, delivery.error_stored = response.status, "", None
        if 200 <= response.status < 300:
            delivery.status, delivery.delivered_at = WebhookDelivery.Status.DELIVERED, timezone.now()
        else:
            delivery.error, delivery.error_stored = stored_pair(
                stored(gettext_noop("ответ %(status)s"), status=response.status), 500)
            retryable = response.status >= 500 or response.status in (408, 429)
    except AddressRefused as exc:  # a private address stays private: trying again cannot help
        delivery.error, delivery.error_stored = stored_pair(exc.text, 500)
    except FetchError as exc:
        delivery.error, delivery.error_stored = stored_pair(exc.text, 500)
        retryable = True
    if delivery.status != WebhookDelivery.Status.DELIVERED:
        delivery.status = WebhookDelivery.Status.PENDING if retryable and not final else WebhookDelivery.Status.FAILED
    delivery.save(update_fields=["attempts", "response_status", "error", "error_stored", "status", "delivered_at"])
    if delivery.status == WebhookDelivery.Status.PENDING:
        raise DeliveryFailed(delivery.error)
    if delivery.status == WebhookDelivery.Status.FAILED:
        logger.warning("webhook %s for bot %s failed: %s", delivery.event, delivery.bot.slug, delivery.error)
    return delivery.status == WebhookDelivery.Status.DELIVERED


def retry_delay(attempt: int) -> float:
    """Seconds before retry number `attempt` (0-based): base, 2×base, 4×base…, at most an hour."""
    return float(min(settings.WEBHOOK_RETRY_BASE * (2**attempt), 3600))


@shared_task(bind=True, max_retries=None)
def webhook_deliver(self: Task, delivery_id: int) -> None:
    """One delivery (Celery), retried with exponential backoff while it may still succeed."""
    final = self.request.retries + 1 >= settings.WEBHOOK_MAX_ATTEMPTS
    try:
        webhook_attempt(delivery_id=delivery_id, final=final)
    except DeliveryFailed as exc:
        raise self.retry(countdown=retry_delay(self.request.retries), exc=exc) from exc
