from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from bots.admin_scoping import BotScopedAdmin, may_access_bot
from bots.apikeys import api_key_create, api_key_revoke
from bots.forms import BotForm
from bots.models import ApiKey, Bot, Holiday, Membership, OpeningHours
from bots.services import bot_settings_save, user_staff_sync
from bots.views import embed_snippet as snippet_for


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class BotSettingsInline(admin.TabularInline):
    """Rows that are part of a bot's settings: whoever may change the bot may change them (owners
    hold no Django model permissions; the bot decides)."""

    extra = 0

    def _allowed(self, request: HttpRequest, obj: Any) -> bool:
        return obj is None or may_access_bot(request, obj.pk)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._allowed(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._allowed(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._allowed(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._allowed(request, obj)


class OpeningHoursInline(BotSettingsInline):
    """The operators' weekly schedule, edited on the bot's page (no rows: operators at any time)."""

    model = OpeningHours
    verbose_name_plural = _("Часы работы операторов (пусто — операторы отвечают в любое время)")


class HolidayInline(BotSettingsInline):
    model = Holiday


@admin.register(Bot)
class BotAdmin(BotScopedAdmin):
    form = BotForm
    # The admin makes its form fields itself: an address typed without a scheme reads as https://.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = ["name", "slug", "site_url", "language", "handoff_enabled", "match_shown"]
    search_fields = ["name", "slug", "site_url"]
    readonly_fields = ["public_key", "embed_snippet", "webhook_secret", "created_at", "members_link"]
    inlines = [OpeningHoursInline, HolidayInline, MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "site_url", "language", "answers_in_visitor_language", "timezone",
                           "members_link"]}),
        (_("Виджет"), {"fields": ["public_key", "embed_snippet", "allowed_origins", "handoff_enabled",
                                      "visitor_choice"]}),
        (_("Когда бот отвечает"), {
            "fields": ["match_threshold", "confidence_threshold", "fix_bonus"],
            "description": _("Оценка записи — от 0 до 1: насколько она подходит к вопросу посетителя. Проверить, "
                             "какие оценки получают вопросы, можно на странице «Проверка» в кабинете."),
        }),
        (_("Операторы"), {"fields": [
            "operator_alert_minutes", "operator_sla_minutes", "lead_offer_minutes", "privacy_policy_url",
            "retention_days", "csat_after_bot", "assignment", "operator_open_limit", "away_after_minutes",
        ]}),
        (_("Когда бот сам предлагает оператора"), {"fields": [
            "escalate_on_thumbs_down", "escalate_on_complaint", "escalate_on_rephrase", "escalate_on_no_answers",
        ]}),
        (_("Уведомления (webhook)"), {"fields": ["webhook_url", "webhook_secret"]}),
        (_("Проверка ответов"), {"fields": ["review_by_operators"]}),
    ]

    @admin.display(description=_("порог совпадения"), ordering="match_threshold")
    def match_shown(self, obj: Bot) -> float:
        return obj.match_threshold

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = admin.ModelAdmin.get_queryset(self, request)
        if getattr(request.user, "is_superuser", False):
            return queryset
        return queryset.filter(pk__in=self._ids(request))

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        # Only a superuser manages accounts: an owner must not browse other people's users.
        if getattr(request.user, "is_superuser", False):
            return list(self.inlines)
        return [inline for inline in self.inlines if inline is not MembershipInline]

    def save_model(self, request: HttpRequest, obj: Bot, form: Any, change: bool) -> None:
        """The page's form has checked the bot; bots/services.py stores it."""
        bot_settings_save(bot=obj)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """Memberships edited inline: staff rights follow the roles, as for `addmember`."""
        before = {f.initial.get("user") for f in formset.forms if f.initial.get("user")}
        super().save_formset(request, form, formset, change)
        if formset.model is Membership:
            after = {f.instance.user_id for f in formset.forms if f.instance.user_id}
            for user in get_user_model().objects.filter(pk__in=before | after):
                user_staff_sync(user=user)

    def _obj_bot_id(self, obj: Any) -> int | None:
        return int(obj.pk)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.members_view)
        return [path("<int:bot_id>/members/", view, name="bots_bot_members"), *super().get_urls()]

    @admin.display(description=_("Участники"))
    def members_link(self, obj: Bot) -> str:
        if not obj.pk:
            return "—"
        url = reverse("admin:bots_bot_members", args=[obj.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Владельцы и операторы, приглашения"))

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        """The bot's history with the member notes in the reader's language (bots.members)."""
        from bots.members import lines_shown

        response = super().history_view(request, object_id, extra_context)
        page = (getattr(response, "context_data", None) or {}).get("action_list")
        if page is not None:
            lines_shown(page)  # a TemplateResponse: rendered after this, with these rows
        return response

    def members_view(self, request: HttpRequest, bot_id: int) -> HttpResponse:
        """Owners invite people by e-mail, change roles and remove members (bots.members);
        another bot's id is a 404 like a missing one."""
        bot = self.get_queryset(request).filter(pk=bot_id).first()
        if bot is None or not may_access_bot(request, bot.pk):
            raise Http404
        if request.method == "POST":
            self._members_action(request, bot)
            return HttpResponseRedirect(request.path)
        context = {
            **self.admin_site.each_context(request), "opts": self.opts, "bot": bot, "title": _("Участники бота"),
            "memberships": bot.memberships.select_related("user").order_by("role", "user__username"),
            "invitations": bot.invitations.filter(accepted_at__isnull=True, revoked_at__isnull=True),
            "roles": Membership.Role.choices, "days": settings.INVITE_MAX_AGE_DAYS,
        }
        return TemplateResponse(request, "admin/bots/bot/members.html", context)

    def _members_action(self, request: HttpRequest, bot: Bot) -> None:
        from bots import members

        action, post = request.POST.get("action", ""), request.POST
        try:
            if action == "invite":
                invitation, link = members.invitation_create(
                    bot=bot, email=post.get("email", ""), role=post.get("role", ""), invited_by=request.user)
                self.message_user(request, format_html(
                    str(_("Приглашение отправлено на {}. Ссылка (если письмо не дойдёт, передайте её сами): {}")),
                    invitation.email, link), messages.SUCCESS)
            elif action in ("role", "remove"):
                membership = bot.memberships.select_related("user").filter(pk=_int(post.get("membership")) or 0).first()
                if membership is None:
                    raise Http404
                if action == "role":
                    members.membership_role_set(membership=membership, role=post.get("role", ""), actor=request.user)
                else:
                    members.membership_remove_by(membership=membership, actor=request.user)
                self.message_user(request, _("Сохранено."), messages.SUCCESS)
            elif action == "revoke":
                pending = bot.invitations.filter(pk=_int(post.get("invitation")) or 0).first()
                if pending is None:
                    raise Http404
                members.invitation_revoke(invitation=pending, actor=request.user)
                self.message_user(request, _("Приглашение отозвано."), messages.SUCCESS)
            else:
                raise Http404
        except members.MembersError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.display(description=_("Код для сайта"))
    def embed_snippet(self, obj: Bot) -> str:
        return format_html("<code>{}</code>", snippet_for(obj, settings.SPRAVKA_PUBLIC_URL))


@admin.register(ApiKey)
class ApiKeyAdmin(BotScopedAdmin):
    """Keys for the REST API, by the bot's owners only (operators never reach the admin; the scoping
    lists owned bots only). A key is shown once, on the page right after it is made; it is revoked,
    never deleted, so the record of who used the API stays."""

    list_display = ["name", "bot", "key_start", "created_at", "last_used_at", "state"]
    list_filter = ["bot"]
    list_select_related = ["bot"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["bot", "name"]
        return ["bot", "name", "key_start", "created_by", "created_at", "last_used_at", "revoked_at", "revoked_by"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return []
        return ["bot", "key_start", "created_by", "created_at", "last_used_at", "revoked_at", "revoked_by"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("Ключ"))
    def key_start(self, obj: ApiKey) -> str:
        return f"spr_{obj.prefix}_…"

    @admin.display(description=_("Состояние"))
    def state(self, obj: ApiKey) -> str:
        return str(_("действует") if obj.active else _("отозван"))

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        row, key = api_key_create(bot=obj.bot, name=obj.name, user=request.user)
        obj.pk, obj.prefix, obj.key_hash, obj.created_at = row.pk, row.prefix, row.key_hash, row.created_at
        request.__dict__["_spravka_new_api_key"] = key

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        """The one time the key is shown: a page of its own, never a message stored in a cookie."""
        key = request.__dict__.get("_spravka_new_api_key")
        if not key:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request), "opts": self.opts, "key": key, "row": obj,
            "title": _("Ключ API создан"), "api_url": f"{settings.SPRAVKA_PUBLIC_URL}/api/v1/",
        }
        response = TemplateResponse(request, "admin/bots/apikey/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description=_("Отозвать выбранные ключи"))
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        revoked = 0
        for row in queryset.select_related("bot"):
            if row.revoked_at is None:
                api_key_revoke(bot=row.bot, prefix=row.prefix, user=request.user)
                revoked += 1
        self.message_user(request, _("Отозвано ключей: %d") % revoked, messages.SUCCESS)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) <= 18 else None
