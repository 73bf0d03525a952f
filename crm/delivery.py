"""Leads sent to the bot's CRM from Celery, one `CrmDelivery` each: the one module that writes a
`CrmDelivery`.

What must stay true:
- A lead is queued once per CRM account (the row is unique per lead and account) and sent by a
  worker after the lead's transaction commits; a failed attempt that may succeed later (a 5xx, 429,
  a timeout, no connection) is retried with backoff (CRM_RETRY_BASE, doubled each time) up to
  CRM_MAX_ATTEMPTS, then the row fails with the reason in words. The lead itself stays in Spravka
  whatever the CRM does.
- A key the CRM refuses (401/403) fails the delivery at once, and the CRM page says why.
- Nothing is made twice: the delivery is claimed before its calls (`claimed_at`; a claim older than
  CLAIM_SECONDS belonged to a process that died), and the CRM's lead number is saved as soon as the
  CRM gives it, so a retry goes on with the transcript's note, never with a second lead.
- A committed lead is never lost on the way: one whose queueing did not happen (the process
  stopped between the lead's commit and its signal) is queued by the sweep (`crm_sweep`, every ten
  minutes) once it is SWEEP_GRACE old, if the CRM was connected when it came.
- One contact, one CRM lead per bot: a lead whose phone or e-mail matches one already delivered to
  the same account adds its transcript to that CRM lead as a note; while an earlier lead of the
  same contact is still on its way, the later one waits for it (no attempt counted).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, Final

from celery import Task, shared_task
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chat.models import Lead, Message
from core import secrets
from core.texts import Stored, stored, stored_pair
from crm import providers, services
from crm.exceptions import CrmError
from crm.models import CrmConnection, CrmDelivery, Kind

logger = logging.getLogger("spravka.crm")

CLAIM_SECONDS: Final = 120
SWEEP_GRACE: Final = timedelta(minutes=5)
SWEEP_WINDOW: Final = timedelta(days=1)
WAIT_FOR_EARLIER: Final = 5.0  # seconds a later lead of the same contact waits for the earlier one
Status = CrmDelivery.Status


class _Wait(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


def transcript_of(lead: Lead) -> str:
    """The conversation up to the lead, as a person reads it, in the bot's language: the question
    the visitor left, then every message with its time and who wrote it."""
    bot = lead.bot
    with translation.override(bot.language):
        lines = [_("Заявка из чата на сайте: %(name)s, %(contact)s") % {
            "name": lead.name, "contact": ", ".join(c for c in (lead.phone, lead.email) if c)}]
        if lead.question:
            lines.append(_("Вопрос: %(question)s") % {"question": lead.question})
        if lead.conversation_id is not None:
            lines.append("")
            who = {Message.Role.VISITOR: _("Посетитель"), Message.Role.BOT: _("Бот"),
                   Message.Role.OPERATOR: _("Оператор")}
            messages = (Message.objects.filter(conversation_id=lead.conversation_id, created_at__lte=lead.created_at,
                                               role__in=list(who)).order_by("id").only("role", "text", "created_at"))
            zone = timezone.get_default_timezone() if not bot.timezone else _zone(bot.timezone)
            for message in messages:
                at = timezone.localtime(message.created_at, zone).strftime("%d.%m %H:%M")
                lines.append(f"[{at}] {who[Message.Role(message.role)]}: {message.text}")
    return "\n".join(lines)


def _zone(name: str) -> Any:
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return timezone.get_default_timezone()


def delivery_for_lead(*, lead_id: int) -> CrmDelivery | None:
    """Queue the lead for the bot's CRM (nothing when it has none), sent after the caller commits."""
    lead = Lead.objects.select_related("bot").filter(pk=lead_id).first()
    if lead is None:
        return None
    connection = CrmConnection.objects.filter(bot_id=lead.bot_id).first()
    if connection is None or not connection.working:
        return None
    try:
        with transaction.atomic():
            delivery = CrmDelivery.objects.create(bot_id=lead.bot_id, lead=lead, kind=connection.kind,
                                                  account=connection.account, transcript=transcript_of(lead))
    except IntegrityError:  # queued already (the signal heard twice): never twice
        return None
    deliver_soon(delivery.pk)
    return delivery


