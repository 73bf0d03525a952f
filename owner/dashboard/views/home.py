"""`/`: where a person lands after signing in, and `/start/`: a new bot for a site."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _

from bots.selectors import inbox_bots, owned_bots
from owner.dashboard.forms import SiteForm
from owner.dashboard.overview import bot_summaries
from owner.dashboard.services import bot_onboard
from owner.dashboard.sitecheck import SiteCheck, SiteChecksLimited, site_check, site_check_count

LOGIN_URL = "login"
INBOX_URL = "/inbox/"


def home(request: HttpRequest) -> HttpResponse:
    """One bot: its overview. Several: the list with their key numbers. None but an operator's
    seat: the inbox. Nothing at all: onboarding. A superuser owns every bot here (and the admin
    stays a link away in the header)."""
    user = request.user
    if not user.is_authenticated:
        return HttpResponseRedirect(f"{reverse(LOGIN_URL)}?next=/")
    bots = list(owned_bots(user).order_by("name", "pk"))
    if len(bots) == 1:
        return HttpResponseRedirect(reverse("dashboard:overview", args=[bots[0].slug]))
    if bots:
        context = {"title": _("Ваши боты"), "summaries": bot_summaries(bots=bots), "bots": bots}
        return render(request, "dashboard/bots.html", context)
    if inbox_bots(user).exists():
        return HttpResponseRedirect(INBOX_URL)
    return HttpResponseRedirect(reverse("dashboard:start"))


@login_required(login_url=LOGIN_URL)
def start(request: HttpRequest) -> HttpResponse:
    """Step one of onboarding: the site's address is checked (robots.txt, sitemaps, the page itself)
    and the result shown; «Создать бота» checks again, creates the bot and queues its crawl."""
    form = SiteForm(request.POST or None)
    check = None
    status = 200
    if request.method == "POST" and form.is_valid():
        url = form.cleaned_data["url"]
        try:
            site_check_count(user_id=request.user.pk)
        except SiteChecksLimited as exc:
            form.add_error("url", exc.message)
            return _start_page(request, form, None, status=429)
        check = site_check(url=url)
        if check.ok and request.POST.get("action") == "create":
            bot, _run = bot_onboard(user=request.user, url=url, name=form.cleaned_data["name"])
            messages.success(request, _("Бот «%(name)s» создан, сайт обходится.") % {"name": bot.name})
            return HttpResponseRedirect(reverse("dashboard:setup", args=[bot.slug]))
        status = 200 if check.ok else 400
    elif request.method == "POST":
        status = 400
    return _start_page(request, form, check, status=status)


def _start_page(request: HttpRequest, form: SiteForm, check: SiteCheck | None, *, status: int) -> HttpResponse:
    bots = list(owned_bots(request.user).order_by("name", "pk").only("pk", "name", "slug"))
    context = {"title": _("Новый бот"), "form": form, "check": check, "bots": bots}
    return render(request, "dashboard/start.html", context, status=status)
