"""A/B experiments (docs/architecture.md): two variants of the voice, the «условия» or the thresholds, the
visitors split by a stable hash of their id, outcomes compared per arm.

The verdict rule (docs/voice.md, "Experiments"): the main metric's share in arm "b" against arm
"a" by a two-sided two-proportion z-test (statsmodels `proportions_ztest`). No verdict — «данных
пока мало» — until each arm has at least MIN_PER_ARM conversations and the two arms together at
least MIN_EVENTS conversations with the event (and without it: a share of 0 % or 100 % in both
arms says nothing); then a verdict only when p < ALPHA, otherwise «разницы не видно».

What must stay true: at most one experiment runs per bot (a partial unique constraint decides a
race); starting and stopping also change the bot's voice (voice/services.py) in the same
transaction; an experiment of another bot is not found, the same as one that does not exist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from statsmodels.stats.proportion import proportions_ztest

from bots.models import Bot
from chat import selectors as chat_selectors
from feedback.models import Experiment
from voice import effective
from voice import services as voice_services

MIN_PER_ARM: Final = 100
MIN_EVENTS: Final = 10
ALPHA: Final = 0.05
NAME_MAX: Final = 200
HIGHER_IS_BETTER: Final = {"answered": True, "lead": True, "thumbs_down": False, "handoff": False}
Metric = Experiment.Metric


class ExperimentError(Exception):
    pass


class ExperimentInvalid(ExperimentError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(m for ms in errors.values() for m in ms))
        self.errors = errors


class ExperimentNotFound(ExperimentError):
    pass


class ExperimentAlreadyRunning(ExperimentError):
    pass


def _threshold(raw: Any, label: str, key: str, errors: dict[str, list[str]]) -> float | None:
    text = str(raw if raw is not None else "").strip().replace(",", ".")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # nan fails too
        errors.setdefault(key, []).append(
            _("«%(label)s» — число от 0 до 1, например 0,5, а не «%(value)s».") % {"label": label, "value": text[:20]}
        )
        return None
    return value


def clean_variant(*, bot: Bot, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Variant "b" in the form the voice stores it; ExperimentInvalid naming every problem."""
    errors: dict[str, list[str]] = {}
    variant: dict[str, Any] = {}
    if kind == Experiment.Kind.VOICE:
        variant["sliders"] = voice_services.clean_sliders(data.get("sliders") or {}, errors, prefix="variant.sliders")
        if variant["sliders"] == dict(effective.base_of(bot.voice).sliders) and not errors:
            errors["variant"] = [_("Вариант Б не отличается от текущих слайдеров: сравнивать нечего.")]
    elif kind == Experiment.Kind.CONDITIONS:
        variant["conditions"] = voice_services.clean_conditions(data.get("conditions") or "", errors,
                                                               key="variant.conditions")
        if variant["conditions"] == effective.base_of(bot.voice).conditions and not errors:
            errors["variant"] = [_("Вариант Б не отличается от текущих условий: сравнивать нечего.")]
    elif kind == Experiment.Kind.THRESHOLD:
        for name, label in (("match_threshold", _("Порог совпадения")),
                            ("confidence_threshold", _("Порог уверенности"))):
            value = _threshold(data.get(name), label, f"variant.{name}", errors)
            if value is not None:
                variant[name] = value
        if not variant and not errors:
            errors["variant"] = [_("Укажите хотя бы один порог для варианта Б.")]
    else:
        errors["kind"] = [_("Выберите, что сравниваем: тон, условия или пороги.")]
    if errors:
        raise ExperimentInvalid(errors)
    return variant


def _baseline(bot: Bot, kind: str) -> dict[str, Any]:
    voice = effective.base_of(bot.voice)
    if kind == Experiment.Kind.VOICE:
        return {"sliders": dict(voice.sliders)}
    if kind == Experiment.Kind.CONDITIONS:
        return {"conditions": voice.conditions}
    return {"match_threshold": bot.match_threshold, "confidence_threshold": bot.confidence_threshold}


def experiment_start(
    *, bot: Bot, name: str, kind: str, variant: Mapping[str, Any], share: Any = 50, metric: str = Metric.ANSWERED,
) -> Experiment:
    """Start splitting new conversations between the bot as it is (a) and `variant` (b)."""
    errors: dict[str, list[str]] = {}
    name = " ".join(str(name or "").split())
    if not name:
        errors["name"] = [_("Назовите эксперимент, например «Короче и строже».")]
    elif len(name) > NAME_MAX:
        errors["name"] = [_("Название — не больше %(max)d знаков.") % {"max": NAME_MAX}]
    try:
        share_value = int(str(share).strip())
    except ValueError:
        share_value = 0
    if not 1 <= share_value <= 99:
        errors["share"] = [_("Доля варианта Б — целое число от 1 до 99 процентов.")]
    if metric not in Metric.values:
        errors["metric"] = [_("Выберите главный показатель из списка.")]
    try:
        cleaned = clean_variant(bot=bot, kind=kind, data=variant)
    except ExperimentInvalid as exc:
        errors.update(exc.errors)
    if errors:
        raise ExperimentInvalid(errors)
    try:
        with transaction.atomic():
            experiment = Experiment.objects.create(
                bot=bot, name=name, kind=kind, metric=metric, share=share_value, baseline=_baseline(bot, kind),
                variant=cleaned,
            )
            voice_services.experiment_attach(bot=bot, experiment_id=experiment.pk, share=share_value, variant=cleaned)
    except IntegrityError as exc:
        raise ExperimentAlreadyRunning() from exc
    return experiment


