"""Admin: usage lines and the run journal, read-only; per-bot model settings, editable.

Scoping by bot membership (lists, per-object checks, the bot choice in forms) is the shared
`BotScopedAdmin`; a staff owner sees only the rows of the bots they belong to. Usage lines and the
journal are a superuser's (an owner reads their costs on «Расходы»).
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from bots.admin_filters import worded_filter
from bots.admin_scoping import SUPERUSERS_ONLY, BotScopedAdmin
from llm.labels import provider_words, route_words
from llm.models import BotLLMSettings, RunEvent, Usage


class ReadOnlyBotScoped(BotScopedAdmin):
    """Billing lines and journal rows are evidence: nobody adds, edits or deletes them here."""

    list_select_related = ["bot"]

    @admin.display(description=_("маршрут"), ordering="route")
    def route_shown(self, obj: Usage | RunEvent) -> str:
        return route_words(obj.route)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Usage)
class UsageAdmin(ReadOnlyBotScoped):
    bot_roles = SUPERUSERS_ONLY  # the owner's «Расходы» page shows their costs
    # Routes and providers are codes: shown and filtered by their words. The step inside a route
    # (`purpose`, e.g. «answer.facts») is a developer's detail: on the row's own page only.
    list_display = [
        "created_at", "bot", "route_shown", "provider_shown", "model",
        "input_tokens", "output_tokens", "cache_read_tokens", "latency_ms", "cost_usd",
    ]
    list_filter = [worded_filter("route", route_words), worded_filter("provider", provider_words), "model"]
    date_hierarchy = "created_at"

    @admin.display(description=_("поставщик"), ordering="provider")
    def provider_shown(self, obj: Usage) -> str:
        return provider_words(obj.provider)


@admin.register(RunEvent)
class RunEventAdmin(ReadOnlyBotScoped):
    bot_roles = SUPERUSERS_ONLY  # the journal of model calls, for whoever runs the installation
    list_display = ["created_at", "bot", "kind", "route_shown", "ok", "conversation_id"]
    list_filter = ["kind", "ok", worded_filter("route", route_words)]
    search_fields = ["=conversation_id"]
    date_hierarchy = "created_at"


@admin.register(BotLLMSettings)
class BotLLMSettingsAdmin(BotScopedAdmin):
    list_display = ["bot", "provider", "fast_model", "strong_model"]
    list_select_related = ["bot"]
