"""Addresses stored anywhere are web addresses: http or https, never `javascript:`, `data:` or any
other scheme a browser would run or a consumer of our links would have to re-check.

Models list their address fields in `WebAddressFields.web_address_fields`, so every ModelForm (the
admin's included) checks them; services call the same validators before they write, so a command,
an import or an API call gets the same refusal with the same words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

WEB_SCHEMES = ("http", "https")
_absolute = URLValidator(schemes=list(WEB_SCHEMES))
_SHOWN = 80  # characters of a refused value quoted back in the message


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _clean(value: str) -> bool:
    """No spaces or control characters anywhere (Django's URL check lets a NUL through)."""
    return not any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value)


def _absolute_ok(value: str) -> bool:
    try:
        _absolute(value)
    except ValidationError:
        return False
    return _clean(value)


def validate_web_url(value: str) -> None:
    """An absolute http(s) address: a bot's site, a crawl source."""
    if not value:
        return
    if not _absolute_ok(value):
        raise ValidationError(
            _("Адрес «%(value)s» не подходит: нужен полный адрес на http:// или https://, например "
              "https://shop.example/."),
            code="web_url", params={"value": _shown(value)},
        )


def _site_path(value: str) -> bool:
    """A path on the bot's own site ("/delivery/"): not "//host" (another site), no backslash (some
    browsers read "/\\host" as "//host"), no spaces or control characters."""
    return value.startswith("/") and not value.startswith("//") and "\\" not in value and _clean(value)


def validate_link(value: str) -> None:
    """A link shown beside an answer: an absolute http(s) address or a path on the bot's own site."""
    if not value or _site_path(value) or _absolute_ok(value):
        return
    raise ValidationError(
        _("Ссылка «%(value)s» не подходит: нужен адрес на http:// или https:// (например "
          "https://shop.example/dostavka/) или путь на сайте, начинающийся с /."),
        code="link", params={"value": _shown(value)},
    )


def validate_origins(value: Any) -> None:
    """The widget's allowed origins: a list of "scheme://host[:port]", compared with the browser's
    Origin header exactly, so a path or a trailing slash would never match."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(_("Нужен список адресов, например [\"https://shop.example\"]."), code="origins")
    for origin in value:
        parts = urlsplit(origin)
        if parts.scheme not in WEB_SCHEMES or not parts.netloc or parts.path or parts.query or parts.fragment:
            raise ValidationError(
                _("Источник «%(value)s» не подходит: нужен адрес вида https://shop.example, без пути и "
                  "косой черты в конце."),
                code="origin", params={"value": _shown(origin)},
            )
        validate_web_url(origin)


class WebAddressFields(models.Model):
    """Checks the listed fields in `clean_fields`, as field validators would, without becoming part
    of the fields' definitions (no migration when a rule changes)."""

    web_address_fields: ClassVar[dict[str, Callable[[Any], None]]] = {}

    class Meta:
        abstract = True

    def clean_fields(self, exclude: Any = None) -> None:
        errors: dict[str, list[ValidationError]] = {}
        try:
            super().clean_fields(exclude=exclude)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
        for name, check in self.web_address_fields.items():
            if (exclude and name in exclude) or name in errors:
                continue
            try:
                check(getattr(self, name))
            except ValidationError as exc:
                errors[name] = exc.error_list
        if errors:
            raise ValidationError(errors)