def leads_sweep(*, now: Any = None) -> int:
    """Queue the leads of the last SWEEP_WINDOW that came while their bot's CRM was connected and
    have no delivery to it yet, once they are SWEEP_GRACE old (the signal's own queueing comes
    first). The number queued."""
    now = now or timezone.now()
    queued = 0
    working = CrmConnection.objects.exclude(status=CrmConnection.Status.DISCONNECTED).exclude(connected_at=None)
    for connection in working:
        since = max(connection.connected_at, now - SWEEP_WINDOW)
        missing = (Lead.objects.filter(bot_id=connection.bot_id, created_at__gte=since,
                                       created_at__lt=now - SWEEP_GRACE)
                   .exclude(crm_deliveries__account=connection.account).values_list("pk", flat=True))
        queued += sum(1 for lead_id in missing if delivery_for_lead(lead_id=lead_id) is not None)
    return queued


@shared_task
def crm_sweep() -> None:
    """The sweep (Celery beat): leads whose queueing was lost."""
    count = leads_sweep()
    if count:
        logger.warning("the CRM sweep queued %s lead(s) whose queueing was lost", count)


def deliver_soon(delivery_id: int) -> None:
    transaction.on_commit(lambda: crm_deliver.delay(delivery_id))


def retry_delay(attempt: int) -> float:
    """Seconds before retry number `attempt` (1-based): base, 2×base, 4×base…, at most an hour."""
    return float(min(settings.CRM_RETRY_BASE * (2 ** (attempt - 1)), 3600))


def _claim(delivery_id: int) -> bool:
    now = timezone.now()
    free = Q(status=Status.PENDING) | Q(status=Status.SENDING, claimed_at__lt=now - timedelta(seconds=CLAIM_SECONDS))
    return bool(CrmDelivery.objects.filter(free, pk=delivery_id).update(status=Status.SENDING, claimed_at=now))


def _same_contact(delivery: CrmDelivery) -> QuerySet[CrmDelivery]:
    lead = delivery.lead
    contact = Q(pk__in=[])
    if lead.phone:
        contact |= Q(lead__phone=lead.phone)
    if lead.email:
        contact |= Q(lead__email__iexact=lead.email)
    return CrmDelivery.objects.filter(contact, bot_id=delivery.bot_id, account=delivery.account).exclude(
        pk=delivery.pk)


def _target(delivery: CrmDelivery) -> str | None:
    """The CRM lead this contact has already (its transcript goes there as a note), or None for a
    new one. _Wait while an earlier lead of the contact is still on its way."""
    others = _same_contact(delivery)
    known = others.exclude(crm_lead_id="").filter(attached=False).order_by("id").values_list(
        "crm_lead_id", flat=True).first()
    if known:
        return str(known)
    if others.filter(pk__lt=delivery.pk, status__in=[Status.PENDING, Status.SENDING]).exists():
        raise _Wait(WAIT_FOR_EARLIER)
    return None


def _title(delivery: CrmDelivery) -> str:
    with translation.override(delivery.bot.language):
        return _("Заявка с сайта: %(name)s") % {"name": delivery.lead.name}


def _send(delivery: CrmDelivery, connection: CrmConnection, secret: str) -> None:
    """The delivery's calls, each step saved as soon as it is done."""
    lead = delivery.lead
    amo = connection.kind == Kind.AMOCRM
    if not delivery.crm_lead_id:
        target = _target(delivery)
        if target is not None:
            delivery.crm_lead_id, delivery.attached = target, True
        else:
            contact = providers.Contact(name=lead.name, phone=lead.phone, email=lead.email, title=_title(delivery))
            if amo:
                delivery.crm_lead_id = providers.amocrm_lead_create(connection.account, secret, contact)
            else:
                delivery.crm_lead_id = providers.bitrix24_lead_create(secret, contact, delivery.transcript)
                delivery.transcript_sent = True  # in the new lead's COMMENTS
        delivery.save(update_fields=["crm_lead_id", "attached", "transcript_sent"])
    if not delivery.transcript_sent:
        if amo:
            providers.amocrm_note_add(connection.account, secret, delivery.crm_lead_id, delivery.transcript)
        else:
            providers.bitrix24_note_add(secret, delivery.crm_lead_id, delivery.transcript)
        delivery.transcript_sent = True


