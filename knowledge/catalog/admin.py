"""The order endpoint in the admin: a form that never shows secret header values back, and the
«Проверить» button (one real lookup with a sample number, its result on the same page); the log of
lookups, read-only. Both scoped to the owner's bots (another bot's ids are 404)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from bots.admin_scoping import BotScopedAdmin
from bots.models import Bot
from knowledge.catalog import catalog, feeds, services, validation
from knowledge.catalog.endpoint import Fetched
from knowledge.catalog.models import CatalogImport, CatalogOffer, OrderEndpoint, OrderLookup

_CONFIGURED = (
    "url_template", "status_pointer", "date_pointer", "tracking_pointer", "phone_pointer", "email_pointer",
    "number_pattern", "second_factor", "enabled", "sample_number",
)
_OUTCOMES = {"found": gettext_lazy("найден"), "not_found": gettext_lazy("не найден (404)"),
             "unavailable": gettext_lazy("не проверить")}


class OrderEndpointForm(forms.ModelForm):
    headers = forms.CharField(
        label=gettext_lazy("Секретные заголовки"), required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off", "spellcheck": "false",
                                     "placeholder": "Authorization: Bearer …"}),
        help_text=gettext_lazy("По одному на строку: «Имя: значение». Сохранённые значения не показываются; "
                    "оставьте поле пустым, чтобы их не менять."),
    )
    clear_headers = forms.BooleanField(label=gettext_lazy("Удалить сохранённые заголовки"), required=False)

    class Meta:
        model = OrderEndpoint
        fields = ["bot", *_CONFIGURED]
        widgets = {"url_template": forms.TextInput(attrs={"class": "vURLField", "size": 90, "spellcheck": "false"})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = self.instance.header_names if self.instance.pk else []
        if names:
            saved = ", ".join(names)
            self.fields["headers"].help_text = _(
                "Сохранены: %(names)s (значения скрыты). Впишите заново, чтобы заменить все; пустое поле их не меняет."
            ) % {"names": saved}

    def clean_headers(self) -> dict[str, str] | None:
        text = self.cleaned_data.get("headers") or ""
        return validation.parse_headers(text) if text.strip() else None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        try:
            # the service's own checks, without writing: one set of words for the admin and the command
            values: dict[str, Any] = {name: cleaned.get(name) for name in _CONFIGURED}
            services.order_endpoint_validate(**values)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                if field not in self.errors:  # every field's own refusal, once
                    self.add_error(field if field in self.fields else None, messages)
        return cleaned


@admin.register(OrderEndpoint)
class OrderEndpointAdmin(BotScopedAdmin):
    form = OrderEndpointForm
    change_form_template = "admin/commerce/orderendpoint/change_form.html"
    list_display = ("bot", "url_template", "enabled", "second_factor", "header_list", "updated_at")
    list_select_related = ("bot",)
    list_filter = ("bot",)
    fieldsets = (
        (None, {"fields": ("bot", "enabled", "url_template", "headers", "clear_headers")}),
        (gettext_lazy("Где в ответе (JSON Pointer)"),
         {"fields": ("status_pointer", "date_pointer", "tracking_pointer")}),
        (gettext_lazy("Номер и второй фактор"),
         {"fields": ("number_pattern", "second_factor", "phone_pointer", "email_pointer", "sample_number")}),
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("bot",) if obj is not None else ()

    @admin.display(description=gettext_lazy("заголовки"))
    def header_list(self, obj: OrderEndpoint) -> str:
        return ", ".join(obj.header_names) or "—"

    def save_model(self, request: HttpRequest, obj: OrderEndpoint, form: Any, change: bool) -> None:
        data = form.cleaned_data
        headers = {} if data.get("clear_headers") else data.get("headers")
        saved = services.order_endpoint_configure(
            bot=obj.bot, headers=headers, **{name: data[name] for name in _CONFIGURED}
        )
        obj.pk, obj.headers_token, obj.header_names = saved.pk, saved.headers_token, saved.header_names

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(require_POST(self.check_view))
        return [path("<path:object_id>/check/", view, name="commerce_orderendpoint_check"), *super().get_urls()]

    def check_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """«Проверить»: one lookup with the sample number, shown under the form."""
        endpoint = self.get_object(request, object_id)
        if endpoint is None or not self.has_change_permission(request, endpoint):
            raise Http404
        number = str(request.POST.get("number", "")).strip()
        fetched = services.order_endpoint_check(endpoint=endpoint, number=number, who=f"admin:{request.user.pk}")
        return self.change_view(_as_get(request), object_id, extra_context={"check": _shown(number, fetched)})


def _as_get(request: HttpRequest) -> HttpRequest:
    """The change page is rendered for the check's answer as if opened anew (nothing is saved)."""
    request.method = "GET"
    return request


def _shown(number: str, fetched: Fetched) -> dict[str, Any]:
    order = fetched.order
    shown: dict[str, Any] = {
        "number": number or "—", "outcome": fetched.outcome, "outcome_label": _OUTCOMES[fetched.outcome],
        "reason": fetched.reason, "http_status": fetched.http_status,
        "duration_ms": round(fetched.duration_ms), "attempts": fetched.attempts,
    }
    if order is not None:
        shown |= {
            "status": order.status, "date": order.delivery_date.isoformat() if order.delivery_date else order.date_text,
            "tracking_url": order.tracking_url,
            "factor": _("есть телефон и e-mail") if order.phone and order.email
            else _("есть телефон") if order.phone else _("есть e-mail") if order.email else "",
        }
    return shown


