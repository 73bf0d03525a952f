"""Owner pages outside the admin. Thin: scope by `owned_bots` (an operator has none of these pages),
build the context, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _

from assistant.bots.models import Bot
from assistant.bots.selectors import owned_bots

# Everyone signs in at /accounts/login/ (assistant/bots/accounts.py); the admin's login still works.
LOGIN_URL = "login"


def embed_snippet(bot: Bot, app_url: str) -> str:
    """The one tag a shop pastes into its pages; `app_url` is where visitors' browsers reach us."""
    src = f"{app_url.rstrip('/')}/static/assistant/widget.js"
    lang = ' data-lang="en"' if bot.language == "en" else ""  # else the widget follows the page's <html lang>
    return f'<script src="{src}" data-bot="{bot.public_key}"{lang} async></script>'


def request_origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


@login_required(login_url=LOGIN_URL)
def bot_list(request: HttpRequest) -> HttpResponse:
    """`/bots/` has nothing of its own to show yet: go straight to the first bot's try page."""
    bot = owned_bots(request.user).order_by("name", "pk").first()
    if bot is None:
        raise Http404("No bots for this account")
    return HttpResponseRedirect(reverse("bots:try", args=[bot.slug]))


@login_required(login_url=LOGIN_URL)
def bot_try(request: HttpRequest, slug: str) -> HttpResponse:
    """The widget live on a page of our own, plus the snippet to copy. A bot the user does not
    own is a 404, not a 403: its slug must not be confirmed to strangers, nor its settings to operators."""
    bots = owned_bots(request.user).order_by("name", "pk")
    bot = get_object_or_404(bots, slug=slug)
    origin = request_origin(request)
    context = {
        **admin.site.each_context(request),
        "title": _("Проверить виджет: %(name)s") % {"name": bot.name},
        "bot": bot,
        "bots": list(bots.only("pk", "name", "slug")),
        "snippet": embed_snippet(bot, settings.SPRAVKA_PUBLIC_URL),
        # The widget on this page loads from the address the owner is using right now, so it
        # works behind any proxy; the snippet above uses the public address shops must reach.
        "widget_src": request.build_absolute_uri(static("assistant/widget.js")),
        # Members may open their bot's widget on this server's own pages whatever the allowed
        # origins say (assistant/chat/consumers.py, `_member_at_home`): no warning needed here.
        "origin": origin,
    }
    return render(request, "bots/try.html", context)
