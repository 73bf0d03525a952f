"""The owner's voice and experiments pages. Thin: the bot comes from `owner_bot` (404 for a bot the
user does not own), the services validate and write, the templates render."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from answers import replies
from bots.models import Bot
from bots.pages import owner_bot, owner_context
from feedback import experiments
from feedback.models import Experiment
from owner.tuning import forms, preview
from voice import effective, services, sliders
from voice.exceptions import VoiceConflict, VoiceInvalid

LOGIN_URL = "login"
CANNED_LABELS = {
    "greeting": lambda: _("Приветствие"),
    "handoff": lambda: _("Передача оператору"),
    "no_answer": lambda: _("Нет точного ответа"),
    "out_of_hours": lambda: _("Операторы не работают"),
}
LANGUAGE_LABELS = {"ru": lambda: _("По-русски"), "en": lambda: _("По-английски")}


def _page_language() -> str:
    return "en" if (get_language() or "ru").startswith("en") else "ru"


def _slider_rows(levels: dict[str, int], errors: dict[str, list[str]], prefix: str = "slider") -> list[dict[str, Any]]:
    language = _page_language()
    return [
        {
            "key": s.key, "name": f"{prefix}_{s.key}", "label": s.label, "low": s.low, "high": s.high, "hint": s.hint,
            "value": levels.get(s.key, sliders.NEUTRAL),
            "meanings_json": json.dumps([sliders.meaning(s.key, level, language) for level in sliders.LEVELS],
                                        ensure_ascii=False),
            "meaning": sliders.meaning(s.key, levels.get(s.key, sliders.NEUTRAL)
                                       if levels.get(s.key) in sliders.LEVELS else sliders.NEUTRAL, language),
            "errors": errors.get(f"sliders.{s.key}", []),
        }
        for s in sliders.SLIDERS
    ]


def _form_values(bot: Bot, data: dict[str, Any] | None) -> dict[str, Any]:
    """What the form shows: the posted values when there are any (kept after an error), else the saved."""
    if data is None:
        voice = effective.base_of(bot.voice)
        return {"sliders": dict(voice.sliders), "conditions": voice.conditions, "preferred": list(voice.preferred),
                "forbidden": "\n".join(voice.forbidden), "replies": voice.replies}
    levels = {}
    for key, raw in data["sliders"].items():
        levels[key] = int(raw) if str(raw).isdigit() else raw
    rows = [(term, replacement) for term, replacement in data["preferred"] if term.strip() or replacement.strip()]
    return {"sliders": levels, "conditions": data["conditions"], "preferred": rows,
            "forbidden": "\n".join(data["forbidden"]), "replies": data["replies"]}


def _canned_warnings(bot: Bot) -> list[str]:
    """Default canned texts that hold a forbidden word: shown whole (never emptied), so the owner is told."""
    words = effective.dictionary_of(bot)
    found = []
    for language in effective.LANGUAGES:
        for key in effective.CANNED_KEYS:
            if not effective.base_of(bot.voice).canned(language, key):
                bad = words.forbidden_in(replies.TEXTS[language][key])
                if bad:
                    found.append(_("«%(reply)s» (%(lang)s) содержит запрещённое слово «%(word)s»: напишите свой текст.")
                                 % {"reply": CANNED_LABELS[key](), "lang": language, "word": bad[0]})
    return found


def _voice_page(request: HttpRequest, bot: Bot, *, data: dict[str, Any] | None = None,
                errors: dict[str, list[str]] | None = None, compared: dict[str, Any] | None = None,
                revision: int | None = None, status: int = 200) -> HttpResponse:
    errors = errors or {}
    values = _form_values(bot, data)
    rows = [list(row) for row in values["preferred"]] or []
    canned = [
        {"language": language, "label": LANGUAGE_LABELS[language](), "fields": [
            {"name": f"reply_{language}_{key}", "label": CANNED_LABELS[key](),
             "value": (values["replies"].get(language) or {}).get(key, ""),
             "default": replies.TEXTS[language][key].replace("{hours}", ""),
             "errors": errors.get(f"replies.{language}.{key}", [])}
            for key in effective.CANNED_KEYS]}
        for language in effective.LANGUAGES
    ]
    context = {
        **owner_context(request, bot, section="voice", title=_("Голос бота")),
        "sliders": _slider_rows(values["sliders"], errors), "conditions": values["conditions"],
        "rows": rows, "forbidden": values["forbidden"], "canned": canned, "errors": errors,
        "revision": services.revision_of(bot) if revision is None else revision,
        "limits": {"chars": services.CONDITIONS_MAX_CHARS, "lines": services.CONDITIONS_MAX_LINES,
                   "forbidden": services.FORBIDDEN_MAX, "preferred": services.PREFERRED_MAX},
        "compared": compared, "question": (compared or {}).get("question") or request.POST.get("question", ""),
        "model": preview.model_configured(bot), "warnings": _canned_warnings(bot),
        "running": (bot.voice or {}).get("experiment"),
    }
    return render(request, "tuning/voice.html", context, status=status)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
def voice_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the form. POST action=preview: the question under saved vs edited settings, nothing
    saved. POST action=save: validated, saved against the revision the form was opened at."""
    bot = owner_bot(request, slug)
    if request.method == "GET":
        return _voice_page(request, bot)
    data = forms.voice_data(request.POST)
    revision = forms.revision(request.POST)
    if request.POST.get("action") == "preview":
        try:
            stored = services.voice_validate(data=data)
        except VoiceInvalid as exc:
            return _voice_page(request, bot, data=data, errors=exc.errors, revision=revision, status=400)
        compared = preview.compare(bot=bot, edited=services.preview_bot(bot=bot, stored=stored),
                                   question=request.POST.get("question", ""))
        return _voice_page(request, bot, data=data, compared=compared, revision=revision)
    try:
        services.voice_save(bot=bot, data=data, revision=revision)
    except VoiceInvalid as exc:
        messages.error(request, _("Не сохранено: исправьте отмеченные поля. Сохранённые настройки не изменились."))
        return _voice_page(request, bot, data=data, errors=exc.errors, revision=revision, status=400)
    except VoiceConflict:
        bot.refresh_from_db(fields=["voice"])
        messages.error(request, _("Пока вы редактировали, настройки голоса сохранил кто-то другой. Ваши изменения "
                                  "не сохранены, они остались в форме: проверьте и сохраните ещё раз."))
        return _voice_page(request, bot, data=data, status=409)
    messages.success(request, _("Настройки голоса сохранены: они действуют с нового разговора, а в уже открытом "
                                "чате — после обновления страницы."))
    return HttpResponseRedirect(reverse("tuning:voice", args=[bot.slug]))


