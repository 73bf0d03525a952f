"""Conversations in the admin: read-only transcripts for the owners and the operators of their bot
(`INBOX_ROLES`). Changes to a conversation go through services (handoff, close) and the operator
inbox, never through this form."""

from __future__ import annotations

import csv
from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from behavior.labels import intent_label
from bots.admin_filters import worded_filter
from bots.admin_scoping import BotScopedAdmin, may_access_bot, owns_a_bot
from bots.models import Bot
from bots.selectors import INBOX_ROLES
from chat import leads
from chat.contracts import FLAG_LABELS, FLAG_NAMES
from chat.models import Conversation, Lead, Message, WebhookDelivery
from chat.webhooks import event_words

# Machine values are shown as a person reads them: intents and flags by their labels, links and
# the source entry as links (tests/chat/test_admin_transcript.py).
_MESSAGE_FIELDS: tuple[str, ...] = (
    "created_at", "role", "text", "intent_shown", "confidence", "rating", "flags_shown", "links_shown",
    "source_shown",
)
_CONVERSATION_FIELDS: tuple[str, ...] = (
    "bot", "visitor_shown", "state", "assigned_to", "page_url", "visitor_name", "visitor_contact", "variant_shown",
    "outcome_shown", "last_ip", "created_at", "updated_at", "closed_at",
)
# Conversation.outcome holds how it was closed (chat/handoff.py, chat/services.py).
_CLOSED_HOW = {"closed_by_operator": _("завершил оператор"), "abandoned": _("закрыт перед новым разовым вопросом")}
_ARMS = {"a": _("А"), "b": _("Б")}
_LEAD_FIELDS: tuple[str, ...] = (
    "bot", "conversation", "name", "phone", "email", "question", "consent_text",
    "consent_policy_url", "consented_at", "created_at",
)
_DELIVERY_FIELDS: tuple[str, ...] = (
    "bot", "event_shown", "url", "payload", "status", "attempts", "response_status", "shown_error", "created_at",
    "delivered_at",
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

    @admin.display(description=_("намерение"))
    def intent_shown(self, message: Message) -> str:
        return intent_label(message.intent) if message.intent else "—"

    @admin.display(description=_("отметки"))
    def flags_shown(self, message: Message) -> str:
        shown = [str(FLAG_LABELS[name]) for name in FLAG_NAMES if message.flag(name)]
        return ", ".join(shown) or "—"

    @admin.display(description=_("ссылки"))
    def links_shown(self, message: Message) -> str:
        links = [(link["url"], link.get("title") or link["url"]) for link in message.links or []
                 if isinstance(link, dict) and str(link.get("url", "")).startswith(("http://", "https://"))]
        if not links:
            return "—"
        return format_html_join(mark_safe("<br>"), '<a href="{}" rel="noopener noreferrer">{}</a>', links)

    @admin.display(description=_("запись-источник"))
    def source_shown(self, message: Message) -> str:
        if message.source_entry_id is None:
            return "—"
        return format_html('<a href="{}">#{}</a>', reverse("admin:knowledge_entry_change",
                                                          args=[message.source_entry_id]), message.source_entry_id)


@admin.register(Conversation)
class ConversationAdmin(BotScopedAdmin):
    bot_roles = INBOX_ROLES
    list_display = ["id", "bot", "visitor_shown", "state", "message_count", "outcome_shown", "updated_at"]
    list_filter = ["state", "bot"]
    list_select_related = ["bot"]
    search_fields = ["visitor_id", "messages__text"]
    fields = _CONVERSATION_FIELDS
    readonly_fields = _CONVERSATION_FIELDS
    inlines = [MessageInline]
    date_hierarchy = "created_at"
    actions = ["erase_visitors"]

    @admin.action(description=_("Удалить все данные этих посетителей (переписку и контакты)"))
    def erase_visitors(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        """A visitor's request to be forgotten, in one action: every conversation and lead of each
        selected conversation's visitor, for that bot only."""
        totals = {"conversations": 0, "messages": 0, "leads": 0}
        for bot_id, visitor_id in set(queryset.values_list("bot_id", "visitor_id")):
            if not may_access_bot(request, bot_id):
                continue
            counts = leads.visitor_erase(bot=Bot.objects.get(pk=bot_id), visitor_id=visitor_id)
            totals = {key: totals[key] + counts[key] for key in totals}
        self.message_user(request, _(
            "Удалено: разговоров — %(conversations)s, сообщений — %(messages)s, контактов — %(leads)s."
        ) % totals)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # Erasing is an owner's decision: the action is theirs even though rows are never deleted one by one.
        actions = super().get_actions(request)
        if not owns_a_bot(request):  # operators read conversations here; erasing is not theirs
            actions.pop("erase_visitors", None)
        return actions

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).annotate(_message_count=Count("messages"))

    @admin.display(description=_("посетитель"))
    def visitor_shown(self, obj: Conversation) -> str:
        """Who this is as a person reads it (never the widget's machine id; search still finds it)."""
        return obj.visitor_label

    @admin.display(description=_("как завершён"), ordering="outcome")
    def outcome_shown(self, obj: Conversation) -> str:
        """The close's stored code in words: an operator's «Завершить», a stale conversation closed
        before a one-off question, or a one-off question itself (`manage.py ask`, the API's ask/,
        whose caller's name is stored there)."""
        if not obj.outcome:
            return "—"
        return str(_CLOSED_HOW.get(obj.outcome, _("разовый вопрос (API или команда ask)")))

    @admin.display(description=_("вариант эксперимента"))
    def variant_shown(self, obj: Conversation) -> str:
        experiment, _sep, arm = obj.variant.partition(":")
        if not experiment.isdigit() or arm not in _ARMS:
            return "—"
        return str(_("эксперимент #%(id)s, вариант %(arm)s") % {"id": experiment, "arm": _ARMS[arm]})

    @admin.display(description=_("сообщений"), ordering="_message_count")
    def message_count(self, obj: Conversation) -> int:
        return int(getattr(obj, "_message_count", 0))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Lead)
