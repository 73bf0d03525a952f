"""`/b/<slug>/`: how the bot is doing, as numbers and charts, with the next step when it is new."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from bots.pages import owner_bot, owner_context
from owner.dashboard.operators import operator_numbers
from owner.dashboard.overview import PERIODS, bot_overview, period_days, weeks_for

LOGIN_URL = "login"


@login_required(login_url=LOGIN_URL)
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    days = period_days(request.GET.get("days"))
    data = bot_overview(bot=bot, days=days)
    team = operator_numbers(bot=bot, days=days, weeks=weeks_for(days))
    context = {
        **owner_context(request, bot, section="overview", title=_("Обзор: %(name)s") % {"name": bot.name}),
        "o": data, "periods": PERIODS, "team": team,
        "rows": list(zip(data.charts["weeks"], data.charts["accuracy"], data.charts["decided"], data.charts["gaps"],
                         strict=True)),
        "charts": {**data.charts, "csat": team.chart, "labels": {
            "accuracy": _("Точность в процентах"), "gaps": _("Вопросов без ответа"),
        }},
    }
    return render(request, "dashboard/overview.html", context)
