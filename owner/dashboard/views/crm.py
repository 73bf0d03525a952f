"""`/b/<slug>/crm/`: where the bot's leads go. The owner picks amoCRM or Bitrix24, pastes the
address and the key; Spravka checks them with a test call before saving, shows the status and the
last leads sent with how each went, and sends a failed one again."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from bots.models import Bot
from bots.pages import owner_bot, owner_context
from core.texts import shown
from crm import delivery, selectors, services
from crm.models import CrmDelivery
from owner.dashboard.forms import CrmForm

LOGIN_URL = "login"


def _page(request: HttpRequest, bot: Bot, *, form: CrmForm | None = None, status: int = 200) -> HttpResponse:
    connection = selectors.connection_of(bot)
    working = connection if connection is not None and connection.working else None
    initial = {"kind": working.kind if working else "none",
               "amocrm_url": working.account if working and working.kind == "amocrm" else ""}
    context: dict[str, Any] = {
        **owner_context(request, bot, section="crm", title=_("CRM: %(name)s") % {"name": bot.name}),
        "connection": working,
        "form": form or CrmForm(initial=initial),
        "deliveries": selectors.recent_deliveries(bot),
    }
    return render(request, "dashboard/crm.html", context, status=status)


def _back(bot: Bot, anchor: str = "") -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("dashboard:crm", args=[bot.slug]) + anchor)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
def crm(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the page. POST: connect the CRM picked (checked with it first), or stop sending («Не отправлять»)."""
    bot = owner_bot(request, slug)
    if request.method == "GET":
        return _page(request, bot)
    form = CrmForm(request.POST)
    if not form.is_valid():
        return _page(request, bot, form=form, status=400)
    kind = form.cleaned_data["kind"]
    if kind == "none":
        return _disconnect(request, bot)
    try:
        if kind == "amocrm":
            connection = services.amocrm_connect(bot=bot, url=form.cleaned_data["amocrm_url"],
                                                 token=form.cleaned_data["amocrm_token"])
        else:
            connection = services.bitrix24_connect(bot=bot, url=form.cleaned_data["bitrix24_url"])
    except services.ConnectFailed as exc:
        form.add_error(exc.field or _error_field(kind), shown(exc.text))
        return _page(request, bot, form=form, status=400)
    messages.success(request, _("%(crm)s подключена: новые заявки будут приходить туда вместе с перепиской.") % {
        "crm": connection.get_kind_display()})
    return _back(bot)


def _error_field(kind: str) -> str:
    return "amocrm_token" if kind == "amocrm" else "bitrix24_url"


def _disconnect(request: HttpRequest, bot: Bot) -> HttpResponse:
    connection = selectors.connection_of(bot)
    if connection is not None and connection.working:
        services.connection_disconnect(connection=connection)
        messages.success(request, _("CRM отключена: ключ забыт, заявки остаются только в Справке."))
    return _back(bot)


@login_required(login_url=LOGIN_URL)
@require_POST
def crm_check(request: HttpRequest, slug: str) -> HttpResponse:
    """«Проверить подключение»: a test call with the saved key."""
    bot = owner_bot(request, slug)
    connection = selectors.connection_of(bot)
    if connection is None or not connection.working:
        raise Http404
    error = services.connection_check(connection=connection)
    if error is None:
        messages.success(request, _("Подключение работает: %(crm)s ответила.") % {
            "crm": connection.get_kind_display()})
    else:
        messages.error(request, shown(error))
    return _back(bot)


@login_required(login_url=LOGIN_URL)
@require_POST
def crm_disconnect(request: HttpRequest, slug: str) -> HttpResponse:
    return _disconnect(request, owner_bot(request, slug))


@login_required(login_url=LOGIN_URL)
@require_POST
def crm_retry(request: HttpRequest, slug: str, delivery_id: int) -> HttpResponse:
    """«Отправить ещё раз» for one failed delivery of this bot (another bot's answers 404)."""
    bot = owner_bot(request, slug)
    found = selectors.delivery_of(bot, delivery_id)
    if found is None:
        raise Http404
    count = delivery.deliveries_retry(CrmDelivery.objects.filter(pk=found.pk, bot=bot))
    if count:
        messages.success(request, _("Заявка «%(name)s» поставлена в очередь.") % {"name": found.lead.name})
    return _back(bot, "#deliveries")
