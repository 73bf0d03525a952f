"""Conversations in the admin: read-only transcripts for the owners and the operators of their bot
(`INBOX_ROLES`). Changes to a conversation go through services (handoff, close) and the operator
inbox, never through this form."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from assistant.bots.admin_scoping import BotScopedAdmin, may_access_bot
from assistant.bots.selectors import INBOX_ROLES
from assistant.chat.models import Conversation, Message

_MESSAGE_FIELDS: tuple[str, ...] = (
    "created_at", "role", "text", "intent", "confidence", "rating", "flags", "links", "source_entry_id",
)
_CONVERSATION_FIELDS: tuple[str, ...] = (
    "bot", "visitor_id", "state", "variant", "outcome", "last_ip", "created_at", "updated_at",
)


class MessageInline(admin.TabularInline):
    model = Message
    fk_name = "conversation"
    fields = _MESSAGE_FIELDS
    readonly_fields = _MESSAGE_FIELDS
    extra = 0
    can_delete = False
    show_change_link = False
    ordering = ["id"]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Owners hold no Django model permissions: the parent conversation's bot decides. Without
        a parent (the inline's own queryset check) the rows are already limited to that parent."""
        if obj is None:
            return bool(request.user.is_active and getattr(request.user, "is_staff", False))
        return may_access_bot(request, obj.bot_id, roles=INBOX_ROLES)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Conversation)
class ConversationAdmin(BotScopedAdmin):
    bot_roles = INBOX_ROLES
    list_display = ["id", "bot", "visitor_id", "state", "message_count", "outcome", "updated_at"]
    list_filter = ["state", "bot"]
    list_select_related = ["bot"]
    search_fields = ["visitor_id", "messages__text"]
    fields = _CONVERSATION_FIELDS
    readonly_fields = _CONVERSATION_FIELDS
    inlines = [MessageInline]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).annotate(_message_count=Count("messages"))

    @admin.display(description=_("сообщений"), ordering="_message_count")
    def message_count(self, obj: Conversation) -> int:
        return int(getattr(obj, "_message_count", 0))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
