"""Proactive invitations in the admin: the owner's rules with how often each was shown and how
often it became a conversation, and the shows, read-only. Scoped to the owner's bots (another
bot's ids are 404, like missing ones)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from behavior.invitations import RuleCounts
from behavior.models import InvitationRule, InvitationShow
from bots.admin_scoping import SUPERUSERS_ONLY, BotScopedAdmin


@admin.register(InvitationRule)
class InvitationRuleAdmin(BotScopedAdmin):
    list_display = ("name", "bot", "enabled", "url_pattern", "conditions", "shown", "converted", "conversion")
    list_display_links = ("name",)
    ordering = ("bot", "id")
    list_select_related = ("bot",)
    list_filter = ("enabled", "bot")
    search_fields = ("name", "text", "url_pattern")
    fieldsets = (
        (None, {"fields": ("bot", "name", "enabled", "text")}),
        (gettext_lazy("Когда показывать"), {"fields": (
            "url_pattern", "seconds_on_page", "returning_only", "on_leave", "show_on_mobile", "once_per_days",
        )}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        """With each rule's shows and conversions counted in the same query."""
        return super().get_queryset(request).annotate(
            shown_count=Count("shows", distinct=True),
            converted_count=Count("shows", filter=Q(shows__converted_at__isnull=False), distinct=True),
        ).order_by("bot", "id")

    @admin.display(description=gettext_lazy("условия"))
    def conditions(self, obj: InvitationRule) -> str:
        said = [_("через %(s)s с") % {"s": obj.seconds_on_page}] if obj.seconds_on_page else []
        if obj.returning_only:
            said.append(_("вернувшимся"))
        if obj.on_leave:
            said.append(_("при уходе"))
        if not obj.show_on_mobile:
            said.append(_("не на телефонах"))
        said.append(_("раз в %(d)s дн.") % {"d": obj.once_per_days})
        return ", ".join(said)

    @staticmethod
    def _count(obj: InvitationRule) -> RuleCounts:
        return RuleCounts(getattr(obj, "shown_count", 0), getattr(obj, "converted_count", 0))

    @admin.display(description=gettext_lazy("показано"), ordering="shown_count")
    def shown(self, obj: InvitationRule) -> int:
        return self._count(obj).shown

    @admin.display(description=gettext_lazy("начали разговор"), ordering="converted_count")
    def converted(self, obj: InvitationRule) -> int:
        return self._count(obj).converted

    @admin.display(description=gettext_lazy("конверсия"))
    def conversion(self, obj: InvitationRule) -> str:
        rate = self._count(obj).rate
        return "—" if rate is None else f"{rate:.0%}"


@admin.register(InvitationShow)
class InvitationShowAdmin(BotScopedAdmin):
    bot_roles = SUPERUSERS_ONLY  # each rule's shows and conversions are counted in its own list
    # The widget's visitor id is a machine's name for a browser: never shown (core/labels.py); the
    # conversation it became, if any, names the visitor in the inbox.
    list_display = ("shown_at", "rule", "bot", "page_url", "converted_at", "conversation_id")
    list_select_related = ("bot", "rule")
    list_filter = ("bot",)
    readonly_fields = ("bot", "rule", "page_url", "shown_at", "conversation_id", "converted_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
