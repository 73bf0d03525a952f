"""The leads sent to CRMs, read-only, for the bot's owners: what was sent where, how it went, and
«Отправить ещё раз» for the failed ones. Connecting a CRM is done on the owner's CRM page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from bots.admin_scoping import BotScopedAdmin
from crm import delivery
from crm.models import CrmDelivery


@admin.register(CrmDelivery)
class CrmDeliveryAdmin(BotScopedAdmin):
    list_display = ["created_at", "bot", "lead", "kind", "status", "attempts", "response_status", "crm_lead_id",
                    "shown_error"]
    list_filter = ["status", "kind", "bot"]
    list_select_related = ["bot", "lead"]
    search_fields = ["lead__name", "lead__phone", "lead__email", "crm_lead_id"]
    fields = readonly_fields = ("bot", "lead", "kind", "account", "status", "attempts", "response_status",
                                "shown_error", "crm_lead_id", "attached", "transcript_sent", "transcript",
                                "created_at", "delivered_at")
    actions = ["send_again"]

    @admin.display(description=_("ошибка"))
    def shown_error(self, obj: CrmDelivery) -> str:
        """In the reader's language (a stored text, core/texts.py)."""
        return obj.error_shown

    @admin.action(description=_("Отправить ещё раз"))
    def send_again(self, request: HttpRequest, queryset: QuerySet[CrmDelivery]) -> None:
        count = delivery.deliveries_retry(queryset)
        self.message_user(request, ngettext("%(count)d отправка поставлена в очередь.",
                                            "%(count)d отправок поставлено в очередь.", count) % {"count": count},
                          messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
