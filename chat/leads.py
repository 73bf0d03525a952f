"""Leads and the visitor's personal data: the contact form («Оставить контакт») when no operator
can come, erasure of a visitor on the owner's request, and the retention limit.

What must stay true:
- No consent, no lead (152-FZ): a lead is stored only with the consent box ticked, and it keeps
  the exact consent text the widget showed, the policy URL it linked and the time.
- A phone is stored as E.164 (parsed by `phonenumbers`, Russian numbers by default), an e-mail
  only when Django's validator accepts it; a bad field is refused by name and nothing is saved.
- Erasing a visitor removes their conversations (with every message) and leads in one
  transaction; retention deletes what is older than the bot's limit the same way.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from answers import replies
from bots.models import Bot
from chat import events, services, signals, webhooks, writes
from chat.exceptions import ConversationClosed, InvalidField, LeadUnavailable
from chat.frames import LeadForm
from chat.models import Conversation, Lead, Message

MAX_NAME = 200
MAX_QUESTION = 2000
DEFAULT_REGION = "RU"


def consent_text(bot: Bot) -> str:
    """The consent the widget shows next to the checkbox, in the bot's language."""
    return replies.say(bot, "lead_consent")


def normalize_phone(raw: str, region: str = DEFAULT_REGION) -> str:
    """E.164 (+79161234567) or InvalidField: «8 (916) 123-45-67» and «+7 916 123 45 67» both pass."""
    try:
        number = phonenumbers.parse(raw, region)
    except phonenumbers.NumberParseException as exc:
        raise InvalidField("phone", key="lead_phone_unreadable") from exc
    if not phonenumbers.is_valid_number(number):
        raise InvalidField("phone", key="lead_phone_invalid")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _clean_email(raw: str) -> str:
    try:
        validate_email(raw)
    except ValidationError as exc:
        raise InvalidField("email", key="lead_email") from exc
    return raw.lower()


def _clean_form(form: LeadForm) -> LeadForm:
    if form.consent is not True:
        raise InvalidField("consent", key="lead_consent")
    name = services.clean_line(form.name)
    if not name:
        raise InvalidField("name", key="lead_name")
    if len(name) > MAX_NAME:
        raise InvalidField("name", key="lead_name_too_long", limit=MAX_NAME)
    phone, email = services.clean_line(form.phone), services.clean_line(form.email)
    if not phone and not email:
        raise InvalidField("phone", key="lead_contact")
    question = services.clean_line(form.question)[:MAX_QUESTION]
    return LeadForm(
        name=name, phone=normalize_phone(phone) if phone else "", email=_clean_email(email) if email else "",
        question=question, consent=True,
    )


def lead_check(*, bot: Bot, form: LeadForm) -> LeadForm:
    """The form as `lead_submit` stores it, or the error it would refuse it with (the widget asks
    before a visitor's first contact starts a conversation)."""
    if not bot.handoff_enabled or not replies.lead_form_available(bot):
        raise LeadUnavailable()
    return _clean_form(form)


def lead_submit(*, conversation: Conversation, form: LeadForm) -> tuple[Lead, list[Message]]:
    """Store the visitor's contact with their consent; the visitor gets a thank-you note."""
    bot = conversation.bot
    cleaned = lead_check(bot=bot, form=form)
    writes.rate_check("lead", bot_id=bot.pk, visitor_id=conversation.visitor_id, ip=conversation.last_ip)
    with transaction.atomic():
        current = services.locked(conversation.pk)
        if current.state == Conversation.State.CLOSED:
            raise ConversationClosed()
        lead = Lead.objects.create(
            bot=bot, conversation=current, visitor_id=current.visitor_id, name=cleaned.name, phone=cleaned.phone,
            email=cleaned.email, question=cleaned.question, consent_text=consent_text(bot),
            consent_policy_url=bot.privacy_policy_url, consented_at=timezone.now(),
        )
        current.visitor_name, current.visitor_contact = lead.name, lead.contact
        current.save(update_fields=["visitor_name", "visitor_contact", "updated_at"])
        note = services.system_note(current, "lead_saved", name=lead.name, contact=lead.contact)
        events.publish(current, messages=[note])
        webhooks.webhook_emit(bot=bot, event=webhooks.LEAD_CREATED, conversation=current, lead=lead)
        signals.lead_created_on_commit(lead)
    return lead, [note]


def lead_offer_to_waiting(*, conversation_id: int) -> bool:
    """Nobody took a waiting conversation within the bot's limit: offer the contact form (once).
    The conversation keeps waiting, an operator may still take it."""
    with transaction.atomic():
        conversation = services.locked(conversation_id)
        bot = conversation.bot
        if conversation.state != Conversation.State.WAITING_OPERATOR or conversation.lead_offered_at is not None:
            return False
        conversation.lead_offered_at = timezone.now()
        conversation.save(update_fields=["lead_offered_at"])
        if not replies.lead_form_available(bot):
            return False
        note = services.system_note(conversation, "operators_busy", buttons=[replies.lead_button(bot)])
        events.publish(conversation, messages=[note], to_visitor=True)
    return True


def visitor_erase(*, bot: Bot, visitor_id: str) -> dict[str, int]:
    """Delete everything of one visitor of `bot`: conversations (messages with them) and leads."""
    with transaction.atomic():
        leads, _ = Lead.objects.filter(bot=bot, visitor_id=visitor_id).delete()
        _, deleted = Conversation.objects.filter(bot=bot, visitor_id=visitor_id).delete()
    return _counts(deleted, leads)


def _counts(deleted: dict[str, int], leads: int) -> dict[str, int]:
    return {
        "conversations": deleted.get("chat.Conversation", 0), "messages": deleted.get("chat.Message", 0),
        "leads": leads,
    }


def retention_purge(*, bot: Bot, now: dt.datetime | None = None) -> dict[str, int]:
    """Delete the bot's conversations idle and leads older than its retention limit."""
    cutoff = (now or timezone.now()) - dt.timedelta(days=bot.retention_days)
    with transaction.atomic():
        leads, _ = Lead.objects.filter(bot=bot, created_at__lt=cutoff).delete()
        _, deleted = Conversation.objects.filter(bot=bot, updated_at__lt=cutoff).delete()
    return _counts(deleted, leads)


def csv_safe(value: str) -> str:
    """A visitor's text never becomes a formula in a spreadsheet (CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def lead_csv_rows(rows: Iterable[Lead]) -> Iterator[list[str]]:
    """Leads as spreadsheet rows, the header first (the inbox's download and the admin's action)."""
    yield [_("Дата"), _("Бот"), _("Имя"), _("Телефон"), _("E-mail"), _("Вопрос"), _("Согласие"), _("Политика")]
    for lead in rows:
        yield [
            timezone.localtime(lead.created_at).strftime("%Y-%m-%d %H:%M"), lead.bot.name, csv_safe(lead.name),
            lead.phone, lead.email, csv_safe(lead.question), timezone.localtime(lead.consented_at).isoformat(),
            lead.consent_policy_url,
        ]