class LeadAdmin(BotScopedAdmin):
    """Contacts visitors left, with the consent they gave; read-only, exportable as CSV."""

    list_display = ["created_at", "name", "phone", "email", "bot", "conversation_link"]
    list_select_related = ["bot"]
    search_fields = ["name", "phone", "email", "question"]
    date_hierarchy = "created_at"
    readonly_fields = fields = _LEAD_FIELDS
    actions = ["export_csv"]

    @admin.display(description=_("разговор"))
    def conversation_link(self, obj: Lead) -> str:
        if not obj.conversation_id:
            return "—"
        return format_html('<a href="{}">#{}</a>', reverse("inbox:conversation", args=[obj.conversation_id]),
                           obj.conversation_id)

    @admin.action(description=_("Скачать выбранные контакты (CSV)"))
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Lead]) -> HttpResponse:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="leads.csv"'
        response.write("\ufeff")
        csv.writer(response).writerows(leads.lead_csv_rows(queryset.select_related("bot")))
        return response

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(BotScopedAdmin):
    """The log of webhook deliveries: what was sent where, how it went."""

    list_display = ["created_at", "event_shown", "bot", "status", "attempts", "response_status", "shown_error"]
    list_filter = ["status", worded_filter("event", event_words)]
    list_select_related = ["bot"]
    readonly_fields = fields = _DELIVERY_FIELDS

    @admin.display(description=_("событие"), ordering="event")
    def event_shown(self, delivery: WebhookDelivery) -> str:
        return event_words(delivery.event)

    @admin.display(description=_("ошибка"))
    def shown_error(self, delivery: WebhookDelivery) -> str:
        """In the reader's language (a stored text, core/texts.py)."""
        return delivery.error_shown

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

