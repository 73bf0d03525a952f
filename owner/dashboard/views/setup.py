"""`/b/<slug>/setup/`: the site and its crawl with live progress, the widget to try on the page,
the snippet to copy and the sites the widget may run on."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from bots.models import Bot
from bots.origins import normalize_origin
from bots.pages import owner_bot, owner_context
from bots.services import bot_origins_set
from bots.views import embed_snippet
from knowledge.exceptions import KnowledgeError
from knowledge.models import Source
from knowledge.selectors import crawl_runs, latest_run_ids, sources_of
from owner.dashboard.forms import OriginsForm, SiteForm
from owner.dashboard.services import site_add
from owner.dashboard.sitecheck import SiteCheck, SiteChecksLimited, site_check, site_check_count

LOGIN_URL = "login"


def crawlable_sources(bot: Bot) -> list[Source]:
    """The bot's sites and sitemaps, each with `.last_run` (one query for the runs' ids, one for them)."""
    sources = list(sources_of(bot=bot).filter(kind__in=[Source.Kind.SITE, Source.Kind.SITEMAP]).order_by("pk"))
    return with_last_runs(bot, sources)


def with_last_runs(bot: Bot, sources: list[Source]) -> list[Source]:
    latest = latest_run_ids(sources=sources)
    runs = crawl_runs(bot=bot, run_ids=latest.values())
    for source in sources:
        source.last_run = runs.get(latest.get(source.pk, 0))  # type: ignore[attr-defined]
    return sources


def _page(request: HttpRequest, bot: Bot, *, site_form: SiteForm | None = None, check: SiteCheck | None = None,
          origins_form: OriginsForm | None = None, status: int = 200) -> HttpResponse:
    origins = bot.allowed_origins or []
    site_origin = normalize_origin(bot.site_url) if bot.site_url else None
    context: dict[str, Any] = {
        **owner_context(request, bot, section="setup", title=_("Установка: %(name)s") % {"name": bot.name}),
        "sources": crawlable_sources(bot),
        "site_form": site_form or SiteForm(initial={"url": bot.site_url}),
        "check": check,
        "snippet": embed_snippet(bot, settings.SPRAVKA_PUBLIC_URL),
        # The widget on this page loads from the address the owner is using right now (members may
        # open their bot's widget on this server's own pages whatever the allowed origins say).
        "widget_src": request.build_absolute_uri(static("assistant/widget.js")),
        "origins_form": origins_form or OriginsForm(initial={"origins": origins}),
        "site_origin_missing": bool(site_origin) and site_origin not in origins,
        "site_origin": site_origin,
    }
    return render(request, "dashboard/setup.html", context, status=status)


@login_required(login_url=LOGIN_URL)
@require_GET
def setup(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, owner_bot(request, slug))


@login_required(login_url=LOGIN_URL)
@require_POST
def setup_site(request: HttpRequest, slug: str) -> HttpResponse:
    """Check a site and crawl it for this bot (a first site, another one, or the same again)."""
    bot = owner_bot(request, slug)
    form = SiteForm(request.POST)
    if not form.is_valid():
        return _page(request, bot, site_form=form, status=400)
    try:
        site_check_count(user_id=request.user.pk)
    except SiteChecksLimited as exc:
        form.add_error("url", exc.message)
        return _page(request, bot, site_form=form, status=429)
    check = site_check(url=form.cleaned_data["url"])
    if not check.ok:
        return _page(request, bot, site_form=form, check=check, status=400)
    try:
        site_add(bot=bot, url=check.url)
    except KnowledgeError as exc:  # the same site is being crawled right now
        form.add_error("url", exc.message)
        return _page(request, bot, site_form=form, check=check, status=400)
    messages.success(request, _("Обход сайта %(url)s запущен.") % {"url": check.url})
    return HttpResponseRedirect(reverse("dashboard:setup", args=[bot.slug]))


@login_required(login_url=LOGIN_URL)
@require_POST
def origins(request: HttpRequest, slug: str) -> HttpResponse:
    """Where the widget may run: one origin per line; a bad line is named and nothing is changed."""
    bot = owner_bot(request, slug)
    form = OriginsForm(request.POST)
    if form.is_valid():
        try:
            bot_origins_set(bot=bot, origins=form.cleaned_data["origins"])
        except ValidationError as exc:
            form.add_error("origins", exc)
        else:
            messages.success(request, _("Список сайтов виджета сохранён."))
            return HttpResponseRedirect(reverse("dashboard:setup", args=[bot.slug]) + "#origins")
    bot.refresh_from_db(fields=["allowed_origins"])
    return _page(request, bot, origins_form=form, status=400)


@login_required(login_url=LOGIN_URL)
@require_GET
def run_progress(request: HttpRequest, slug: str, run_id: int) -> JsonResponse:
    """Polled by the progress bars (static/assistant/admin-progress.js reads the same fields as in the admin)."""
    bot = owner_bot(request, slug)
    run = crawl_runs(bot=bot, run_ids=[run_id]).get(run_id)
    if run is None:  # another bot's run is exactly as missing as one that does not exist
        raise Http404("No such crawl")
    return JsonResponse({
        "status": run.status, "status_display": run.get_status_display(), "percent": run.percent,
        "pages_done": run.pages_done, "pages_total": run.pages_total, "message": run.message_shown,
        "pages_indexed": run.pages_indexed, "pages_embedded": run.pages_embedded,
        "embeddings_done": run.embeddings_done, "embeddings_total": run.embeddings_total,
    })

