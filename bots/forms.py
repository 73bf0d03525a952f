"""Forms of the owner's bot settings."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot

MAX_ORIGINS = 50


class OriginsField(forms.CharField):
    """The sites a widget may run on, one per line in a text box (a JSON list is read too), stored
    as a list; each is then checked by the model (`core.validators.validate_origins`), which
    names the line that is not an origin. An empty box is an empty list, never NULL."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "https://shop.example"})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = (super().to_python(value) or "").strip()
        if text.startswith("["):
            try:
                items = json.loads(text)
            except ValueError as exc:
                raise forms.ValidationError(_("Не получилось прочитать список: по одному адресу в строке.")) from exc
            if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                raise forms.ValidationError(_("Нужен список адресов, по одному в строке."))
        else:
            items = text.splitlines()
        origins = list(dict.fromkeys(item.strip() for item in items if item.strip()))
        if len(origins) > MAX_ORIGINS:
            raise forms.ValidationError(_("Не больше %(max)s адресов."), params={"max": MAX_ORIGINS})
        return origins


def _field(db_field: models.Field[Any, Any], **kwargs: Any) -> forms.Field | None:
    """Form fields as Django makes them, except that an address typed without a scheme
    («shop.example/privacy») reads as https:// (Django 6's default)."""
    if isinstance(db_field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return db_field.formfield(**kwargs)


class BotForm(forms.ModelForm):
    allowed_origins = OriginsField(
        label=_("разрешённые источники виджета"), required=False,
        help_text=_("По одному адресу сайта в строке, например https://shop.example — там виджет сможет работать."),
    )

    class Meta:
        model = Bot
        formfield_callback = _field
        fields = "__all__"  # noqa: DJ007 - the admin's fieldsets decide what is shown and edited
