"""Canned replies in the admin: the owner writes their bot's replies here, as they write its
invitations and knowledge (scoped to the owner's bots; another bot's ids are 404, like missing
ones). Every write goes through `inbox.canned`."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy, ngettext

from bots.admin_scoping import BotScopedAdmin
from inbox import canned
from inbox.models import CannedReply


@admin.register(CannedReply)
class CannedReplyAdmin(BotScopedAdmin):
    list_display = ("shortcut", "title", "bot", "used", "updated_at")
    list_display_links = ("shortcut", "title")
    list_select_related = ("bot",)
    list_filter = ("bot",)
    search_fields = ("shortcut", "title", "text")
    fields = ("bot", "shortcut", "title", "text", "uses")
    readonly_fields = ("uses",)
    ordering = ("bot", "shortcut")

    @admin.display(description=gettext_lazy("использован"), ordering="uses")
    def used(self, obj: CannedReply) -> str:
        return ngettext("%(count)s отправка", "%(count)s отправок", obj.uses) % {"count": obj.uses}

    def save_model(self, request: HttpRequest, obj: CannedReply, form: Any, change: bool) -> None:
        canned.canned_reply_save(canned_reply=obj)

    def delete_model(self, request: HttpRequest, obj: CannedReply) -> None:
        canned.canned_reply_delete(canned_reply=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for canned_reply in queryset:
            canned.canned_reply_delete(canned_reply=canned_reply)
