"""Old owner addresses outside the admin, kept so bookmarks and sign-in links still work: the
widget's try page and snippet now live on the dashboard's setup page (`/b/<slug>/setup/`), and the
list of bots is the dashboard home (`/`). Also the snippet itself, which the admin shows too."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from bots.models import Bot
from bots.pages import owner_bot

# Everyone signs in at /accounts/login/ (bots/accounts.py); the admin's login still works.
LOGIN_URL = "login"


def embed_snippet(bot: Bot, app_url: str) -> str:
    """The one tag a shop pastes into its pages; `app_url` is where visitors' browsers reach us."""
    src = f"{app_url.rstrip('/')}/static/assistant/widget.js"
    lang = ' data-lang="en"' if bot.language == "en" else ""  # else the widget follows the page's <html lang>
    return f'<script src="{src}" data-bot="{bot.public_key}"{lang} async></script>'


def bot_list(request: HttpRequest) -> HttpResponse:
    """`/bots/`: the dashboard home lists the person's bots (or signs them in, or sends an operator
    to the inbox)."""
    return HttpResponseRedirect(reverse("home"))


@login_required(login_url=LOGIN_URL)
def bot_try(request: HttpRequest, slug: str) -> HttpResponse:
    """`/bots/<slug>/try/`: the setup page has the live widget and the snippet. A bot the user does
    not own is a 404 here as there, not a 403: its slug must not be confirmed to strangers or operators."""
    bot = owner_bot(request, slug)
    return HttpResponseRedirect(reverse("dashboard:setup", args=[bot.slug]))