def _experiment_view(bot: Bot, experiment: Experiment) -> dict[str, Any]:
    results = experiments.experiment_results(bot=bot, experiment=experiment)
    chart = {
        "labels": [c.label for c in results.comparisons],
        "a": [round(100 * c.rates[0], 1) if c.rates[0] is not None else 0 for c in results.comparisons],
        "b": [round(100 * c.rates[1], 1) if c.rates[1] is not None else 0 for c in results.comparisons],
        "names": [_("Вариант А"), _("Вариант Б")],
    }
    return {"experiment": experiment, "results": results, "chart": chart}


def _experiments_page(request: HttpRequest, bot: Bot, *, data: dict[str, Any] | None = None,
                      errors: dict[str, list[str]] | None = None, status: int = 200,
                      shown: Experiment | None = None) -> HttpResponse:
    errors = errors or {}
    all_experiments = experiments.experiments_of(bot=bot)
    running = next((e for e in all_experiments if e.running), None)
    shown = shown or running
    model = preview.model_configured(bot)
    # Without a model only thresholds change answers: the form starts there and says so of the rest.
    data = data or {"name": "", "kind": Experiment.Kind.VOICE if model else Experiment.Kind.THRESHOLD, "share": "50",
                    "metric": Experiment.Metric.ANSWERED,
                    "variant": {"sliders": dict(effective.base_of(bot.voice).sliders),
                                "conditions": effective.base_of(bot.voice).conditions,
                                "match_threshold": "", "confidence_threshold": ""}}
    variant_levels = {k: int(v) if str(v).isdigit() else v for k, v in data["variant"]["sliders"].items()}
    kinds = [(value, label if model or value == Experiment.Kind.THRESHOLD else _("%(kind)s — нужна модель")
              % {"kind": label}) for value, label in Experiment.Kind.choices]
    context = {
        **owner_context(request, bot, section="experiments", title=_("Эксперименты")),
        "experiments": all_experiments, "running": running, "shown": _experiment_view(bot, shown) if shown else None,
        "data": data, "errors": errors, "kinds": kinds, "metrics": Experiment.Metric.choices,
        "variant_sliders": _slider_rows(variant_levels, {k[len("variant."):]: v for k, v in errors.items()
                                                          if k.startswith("variant.")}, prefix="variant"),
        "rule": {"per_arm": experiments.MIN_PER_ARM, "events": experiments.MIN_EVENTS, "alpha": experiments.ALPHA},
        "thresholds": _threshold_rows(bot, data["variant"]), "model": model,
    }
    return render(request, "tuning/experiments.html", context, status=status)


