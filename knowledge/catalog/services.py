"""Writes of the commerce layer: configuring a bot's order endpoint, checking it, logging lookups.

The admin form, `manage.py orderendpoint` and the chat's order route all call these.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from bots.models import Bot
from core.texts import Text, stored, stored_pair
from knowledge.catalog import endpoint as order_http
from knowledge.catalog import secrets, validation
from knowledge.catalog.models import DEFAULT_NUMBER_PATTERN, MAX_NUMBER, OrderEndpoint, OrderLookup


def order_endpoint_configure(
    *, bot: Bot, url_template: str, headers: dict[str, str] | None = None, status_pointer: str = "/status",
    date_pointer: str = "", tracking_pointer: str = "", phone_pointer: str = "", email_pointer: str = "",
    number_pattern: str = DEFAULT_NUMBER_PATTERN, second_factor: bool = False, enabled: bool = True,
    sample_number: str = "",
) -> OrderEndpoint:
    """Create or update the bot's order endpoint. `headers=None` keeps the stored secret headers,
    {} removes them. Every field is checked first (ValidationError with a message per field):
    a refused change leaves the saved endpoint as it was."""
    order_endpoint_validate(
        url_template=url_template, status_pointer=status_pointer, date_pointer=date_pointer,
        tracking_pointer=tracking_pointer, phone_pointer=phone_pointer, email_pointer=email_pointer,
        number_pattern=number_pattern, second_factor=second_factor, sample_number=sample_number,
    )
    with transaction.atomic():
        row = OrderEndpoint.objects.select_for_update().filter(bot=bot).first() or OrderEndpoint(bot=bot)
        row.url_template, row.status_pointer, row.date_pointer = url_template, status_pointer, date_pointer
        row.tracking_pointer, row.phone_pointer, row.email_pointer = tracking_pointer, phone_pointer, email_pointer
        row.number_pattern, row.second_factor, row.enabled = number_pattern, second_factor, enabled
        row.sample_number = sample_number
        if headers is not None:
            row.headers_token, row.header_names = secrets.seal(headers), sorted(headers)
        row.save()
    return row


def order_endpoint_validate(
    *, url_template: str, status_pointer: str = "/status", date_pointer: str = "", tracking_pointer: str = "",
    phone_pointer: str = "", email_pointer: str = "", number_pattern: str = DEFAULT_NUMBER_PATTERN,
    second_factor: bool = False, sample_number: str = "", **_ignored: Any,
) -> None:
    """ValidationError with a message per field, or None when the settings can be saved."""
    url_template, number_pattern, sample_number = url_template or "", number_pattern or "", sample_number or ""
    status_pointer, date_pointer, tracking_pointer = status_pointer or "", date_pointer or "", tracking_pointer or ""
    phone_pointer, email_pointer = phone_pointer or "", email_pointer or ""
    errors: dict[str, list[str]] = {}

    def check(name: str, validator: Any, value: str) -> None:
        try:
            validator(value)
        except ValidationError as exc:
            errors.setdefault(name, []).extend(exc.messages)

    fields = {"url_template": url_template, "status_pointer": status_pointer, "date_pointer": date_pointer,
              "tracking_pointer": tracking_pointer, "phone_pointer": phone_pointer, "email_pointer": email_pointer,
              "number_pattern": number_pattern, "sample_number": sample_number}
    for name, value in fields.items():
        check(name, validation.validate_plain, value)
    limits = {"url_template": 500, "number_pattern": 100}
    for name, value in fields.items():
        if len(value) > limits.get(name, 200):
            errors.setdefault(name, []).append(_("Не длиннее %(max)s знаков.") % {"max": limits.get(name, 200)})
    if errors:
        raise ValidationError(errors)
    check("url_template", validation.validate_url_template, url_template)
    for name, value in (("status_pointer", status_pointer), ("date_pointer", date_pointer),
                        ("tracking_pointer", tracking_pointer), ("phone_pointer", phone_pointer),
                        ("email_pointer", email_pointer)):
        check(name, validation.validate_pointer, value)
    if not status_pointer:
        errors.setdefault("status_pointer", []).append(_("Укажите, где в ответе статус заказа, например /status."))
    check("number_pattern", validation.validate_number_pattern, number_pattern)
    if second_factor and not (phone_pointer or email_pointer):
        errors.setdefault("second_factor", []).append(
            _("Для второго фактора укажите, где в ответе телефон или e-mail покупателя.")
        )
    if len(sample_number) > MAX_NUMBER:
        errors.setdefault("sample_number", []).append(_("Номер не длиннее %(max)s знаков.") % {"max": MAX_NUMBER})
    if errors:
        raise ValidationError(errors)


def order_lookup_record(
    *, bot: Bot, number: str, result: str, visitor_id: str = "", ip: str | None = None,
    conversation_id: int | None = None, fetched: order_http.Fetched | None = None, reason: Text = "",
) -> OrderLookup:
    """One line of the lookup log: the number (cut to MAX_NUMBER), the result, who asked; the
    endpoint's status code, time and our reason (a stored text, core/texts.py, kept untranslated
    beside its Russian), never its body.

    Written on the visitor's time, so as a transaction of its own it does not wait for the WAL
    flush (`synchronous_commit` off for this transaction only): the commit is the same, visible at
    once and never half-written, but a crash of the database server in the next fraction of a
    second (3 × wal_writer_delay at most) may lose it. On this machine waiting for the flush was
    most of a lookup's overhead (p95 35 ms under load, docs/benchmarks.md). Inside a caller's
    transaction the row simply joins it and that transaction's commit rules apply."""
    said, said_stored = stored_pair(reason or (fetched.text if fetched else ""), 300)
    fields = {
        "bot": bot, "number": number[:MAX_NUMBER], "result": result, "visitor_id": visitor_id[:64], "ip": ip or None,
        "conversation_id": conversation_id, "http_status": fetched.http_status if fetched else None,
        "reason": said, "reason_stored": said_stored, "duration_ms": fetched.duration_ms if fetched else 0.0,
    }
    if connection.in_atomic_block:
        return OrderLookup.objects.create(**fields)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        return OrderLookup.objects.create(**fields)


def order_endpoint_check(*, endpoint: OrderEndpoint, number: str, who: str) -> order_http.Fetched:
    """The «Проверить» button and `orderendpoint --check`: one real lookup, logged like a visitor's."""
    number = number.strip()
    if not number or len(number) > MAX_NUMBER:
        fetched = order_http.Fetched("unavailable", text=stored(
            gettext_noop("номер пустой или длиннее %(max)s знаков"), max=MAX_NUMBER))
        order_lookup_record(bot=endpoint.bot, number=number or "—", result=OrderLookup.Result.BAD_NUMBER,
                            visitor_id=who, fetched=fetched)
        return fetched
    fetched = order_http.order_fetch(endpoint=endpoint, number=number)
    order_lookup_record(bot=endpoint.bot, number=number, result=fetched.outcome, visitor_id=who, fetched=fetched)
    return fetched
