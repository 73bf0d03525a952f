"""`/b/<slug>/channels/`: the same bot in messengers. Paste the token, Spravka checks it, sets the
webhook and shows the status and the last delivery error; disconnect forgets the token."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from bots.models import Bot
from bots.pages import owner_bot, owner_context
from core.texts import shown
from messengers import selectors, services
from messengers.models import Connection
from owner.dashboard.forms import MaxForm, TelegramForm, VKForm

LOGIN_URL = "login"


def _page(
    request: HttpRequest, bot: Bot, *, telegram_form: TelegramForm | None = None, vk_form: VKForm | None = None,
    max_form: MaxForm | None = None, status: int = 200,
) -> HttpResponse:
    connections = selectors.connections_of(bot)
    context: dict[str, Any] = {
        **owner_context(request, bot, section="channels", title=_("Мессенджеры: %(name)s") % {"name": bot.name}),
        "telegram": connections.get(Connection.Kind.TELEGRAM),
        "telegram_form": telegram_form or TelegramForm(),
        "vk": connections.get(Connection.Kind.VK),
        "vk_form": vk_form or VKForm(),
        "max": connections.get(Connection.Kind.MAX),
        "max_form": max_form or MaxForm(),
        "counts": selectors.conversations_by_channel(bot),
        "public_url": settings.SPRAVKA_PUBLIC_URL,
        "public_url_reachable": selectors.public_url_reachable(settings.SPRAVKA_PUBLIC_URL),
    }
    return render(request, "dashboard/channels.html", context, status=status)


@login_required(login_url=LOGIN_URL)
@require_GET
def channels(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, owner_bot(request, slug))


@login_required(login_url=LOGIN_URL)
@require_POST
def channel_telegram(request: HttpRequest, slug: str) -> HttpResponse:
    """Connect (or reconnect with a new token): checked with Telegram before anything is saved."""
    bot = owner_bot(request, slug)
    form = TelegramForm(request.POST)
    if not form.is_valid():
        return _page(request, bot, telegram_form=form, status=400)
    try:
        connection = services.telegram_connect(bot=bot, token=form.cleaned_data["token"])
    except services.ConnectFailed as exc:
        form.add_error("token", shown(exc.stored))
        return _page(request, bot, telegram_form=form, status=400)
    messages.success(request, _("Telegram подключён: @%(name)s отвечает посетителям.") % {
        "name": connection.account_name})
    return HttpResponseRedirect(reverse("dashboard:channels", args=[bot.slug]))


@login_required(login_url=LOGIN_URL)
@require_POST
def channel_vk(request: HttpRequest, slug: str) -> HttpResponse:
    """Connect a VK community: its access key checked with VK; the address to paste into its
    Callback API settings is shown on the page."""
    bot = owner_bot(request, slug)
    form = VKForm(request.POST)
    if not form.is_valid():
        return _page(request, bot, vk_form=form, status=400)
    try:
        connection = services.vk_connect(bot=bot, token=form.cleaned_data["token"],
                                         confirmation=form.cleaned_data["confirmation"],
                                         secret=form.cleaned_data["secret"])
    except services.ConnectFailed as exc:
        form.add_error(None, shown(exc.stored))
        return _page(request, bot, vk_form=form, status=400)
    messages.success(request, _("Сообщество «%(name)s» подключено. Осталось вставить адрес в настройки Callback API "
                                "и нажать «Подтвердить».") % {"name": connection.account_name})
    return HttpResponseRedirect(reverse("dashboard:channels", args=[bot.slug]) + "#vk")


@login_required(login_url=LOGIN_URL)
@require_POST
def channel_max(request: HttpRequest, slug: str) -> HttpResponse:
    """Connect a MAX bot: its token checked with MAX before anything is saved, the webhook subscribed."""
    bot = owner_bot(request, slug)
    form = MaxForm(request.POST)
    if not form.is_valid():
        return _page(request, bot, max_form=form, status=400)
    try:
        connection = services.max_connect(bot=bot, token=form.cleaned_data["token"])
    except services.ConnectFailed as exc:
        form.add_error("token", shown(exc.stored))
        return _page(request, bot, max_form=form, status=400)
    messages.success(request, _("MAX подключён: бот «%(name)s» отвечает посетителям.") % {
        "name": connection.account_name})
    return HttpResponseRedirect(reverse("dashboard:channels", args=[bot.slug]) + "#max")


@login_required(login_url=LOGIN_URL)
@require_POST
def channel_disconnect(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    connection = selectors.connections_of(bot).get(kind)
    if connection is None:
        raise Http404
    services.connection_disconnect(connection=connection)
    messages.success(request, _("%(channel)s отключён: токен забыт, бот там больше не отвечает.") % {
        "channel": connection.get_kind_display()})
    return HttpResponseRedirect(reverse("dashboard:channels", args=[bot.slug]))
