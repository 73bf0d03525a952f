"""What an order endpoint's settings may be: the same refusals, in the same words, for the admin's
form and for `manage.py orderendpoint` (both go through services.order_endpoint_configure)."""

from __future__ import annotations

import re
from typing import Final

import jsonpointer
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.validators import validate_web_url
from knowledge.catalog import numbers

PLACEHOLDER: Final = "{number}"
MAX_HEADERS: Final = 10
_TOKEN: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
_FORBIDDEN: Final = frozenset({"host", "content-length", "transfer-encoding", "connection", "upgrade", "te"})


_UNSTORABLE: Final = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def validate_plain(value: str) -> None:
    """One line of text PostgreSQL can store: no control characters, no lone surrogates."""
    if _UNSTORABLE.search(value):
        raise ValidationError(_("Уберите управляющие и невидимые символы."), code="control")


def validate_url_template(value: str) -> None:
    if value.count(PLACEHOLDER) != 1 or value.replace(PLACEHOLDER, "").count("{") or "}" in value.replace(
        PLACEHOLDER, ""
    ):
        raise ValidationError(
            _("В адресе должно быть ровно одно место для номера — {number}, например "
              "https://shop.example/api/orders/{number}"), code="placeholder",
        )
    validate_web_url(value.replace(PLACEHOLDER, "1"))


def validate_pointer(value: str) -> None:
    if not value:
        return
    try:
        jsonpointer.JsonPointer(value)
    except jsonpointer.JsonPointerException as exc:
        raise ValidationError(
            _("«%(value)s» — не JSON Pointer: он начинается с «/», например /status или /delivery/date")
            % {"value": value[:80]},
            code="pointer",
        ) from exc


def validate_number_pattern(value: str) -> None:
    error = numbers.pattern_error(value)
    if error:
        raise ValidationError(_("Шаблон номера не подходит: %(error)s.") % {"error": error}, code="pattern")


def parse_headers(text: str) -> dict[str, str]:
    """Lines "Name: value" (blank lines skipped) as a dict; ValidationError naming the bad line."""
    headers: dict[str, str] = {}
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not _TOKEN.fullmatch(name) or not value:
            raise ValidationError(
                _("Строка %(n)s: нужен вид «Имя: значение», например «Authorization: Bearer …».") % {"n": number},
                code="header",
            )
        if name.lower() in _FORBIDDEN:
            raise ValidationError(
                _("Строка %(n)s: заголовок %(name)s задаёт сам сервер.") % {"n": number, "name": name}, code="header")
        if len(value) > 2000 or _UNSTORABLE.search(value):
            raise ValidationError(
                _("Строка %(n)s: значение слишком длинное или с управляющими символами.") % {"n": number},
                code="header")
        headers[name] = value
    if len(headers) > MAX_HEADERS:
        raise ValidationError(_("Не больше %(max)s заголовков.") % {"max": MAX_HEADERS}, code="header")
    return headers