@admin.register(OrderLookup)
class OrderLookupAdmin(BotScopedAdmin):
    list_display = ("created_at", "bot", "number", "result", "visitor_id", "ip", "http_status", "duration_ms",
                    "shown_reason")
    list_select_related = ("bot",)
    list_filter = ("result", "bot")
    search_fields = ("number", "visitor_id")
    date_hierarchy = "created_at"
    exclude = ("reason",)
    readonly_fields = ("shown_reason",)

    @admin.display(description=gettext_lazy("причина"))
    def shown_reason(self, obj: OrderLookup) -> str:
        return obj.reason_shown

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CatalogUploadForm(forms.Form):
    bot = forms.ModelChoiceField(queryset=Bot.objects.none(), label=gettext_lazy("Бот"))
    feed = forms.FileField(label=gettext_lazy("Файл фида"), required=False,
                           help_text=gettext_lazy("YML (.xml) или CSV"))
    url = forms.URLField(label=gettext_lazy("Или адрес фида"), required=False, assume_scheme="https",
                         help_text=gettext_lazy("Например https://shop.example/market.xml"))
    every_hours = forms.IntegerField(
        label=gettext_lazy("Обновлять каждые, ч"), required=False, min_value=1, max_value=24 * 365,
        help_text=gettext_lazy("Только для фида по адресу: он будет загружаться заново сам, с подсчётом добавленных, "
                    "изменённых и удалённых товаров. Пусто — только вручную."),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("feed") and not cleaned.get("url") and not self.errors:
            raise ValidationError(_("Выберите файл или укажите адрес фида."))
        if cleaned.get("every_hours") and (cleaned.get("feed") or not cleaned.get("url")):
            self.add_error("every_hours", _("По расписанию обновляется только фид по адресу, не загруженный файл."))
        return cleaned


@admin.register(CatalogImport)
class CatalogImportAdmin(BotScopedAdmin):
    change_list_template = "admin/commerce/catalogimport/change_list.html"
    list_display = ("created_at", "bot", "source", "status", "added", "changed", "removed", "skipped", "scheduled",
                    "shown_message")
    list_select_related = ("bot", "source")
    list_filter = ("status", "bot")
    # Stored texts (core/texts.py) in the reader's language, not their JSON.
    readonly_fields = ("bot", "source", "status", "added", "changed", "removed", "skipped", "scheduled",
                       "shown_message", "shown_problems", "duration_ms", "created_at")
    fields = readonly_fields

    @admin.display(description=gettext_lazy("сообщение"))
    def shown_message(self, obj: CatalogImport) -> str:
        return obj.message_shown

    @admin.display(description=gettext_lazy("замечания"))
    def shown_problems(self, obj: CatalogImport) -> str:
        return "\n".join(obj.problems_shown) or "—"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.upload_view)
        return [path("upload/", view, name="commerce_catalogimport_upload"), *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {**(extra_context or {}), "title": _("Загрузки каталога")})

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        """«Загрузить каталог»: a file or an address, for one of the owner's bots."""
        if not self._member(request, None):
            raise Http404
        form = CatalogUploadForm(request.POST or None, request.FILES or None)
        form.fields["bot"].queryset = Bot.objects.filter(pk__in=self._ids(request)).order_by("name")  # type: ignore[attr-defined]
        if request.method == "POST" and form.is_valid():
            bot, upload, url = form.cleaned_data["bot"], form.cleaned_data.get("feed"), form.cleaned_data.get("url")
            try:
                if upload is not None:
                    if (upload.size or 0) > settings.CATALOG_MAX_BYTES:  # refused before it is read
                        form.add_error("feed", _("Файл больше допустимого (%(mb)s МБ): такой фид не загружаем.") % {
                            "mb": settings.CATALOG_MAX_BYTES // (1024 * 1024)})
                        imported = None
                    else:
                        imported = catalog.catalog_import_bytes(bot=bot, data=upload.read(), name=upload.name)
                else:
                    imported = catalog.catalog_import_url(bot=bot, url=str(url))
                    catalog.catalog_schedule(source=imported.source, every_hours=form.cleaned_data.get("every_hours"))
            except feeds.FeedError as exc:
                form.add_error("url", str(exc))
                imported = None
            if imported is not None:
                run = imported.run
                if run.status == CatalogImport.Status.DONE:
                    messages.success(request, _(
                        "Каталог загружен: добавлено %(a)s, изменено %(c)s, удалено %(r)s, пропущено %(s)s."
                    ) % {"a": run.added, "c": run.changed, "r": run.removed, "s": run.skipped})
                else:
                    messages.error(request, _("Каталог не загружен: %(why)s. Загруженные раньше товары не изменились.")
                                   % {"why": run.message_shown})
                return HttpResponseRedirect(reverse("admin:commerce_catalogimport_changelist"))
        context = {**self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
                   "title": _("Загрузить каталог")}
        return TemplateResponse(request, "admin/commerce/catalogimport/upload.html", context)


@admin.register(CatalogOffer)
class CatalogOfferAdmin(BotScopedAdmin):
    list_display = ("name", "bot", "price", "old_price", "available", "category", "vendor", "offer_id")
    list_select_related = ("bot",)
    list_filter = ("available", "bot")
    search_fields = ("name", "offer_id", "vendor")
    readonly_fields = ("bot", "source", "offer_id", "name", "price", "old_price", "currency", "available", "url",
                       "picture", "category", "vendor", "description", "params", "updated_at")
    # Machine fields: the change hash and the search vector (and its model) mean nothing to a person.
    exclude = ("content_hash", "embedding", "embedding_model")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
