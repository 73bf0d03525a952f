"""Tenant scoping for the admin: an owner who is not a superuser sees and changes only the rows of
the bots they belong to. Object-level checks matter as much as the list filter: some admin views
(history, revert) load rows by id without going through `get_queryset`."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest

from assistant.bots.models import Bot
from assistant.bots.selectors import bots_for_user


def _bot_ids(request: HttpRequest) -> set[int]:
    cached: set[int] | None = getattr(request, "_spravka_bot_ids", None)
    if cached is None:
        cached = set(bots_for_user(request.user).values_list("pk", flat=True))
        request._spravka_bot_ids = cached  # type: ignore[attr-defined]
    return cached


def may_access_bot(request: HttpRequest, bot_id: int | None) -> bool:
    if getattr(request.user, "is_superuser", False):
        return True
    return bot_id is not None and bot_id in _bot_ids(request)


class BotScopedAdmin(admin.ModelAdmin):
    """Rows reach their bot through `bot_field` (a path such as "bot" or "source__bot")."""

    bot_field = "bot"

    def _obj_bot_id(self, obj: models.Model) -> int | None:
        target: Any = obj
        for part in self.bot_field.split("__"):
            target = getattr(target, part, None)
            if target is None:
                return None
        return int(target.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if getattr(request.user, "is_superuser", False):
            return queryset
        return queryset.filter(**{f"{self.bot_field}__in": _bot_ids(request)})

    def _member(self, request: HttpRequest, obj: models.Model | None) -> bool:
        if not request.user.is_active or not getattr(request.user, "is_staff", False):
            return False
        if getattr(request.user, "is_superuser", False):
            return True
        if obj is None:
            return bool(_bot_ids(request))
        return may_access_bot(request, self._obj_bot_id(obj))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_view_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> ModelChoiceField | None:
        if db_field.related_model is Bot and not getattr(request.user, "is_superuser", False):
            kwargs["queryset"] = Bot.objects.filter(pk__in=_bot_ids(request))
        elif hasattr(db_field.related_model, "bot") and not getattr(request.user, "is_superuser", False):
            kwargs["queryset"] = db_field.related_model._default_manager.filter(bot__in=_bot_ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
