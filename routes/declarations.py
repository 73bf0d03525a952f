"""Routes are declared, and declarations are checked (docs/architecture.md, "Routes with a judge").

A route names its steps, each with output filters, an optional quality check (a metric from the
catalogue + a threshold), a repair budget (count and seconds), prompt variants and LLM classes; and
the route's approval point (with an optional auto-pass rule) and handoff point.

What must stay true (`route_problems` enforces it, at start-up through a system check and again
at the start of every run):
- no quality check on a fast route: a person is waiting on screen, and the answer's time is the
  acceptance criterion there;
- no judge bound to a safety metric (personal-data leak, approval bypass): those are deterministic
  checks in code (filters.py, the approval point), never a model's opinion;
- a budget never above the installation's maximum (ROUTES_MAX_REPAIRS, ROUTES_MAX_STEP_SECONDS):
  a declaration may only lower it;
- a check runs only where declared: there is no "check everything" switch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

ModelClass = Literal["fast", "strong"]


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    definition: str  # what the judge is shown, word for word
    safety: bool = False  # computed by deterministic code only; no judge may be bound to it


# The catalogue of quality metrics. Only metrics computable on one result are here: averages over
# a set of results are not defined on a single case.
METRICS: Final[dict[str, Metric]] = {
    metric.name: metric
    for metric in (
        Metric(
            "answers_review", "отвечает ли текст на сам отзыв",
            "Ответ магазина отвечает на сам отзыв покупателя: на то, что покупатель написал (похвала, жалоба, "
            "вопрос, конкретный товар или случай), а не общими словами мимо отзыва; тон вежливый и уместный "
            "оценке.",
        ),
        Metric(
            "answers_question", "отвечает ли текст на исходный вопрос",
            "Текст отвечает на исходный вопрос по существу, а не на другой вопрос.",
        ),
        Metric("pii_leak", "утечка персональных данных", "Детерминированная проверка фильтром вывода.", safety=True),
        Metric("approval_bypass", "обход точки подтверждения", "Детерминированная проверка платформы.", safety=True),
    )
}

# The deterministic output filters a step may declare (filters.py implements each).
FILTERS: Final = ("personal_data", "facts", "links", "banned_words")


@dataclass(frozen=True)
class QualityCheck:
    metric: str
    threshold: float


@dataclass(frozen=True)
class Budget:
    repairs: int  # content repairs and approach changes together, per step
    seconds: float  # wall time of the step, every call and repair included


@dataclass(frozen=True)
class Step:
    name: str
    filters: tuple[str, ...] = ()
    check: QualityCheck | None = None
    budget: Budget = Budget(repairs=0, seconds=30.0)
    variants: tuple[str, ...] = ("default",)  # prompt variants, in the order an approach change takes them
    classes: tuple[ModelClass, ...] = ("fast",)  # LLM classes, the same order; the last one stays
    # Content repairs with the same variant and class before an approach change. 0: the first
    # repair already changes approach (the next variant and class, with the judge's critique).
    same_approach_repairs: int = 1

    def approach(self, number: int) -> tuple[str, ModelClass]:
        """The prompt variant and LLM class of approach `number` (0 = the first)."""
        return self.variants[min(number, len(self.variants) - 1)], self.classes[min(number, len(self.classes) - 1)]


@dataclass(frozen=True)
class Approval:
    """A person downstream. `auto_rule` names the owner's rule (routes/approval.py) that may let a
    checked result through without them; an unchecked one never."""

    name: str
    auto_rule: str | None = None


@dataclass(frozen=True)
class Route:
    name: str
    title: str
    fast: bool  # a person waits on screen for the result
    steps: tuple[Step, ...]
    handoff: str  # where a failed step goes: a person's queue, never the customer's system
    approval: Approval | None = None
    writes_out: bool = False  # publishes into the customer's system (webhook) when done


@dataclass(frozen=True)
class Problem:
    code: str
    message: str


class RouteRejected(Exception):
    def __init__(self, route: str, problems: list[Problem]) -> None:
        self.route = route
        self.problems = problems
        super().__init__(f"route {route}: " + "; ".join(f"{p.code}: {p.message}" for p in problems))


def route_problems(route: Route) -> list[Problem]:
    """Everything wrong with a declaration, each with a code and a message a person understands."""
    found: list[Problem] = []
    max_repairs, max_seconds = settings.ROUTES_MAX_REPAIRS, settings.ROUTES_MAX_STEP_SECONDS
    for step in route.steps:
        where = f"«{route.name}.{step.name}»"
        found += [
            Problem("unknown_filter", str(_("Шаг %(s)s: неизвестный фильтр вывода «%(f)s».") % {"s": where, "f": name}))
            for name in step.filters if name not in FILTERS
        ]
        if step.check is not None:
            found += _check_problems(route, step, where)
        if step.budget.repairs > max_repairs or step.budget.repairs < 0:
            found.append(Problem("budget_above_maximum", str(_(
                "Шаг %(s)s: бюджет ремонтов %(n)s больше максимума установки (%(m)s)."
            ) % {"s": where, "n": step.budget.repairs, "m": max_repairs})))
        if step.budget.seconds > max_seconds or step.budget.seconds <= 0:
            found.append(Problem("budget_above_maximum", str(_(
                "Шаг %(s)s: время шага %(n)s с больше максимума установки (%(m)s с)."
            ) % {"s": where, "n": step.budget.seconds, "m": max_seconds})))
        if not step.variants or not step.classes:
            found.append(Problem("no_approach", str(_("Шаг %(s)s: нужен хотя бы один вариант задания и класс LLM.")
                                                    % {"s": where})))
    if route.approval and route.approval.auto_rule and not any(step.check for step in route.steps):
        found.append(Problem("auto_pass_unchecked", str(_(
            "Маршрут «%(r)s»: правило автопропуска без проверки качества пропускало бы непроверенные результаты."
        ) % {"r": route.name})))
    return found


def _check_problems(route: Route, step: Step, where: str) -> list[Problem]:
    check = step.check
    assert check is not None
    metric = METRICS.get(check.metric)
    found: list[Problem] = []
    if route.fast:
        found.append(Problem("check_on_fast_route", str(_(
            "Шаг %(s)s: проверка качества в быстром маршруте запрещена — там человек ждёт ответа на экране."
        ) % {"s": where})))
    if metric is None:
        found.append(Problem("unknown_metric", str(_("Шаг %(s)s: метрики «%(m)s» нет в справочнике.")
                                                   % {"s": where, "m": check.metric})))
    elif metric.safety:
        found.append(Problem("judge_on_safety_metric", str(_(
            "Шаг %(s)s: метрику безопасности «%(m)s» считает детерминированная проверка, не модель-оценщик."
        ) % {"s": where, "m": metric.title})))
    if not 0 < check.threshold <= 1:
        found.append(Problem("bad_threshold", str(_("Шаг %(s)s: порог должен быть в (0, 1].") % {"s": where})))
    return found


def route_validate(route: Route) -> Route:
    """The run-time check: a route with problems does not run at all."""
    problems = route_problems(route)
    if problems:
        raise RouteRejected(route.name, problems)
    return route


# --- the declared routes -----------------------------------------------------------------------------

# The chat answer (answers/pipeline.py): a person waits, so no judge; form repair and the
# truth rules are its checks, an operator is its handoff point.
CHAT_ANSWER: Final = Route(
    name="chat", title=gettext_noop("Ответ в чате"), fast=True, handoff="operator",
    steps=(Step("answer", filters=("facts", "links"), budget=Budget(repairs=0, seconds=8.0)),),
)

REVIEW_REPLY: Final = Route(
    name="review_reply", title=gettext_noop("Ответ на отзыв покупателя"), fast=False, handoff="review_handoff",
    approval=Approval("review_approval", auto_rule="owner_rule"), writes_out=True,
    steps=(
        Step(
            "draft", filters=("personal_data", "facts", "links", "banned_words"),
            check=QualityCheck(metric="answers_review", threshold=0.7),
            budget=Budget(repairs=2, seconds=90.0), variants=("warm", "specific"), classes=("fast", "strong"),
            same_approach_repairs=0,
        ),
    ),
)

ROUTES: Final[dict[str, Route]] = {route.name: route for route in (CHAT_ANSWER, REVIEW_REPLY)}
