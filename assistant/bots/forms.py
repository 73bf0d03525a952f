"""Forms of the owner's bot settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.utils.translation import gettext_lazy as _

from assistant.bots.models import Bot
from assistant.bots.origins import normalize_origin

MAX_ORIGINS = 50


class OriginsField(forms.CharField):
    """The sites a widget may run on, one per line in a text box, stored as a list of origins.
    A line with a path («https://shop.example/ru/») keeps only its origin; anything that is not
    an http(s) address is refused by line."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "https://shop.example"})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        origins: list[str] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            origin = normalize_origin(line)
            if origin is None:
                raise forms.ValidationError(
                    _("Строка %(number)s: «%(line)s» — не адрес сайта. Пример: https://shop.example"),
                    params={"number": number, "line": line.strip()[:80]},
                )
            if origin not in origins:
                origins.append(origin)
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
