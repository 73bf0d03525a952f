"""JSON fields that take exactly their JSON type: DRF's own turn 123 into "123", "1" and "yes" into
True, and true into 1.0, which hides an integration's bugs. Plus a base that refuses unknown fields
(a misspelt field would otherwise be dropped without a word)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    default_error_messages = {"invalid": _("Нужна строка.")}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class StrictFloatField(serializers.FloatField):
    default_error_messages = {"invalid": _("Нужно число.")}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return float(super().to_internal_value(data))


class StrictIntegerField(serializers.IntegerField):
    default_error_messages = {"invalid": _("Нужно целое число.")}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": _("Нужно true или false.")}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, and read-only fields sent with a value other than theirs."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            writable = {name for name, f in self.fields.items() if not f.read_only}
            known = set(self.fields)
            unknown = sorted(set(data) - known)
            if unknown:
                raise serializers.ValidationError({name: [_("Неизвестное поле.")] for name in unknown})
            self._check_read_only(data, known - writable)
        return super().to_internal_value(data)

    def _check_read_only(self, data: dict[str, Any], read_only: set[str]) -> None:
        """A client may send back what it read (PUT of a GET); a changed read-only value is an error."""
        instance = getattr(self, "instance", None)
        if instance is None:
            return
        current = self.to_representation(instance)
        changed = sorted(name for name in read_only & set(data) if data[name] != current.get(name))
        if changed:
            raise serializers.ValidationError({name: [_("Это поле не меняется.")] for name in changed})