def experiment_of(*, bot: Bot, experiment_id: Any) -> Experiment:
    """The bot's experiment `experiment_id`; ExperimentNotFound for another bot's, like a missing one."""
    try:
        return Experiment.objects.get(bot=bot, pk=int(experiment_id))
    except (Experiment.DoesNotExist, ValueError, TypeError) as exc:
        raise ExperimentNotFound() from exc


def experiment_stop(*, bot: Bot, experiment_id: Any, apply: str = "") -> Experiment:
    """Stop an experiment; `apply="b"` makes variant b the bot's own settings, "a" (or "") keeps the
    bot as it was. Stopping a stopped experiment changes nothing."""
    if apply not in ("", "a", "b"):
        raise ExperimentInvalid({"apply": [_("Применить можно только вариант А или Б.")]})
    with transaction.atomic():
        experiment = experiment_of(bot=bot, experiment_id=experiment_id)
        experiment = Experiment.objects.select_for_update().get(pk=experiment.pk)
        if not experiment.running:
            return experiment
        experiment.status, experiment.stopped_at = Experiment.Status.STOPPED, timezone.now()
        experiment.winner = apply
        experiment.save(update_fields=["status", "stopped_at", "winner"])
        voice_services.experiment_detach(bot=bot, experiment_id=experiment.pk,
                                         adopt=experiment.variant if apply == "b" else None)
    return experiment


@dataclass(frozen=True)
class Comparison:
    metric: str
    label: str
    counts: tuple[int, int]  # events in a, b
    rates: tuple[float | None, float | None]
    p_value: float | None


@dataclass(frozen=True)
class Results:
    arms: dict[str, chat_selectors.ArmCounts]
    comparisons: list[Comparison]
    verdict: str  # "too_little" | "no_difference" | "winner"
    winner: str  # "a" | "b" | ""
    message: str

    @property
    def main(self) -> Comparison:
        return self.comparisons[0]


def _compare(metric: str, a: chat_selectors.ArmCounts, b: chat_selectors.ArmCounts) -> Comparison:
    events = (getattr(a, metric), getattr(b, metric))
    nobs = (a.conversations, b.conversations)
    rates = tuple(e / n if n else None for e, n in zip(events, nobs, strict=True))
    p_value = None
    total, seen = sum(events), sum(nobs)
    if all(nobs) and 0 < total < seen:
        _stat, p = proportions_ztest(count=list(events), nobs=list(nobs), alternative="two-sided")
        p_value = None if math.isnan(p) else float(p)
    return Comparison(metric, str(Metric(metric).label), events, (rates[0], rates[1]), p_value)


def _p(value: float | None) -> str:
    """"= 0,042" or "< 0,001" in the page's number format; "= —" when the test could not run."""
    if value is None:
        return "= —"
    if value < 0.001:
        return "< " + number_format(0.001, 3)
    return "= " + number_format(value, 3)


def experiment_results(*, bot: Bot, experiment: Experiment) -> Results:
    arms = chat_selectors.variant_counts(bot=bot, experiment_id=experiment.pk)
    a, b = arms["a"], arms["b"]
    order = [experiment.metric, *(m for m in Metric.values if m != experiment.metric)]
    comparisons = [_compare(metric, a, b) for metric in order]
    main = comparisons[0]
    events = sum(main.counts)
    non_events = a.conversations + b.conversations - events
    if min(a.conversations, b.conversations) < MIN_PER_ARM or min(events, non_events) < MIN_EVENTS:
        message = _("Данных пока мало: нужно не меньше %(n)d разговоров в каждом варианте и %(e)d событий "
                    "(сейчас А: %(a)d, Б: %(b)d, событий: %(events)d).") % {
            "n": MIN_PER_ARM, "e": MIN_EVENTS, "a": a.conversations, "b": b.conversations, "events": events}
        return Results(arms, comparisons, "too_little", "", message)
    if main.p_value is None or main.p_value >= ALPHA:
        message = _("Разницы не видно (p %(p)s): варианты ведут себя одинаково.") % {"p": _p(main.p_value)}
        return Results(arms, comparisons, "no_difference", "", message)
    rate_a, rate_b = main.rates
    assert rate_a is not None and rate_b is not None
    b_better = (rate_b > rate_a) == HIGHER_IS_BETTER[main.metric]
    winner = "b" if b_better else "a"
    message = _("Вариант %(w)s лучше по показателю «%(metric)s»: %(ra).0f %% против %(rb).0f %% (p %(p)s).") % {
        "w": _("Б") if winner == "b" else _("А"), "metric": main.label,
        "ra": 100 * (rate_b if b_better else rate_a), "rb": 100 * (rate_a if b_better else rate_b),
        "p": _p(main.p_value)}
    return Results(arms, comparisons, "winner", winner, message)


def experiments_of(*, bot: Bot) -> list[Experiment]:
    return list(Experiment.objects.filter(bot=bot))
