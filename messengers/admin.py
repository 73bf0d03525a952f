"""The messenger connections and the log of calls made to them, read-only: connecting is done on
the owner's channels page (or `manage.py channel`); a delivery that failed can be sent again."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from bots.admin_filters import worded_filter
from bots.admin_scoping import SUPERUSERS_ONLY, BotScopedAdmin
from messengers import delivery
from messengers.models import Connection, Delivery

# The messenger API methods a delivery calls (messengers/telegram.py, vk.py), as a person reads them.
METHOD_WORDS = {
    "sendMessage": _("сообщение"), "messages.send": _("сообщение"),
    "sendChatAction": _("«печатает…»"), "messages.setActivity": _("«печатает…»"),
    "answerCallbackQuery": _("ответ на нажатие кнопки"),
    "messages.sendMessageEventAnswer": _("ответ на нажатие кнопки"),
}


def method_words(method: str) -> str:
    return str(METHOD_WORDS.get(method, method))


class ReadOnly(BotScopedAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Connection)
class ConnectionAdmin(ReadOnly):
    bot_roles = SUPERUSERS_ONLY  # the owner's «Мессенджеры» page shows and changes them
    list_display = ["bot", "kind", "account_name", "status", "token_hint", "last_error_at", "shown_error"]
    list_filter = ["kind", "status"]
    list_select_related = ["bot"]
    fields = readonly_fields = ("bot", "kind", "status", "account_name", "account_id", "token_hint", "webhook_url",
                                "confirmation", "connected_at", "last_error_at", "shown_error")

    @admin.display(description=_("последняя ошибка"))
    def shown_error(self, connection: Connection) -> str:
        return connection.error_shown


@admin.register(Delivery)
class DeliveryAdmin(ReadOnly):
    bot_roles = SUPERUSERS_ONLY  # the owner's «Мессенджеры» page shows the last delivery error
    bot_field = "connection__bot"
    list_display = ["created_at", "connection", "chat", "method_shown", "status", "attempts", "response_status",
                    "error"]
    list_filter = ["status", worded_filter("method", method_words)]
    list_select_related = ["connection__bot", "chat"]
    fields = readonly_fields = ("connection", "chat", "message_id", "key", "method_shown", "params", "status",
                                "attempts", "response_status", "error", "created_at", "delivered_at")
    actions = ["send_again"]

    @admin.display(description=_("вызов"), ordering="method")
    def method_shown(self, obj: Delivery) -> str:
        return method_words(obj.method)

    @admin.action(description=_("Отправить ещё раз"))
    def send_again(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        count = delivery.deliveries_retry(queryset.filter(status=Delivery.Status.FAILED))
        self.message_user(request, ngettext("%(count)d доставка поставлена в очередь.",
                                            "%(count)d доставок поставлено в очередь.", count) % {"count": count},
                          messages.SUCCESS)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
