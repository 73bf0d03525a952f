"""Admin: usage lines and the run journal, read-only; per-bot model settings, editable.

Scoping by bot membership (lists, per-object checks, the bot choice in forms) is the shared
`BotScopedAdmin`; a staff owner sees only the rows of the bots they belong to. Usage lines and the
journal are a superuser's (an owner reads their costs on «Расходы»).
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from bots.admin_scoping import SUPERUSERS_ONLY, BotScopedAdmin
from llm.models import BotLLMSettings, RunEvent, Usage


class ReadOnlyBotScoped(BotScopedAdmin):
    """Billing lines and journal rows are evidence: nobody adds, edits or deletes them here."""

    list_select_related = ["bot"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Usage)
class UsageAdmin(ReadOnlyBotScoped):
    bot_roles = SUPERUSERS_ONLY  # the owner's «Расходы» page shows their costs
    list_display = [
        "created_at", "bot", "route", "purpose", "provider", "model",
        "input_tokens", "output_tokens", "cache_read_tokens", "latency_ms", "cost_usd",
    ]
    list_filter = ["route", "purpose", "provider", "model"]
    date_hierarchy = "created_at"


@admin.register(RunEvent)
class RunEventAdmin(ReadOnlyBotScoped):
    bot_roles = SUPERUSERS_ONLY  # the journal of model calls, for whoever runs the installation
    list_display = ["created_at", "bot", "kind", "route", "purpose", "ok", "conversation_id"]
    list_filter = ["kind", "ok", "route"]
    search_fields = ["=conversation_id"]
    date_hierarchy = "created_at"


@admin.register(BotLLMSettings)
class BotLLMSettingsAdmin(BotScopedAdmin):
    list_display = ["bot", "provider", "fast_model", "strong_model"]
    list_select_related = ["bot"]
