"""Admin: usage lines and the run journal, read-only; per-bot model settings, editable.

Every list is scoped by bot membership (`bots_for_user`): a staff owner sees only the rows of the
bots they belong to, and the per-object checks repeat the scope for views that load rows by id.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest

from assistant.bots.models import Bot
from assistant.bots.selectors import bots_for_user
from assistant.llm.models import BotLLMSettings, RunEvent, Usage


def _bot_ids(request: HttpRequest) -> set[int]:
    cached: set[int] | None = getattr(request, "_llm_bot_ids", None)
    if cached is None:
        cached = set(bots_for_user(request.user).values_list("pk", flat=True))
        request._llm_bot_ids = cached  # type: ignore[attr-defined]
    return cached


def _is_superuser(request: HttpRequest) -> bool:
    return bool(getattr(request.user, "is_superuser", False))


class BotScoped(admin.ModelAdmin):
    """Rows with a `bot` foreign key, visible to members of that bot and to superusers."""

    list_select_related = ["bot"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        return queryset if _is_superuser(request) else queryset.filter(bot_id__in=_bot_ids(request))

    def _member(self, request: HttpRequest, obj: Model | None) -> bool:
        if not (request.user.is_active and getattr(request.user, "is_staff", False)):
            return False
        if _is_superuser(request):
            return True
        ids = _bot_ids(request)
        return bool(ids) if obj is None else getattr(obj, "bot_id", None) in ids

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._member(request, obj)


class ReadOnly(BotScoped):
    """Billing lines and journal rows are evidence: nobody edits or deletes them here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Usage)
class UsageAdmin(ReadOnly):
    list_display = [
        "created_at", "bot", "route", "purpose", "provider", "model",
        "input_tokens", "output_tokens", "cache_read_tokens", "latency_ms", "cost_usd",
    ]
    list_filter = ["route", "purpose", "provider", "model"]
    date_hierarchy = "created_at"


@admin.register(RunEvent)
class RunEventAdmin(ReadOnly):
    list_display = ["created_at", "bot", "kind", "route", "purpose", "ok", "conversation_id"]
    list_filter = ["kind", "ok", "route"]
    search_fields = ["=conversation_id"]
    date_hierarchy = "created_at"


@admin.register(BotLLMSettings)
class BotLLMSettingsAdmin(BotScoped):
    list_display = ["bot", "provider", "fast_model", "strong_model"]

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._member(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._member(request, obj)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> ModelChoiceField | None:
        if db_field.name == "bot" and not _is_superuser(request):
            kwargs["queryset"] = Bot.objects.filter(pk__in=_bot_ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