def _threshold_rows(bot: Bot, variant: dict[str, Any]) -> list[dict[str, Any]]:
    """The two thresholds a variant may change, named and explained as in the bot's settings
    (bots/models.py), with the bot's own value beside the field."""
    rows = []
    for name in ("match_threshold", "confidence_threshold"):
        field = Bot._meta.get_field(name)
        assert isinstance(field, models.FloatField)
        rows.append({"name": name, "label": capfirst(field.verbose_name), "help": field.help_text,
                     "current": getattr(bot, name), "value": variant.get(name, "")})
    return rows


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
def experiments_page(request: HttpRequest, slug: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    if request.method == "GET":
        return _experiments_page(request, bot)
    data = forms.experiment_data(request.POST)
    try:
        experiments.experiment_start(bot=bot, **data)
    except experiments.ExperimentInvalid as exc:
        messages.error(request, _("Эксперимент не начат: исправьте отмеченные поля."))
        return _experiments_page(request, bot, data=data, errors=exc.errors, status=400)
    except experiments.ExperimentAlreadyRunning:
        messages.error(request, _("У бота уже идёт эксперимент: остановите его, прежде чем начинать новый."))
        return _experiments_page(request, bot, data=data, status=409)
    messages.success(request, _("Эксперимент начат: новые разговоры делятся между вариантами."))
    return HttpResponseRedirect(reverse("tuning:experiments", args=[bot.slug]))


@login_required(login_url=LOGIN_URL)
def experiment_page(request: HttpRequest, slug: str, experiment_id: int) -> HttpResponse:
    bot = owner_bot(request, slug)
    try:
        experiment = experiments.experiment_of(bot=bot, experiment_id=experiment_id)
    except experiments.ExperimentNotFound as exc:
        raise Http404("No such experiment") from exc
    return _experiments_page(request, bot, shown=experiment)


@login_required(login_url=LOGIN_URL)
@require_POST
def experiment_stop(request: HttpRequest, slug: str, experiment_id: int) -> HttpResponse:
    bot = owner_bot(request, slug)
    try:
        stopped = experiments.experiment_stop(bot=bot, experiment_id=experiment_id, apply=request.POST.get("apply", ""))
    except experiments.ExperimentNotFound as exc:
        raise Http404("No such experiment") from exc
    except experiments.ExperimentInvalid as exc:
        messages.error(request, str(exc))
        return HttpResponseRedirect(reverse("tuning:experiments", args=[bot.slug]))
    if stopped.winner == "b":
        messages.success(request, _("Эксперимент остановлен, вариант Б применён: теперь так отвечают всем."))
    else:
        messages.success(request, _("Эксперимент остановлен: бот отвечает как прежде (вариант А)."))
    return HttpResponseRedirect(reverse("tuning:experiment", args=[bot.slug, stopped.pk]))