def _finish(delivery: CrmDelivery, status: str, *, error: Stored | None = None, response: int | None = None) -> None:
    delivery.status, delivery.response_status = status, response
    delivery.error, delivery.error_stored = stored_pair(error, 500) if error else ("", None)
    delivery.delivered_at = timezone.now() if status == Status.DELIVERED else None
    delivery.save(update_fields=["status", "response_status", "error", "error_stored", "delivered_at", "attempts",
                                 "transcript_sent"])


def delivery_attempt(delivery_id: int) -> float | None:
    """One attempt at a delivery. The seconds before the next one when it must wait or may still
    succeed later, else None (delivered, failed for good, or another process is sending it)."""
    delivery = CrmDelivery.objects.select_related("bot", "lead").filter(pk=delivery_id).first()
    if delivery is None or delivery.status in (Status.DELIVERED, Status.FAILED) or not _claim(delivery_id):
        return None
    connection = CrmConnection.objects.filter(bot_id=delivery.bot_id).first()
    if connection is None or not connection.working or connection.account != delivery.account:
        _finish(delivery, Status.FAILED, error=stored(gettext_noop(
            "CRM отключена или заменена другой: заявка осталась в Справке.")))
        return None
    try:
        secret = services.secret_of(connection)
    except secrets.Unreadable:
        error = stored(gettext_noop("Ключ CRM не расшифровать: ключ шифрования сервера изменился — подключите CRM "
                                    "заново."))
        services.connection_failing(connection, error)
        _finish(delivery, Status.FAILED, error=error)
        return None
    return _attempt(delivery, connection, secret)


def _attempt(delivery: CrmDelivery, connection: CrmConnection, secret: str) -> float | None:
    try:
        _send(delivery, connection, secret)
    except _Wait as wait:
        CrmDelivery.objects.filter(pk=delivery.pk).update(status=Status.PENDING)
        return wait.seconds
    except CrmError as exc:
        delivery.attempts += 1
        return _failed(delivery, connection, exc)
    delivery.attempts += 1
    _finish(delivery, Status.DELIVERED, response=200)
    services.connection_working(connection)
    return None


def _failed(delivery: CrmDelivery, connection: CrmConnection, exc: CrmError) -> float | None:
    if exc.retryable and delivery.attempts < settings.CRM_MAX_ATTEMPTS:
        _finish(delivery, Status.PENDING, error=exc.text, response=exc.status)
        return retry_delay(delivery.attempts)
    error: Stored = exc.text
    if exc.retryable:  # the last attempt of a CRM that kept failing
        error = stored(gettext_noop(
            "%(error)s — попытки кончились, отправка остановлена. Заявка сохранена в Справке; когда CRM заработает, "
            "нажмите «Отправить ещё раз»."), error=exc.text)
    _finish(delivery, Status.FAILED, error=error, response=exc.status)
    services.connection_failing(connection, error)
    logger.warning("CRM delivery %s of bot %s failed: %s", delivery.pk, delivery.bot.slug, delivery.error)
    return None


@shared_task(bind=True, max_retries=None)
def crm_deliver(self: Task, delivery_id: int) -> None:
    """One delivery (Celery), resumed after the wait a failed attempt asks for."""
    wait = delivery_attempt(delivery_id)
    if wait is not None:
        raise self.retry(countdown=wait)


def deliveries_retry(queryset: QuerySet[CrmDelivery]) -> int:
    """Failed deliveries queued again (the admin's and the CRM page's «Отправить ещё раз»); the
    caller's queryset is already limited to the person's bots."""
    ids = list(queryset.filter(status=Status.FAILED).values_list("pk", flat=True))
    count = CrmDelivery.objects.filter(pk__in=ids, status=Status.FAILED).update(
        status=Status.PENDING, attempts=0, claimed_at=None)
    for delivery_id in ids:
        deliver_soon(delivery_id)
    return int(count)
