"""`/b/<slug>/usage/`: what the bot's model calls cost, per day, route and model (the billing lines,
read through llm.selectors), and the monthly budget (llm.budget)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any, Final

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bots.models import Bot
from bots.pages import owner_bot, owner_context
from core.dates import month_in_sentence
from llm import budget
from llm.labels import route_words
from llm.selectors import usage_by_day

PERIODS: Final = (7, 30, 90)


class BudgetForm(forms.Form):
    budget = forms.DecimalField(
        label=gettext_lazy("Бюджет на месяц, $"), required=False, min_value=Decimal(0), max_digits=10,
        decimal_places=2, help_text=gettext_lazy(
            "Когда расходы месяца дойдут до бюджета, бот до конца месяца отвечает без модели — выдержками из "
            "знаний со ссылками. Пусто — без ограничения. Ноль — модель не спрашивается совсем."),
        localize=True,
    )


def _days(request: HttpRequest) -> int:
    try:
        days = int(request.GET.get("days", "30"))
    except ValueError:
        return 30
    return days if days in PERIODS else 30


@login_required(login_url="login")
def usage_page(request: HttpRequest, slug: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    form = BudgetForm(request.POST or None, initial={"budget": bot.monthly_budget_usd})
    if request.method == "POST":
        if form.is_valid():
            try:
                budget.budget_set(bot=bot, limit=form.cleaned_data["budget"])
            except ValidationError as exc:
                form.add_error("budget", exc)
            else:
                messages.success(request, _("Бюджет сохранён."))
                return HttpResponseRedirect(reverse("insights:usage", args=[bot.slug]))
    context = owner_context(request, bot, section="usage", title=_("Расходы на модель"))
    context |= {"form": form, "status": budget.budget_status(bot), "month": month_in_sentence(budget.month_start()),
                "periods": PERIODS, **_usage(bot, _days(request))}
    return render(request, "insights/usage.html", context, status=400 if form.errors else 200)


def _usage(bot: Bot, days: int) -> dict[str, Any]:
    zone = timezone.get_current_timezone()  # the budget's months are in it too (llm/budget.py)
    today = timezone.now().astimezone(zone).date()
    first = today - dt.timedelta(days=days - 1)
    since = dt.datetime.combine(first, dt.time.min, tzinfo=zone)
    lines = usage_by_day(bot_id=bot.pk, since=since, tzinfo=zone)
    rows = [{**row, "route": route_words(row["route"])} for row in lines]  # «chat» reads «Ответ в чате»
    labels = [first + dt.timedelta(days=n) for n in range(days)]
    by_route: dict[str, dict[dt.date, float]] = defaultdict(dict)
    models: dict[str, dict[str, Any]] = {}
    for row in rows:
        per_day = by_route[row["route"] or "—"]
        per_day[row["day"]] = per_day.get(row["day"], 0.0) + float(row["cost"] or 0)
        total = models.setdefault(row["model"] or "—", {"model": row["model"] or "—", "calls": 0, "cost": Decimal(0),
                                                        "input_tokens": 0, "output_tokens": 0})
        total["calls"] += row["calls"]
        total["cost"] += row["cost"] or 0
        total["input_tokens"] += row["input_tokens"] or 0
        total["output_tokens"] += row["output_tokens"] or 0
    chart = {
        "labels": [formats.date_format(day, "MONTH_DAY_FORMAT") for day in labels],  # «2 декабря» / "December 2"
        "datasets": [{"label": route, "data": [round(per_day.get(day, 0.0), 6) for day in labels]}
                     for route, per_day in sorted(by_route.items())],
        "currency": "$",
    }
    return {
        "days": days, "rows": rows, "chart": chart, "by_model": sorted(models.values(), key=lambda m: -m["cost"]),
        "period_cost": sum((row["cost"] or Decimal(0) for row in rows), Decimal(0)),
        "period_calls": sum(row["calls"] for row in rows),
    }
