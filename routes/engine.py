"""One step of an async route with bounded self-correction (docs/architecture.md, "Routes with a
judge"), route-independent.

`step_run` is the loop, every decision in one place:
1. ask the model (the step's current prompt variant and LLM class; a form repair inside the call);
2. output filters, deterministic, before any judge: a block ends the step (handoff, no repair);
3. no quality check declared → done (a check runs only where declared);
4. the judge: no answer → the check is skipped and journaled with its reason (what that means is
   the route's destination rule below, never a default score);
5. score ≥ threshold → done; below → content repair with the critique; the repair after
   `same_approach_repairs` repairs changes approach (next prompt variant, next LLM class);
6. the budget (repairs and seconds) is a hard limit: when spent, the step ends with its last draft
   unapproved.

`destination` maps the step's outcome to where the run goes: the approval point (manual when the
result was not checked or did not pass), or the handoff point. What must stay true:
- an unchecked result never counts as passed; with no person downstream it goes to the handoff
  point and nothing is written to the customer's system;
- every repair is its own journal row with the verdict before and after it;
- every model call (step, judge, repair) is its own usage line: the calls go through the provider,
  which bills each one (llm/journal.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import transaction

from llm import journal
from llm.base import LLMRequest, ModelClass, Provider
from llm.judge import Verdict, judge_call, judge_request
from llm.models import RunEvent
from llm.structured import complete_with_repair, schema_validator
from routes.declarations import METRICS, Route, Step
from routes.filters import Block, FilterInput, filters_run

Status = Literal["passed", "unchecked", "budget_spent", "blocked", "failed", "checking"]


@dataclass(frozen=True)
class Attempt:
    variant: str
    model_class: ModelClass
    critique: str | None  # the judge's critique of the previous draft (content repair), or None
    purpose: str
    deadline: float  # time.monotonic() by which the step's budget is spent


@dataclass(frozen=True)
class StepTask:
    """What a route gives the loop for one step: how to ask, how to read, what filters see."""

    route: Route
    step: Step
    run_id: int
    provider: Provider
    language: str
    build: Callable[[Attempt], LLMRequest]
    read: Callable[[dict[str, Any]], str]  # the result text out of a valid reply
    filter_input: Callable[[str], FilterInput]
    subject: str  # what the judge sees as the input the metric refers to (the review)


@dataclass
class StepOutcome:
    status: Status
    text: str = ""
    verdict: Verdict | None = None
    blocks: list[Block] = field(default_factory=list)
    repairs: int = 0
    reason: str = ""  # a code: the judge's error, the model's error, "budget_repairs", "budget_time"


@dataclass(frozen=True)
class Destination:
    kind: Literal["approval", "handoff", "done"]
    manual: bool = False
    reason: str = ""


def _journal(task: StepTask, kind: str, *, ok: bool, purpose: str, **detail: Any) -> None:
    journal.run_event_record(
        bot_id=task.provider.bot_id, kind=kind, ok=ok, route=task.route.name, purpose=purpose,
        run_id=task.run_id, detail={"step": task.step.name, **detail},
    )


def step_run(task: StepTask) -> StepOutcome:
    step = task.step
    deadline = time.monotonic() + step.budget.seconds
    approach, repairs = 0, 0
    previous: StepOutcome | None = None  # the last judged draft, when a repair is under way
    attempt = Attempt(*step.approach(0), critique=None, purpose=step.name, deadline=deadline)
    while True:
        outcome = _one_pass(task, attempt, previous)
        outcome.repairs = repairs
        if outcome.status == "failed" and previous is not None:  # the repair's call failed: keep the last draft
            previous.repairs = repairs
            return _spent(task, previous, outcome.reason)
        if outcome.status != "budget_spent":  # passed, blocked, failed, unchecked: the step is over
            return outcome
        # Below the threshold: repair within the budget, or stop with this draft.
        if repairs >= step.budget.repairs:
            return _spent(task, outcome, "budget_repairs")
        if time.monotonic() >= deadline:
            return _spent(task, outcome, "budget_time")
        repairs += 1
        change = repairs > step.same_approach_repairs
        approach += int(change)
        variant, model_class = step.approach(approach)
        assert outcome.verdict is not None
        attempt = Attempt(
            variant, model_class, critique=outcome.verdict.critique, deadline=deadline,
            purpose=f"{step.name}.{'approach' if change else 'repair'}",
        )
        previous = outcome


def _one_pass(task: StepTask, attempt: Attempt, previous: StepOutcome | None) -> StepOutcome:
    """One draft and its checks. The rows of one model call (its usage line, journal row, and what
    followed from it: filter blocks, the verdict, the repair row) are committed together: durable
    once the call is over, at one disk flush per call rather than one per row."""
    with transaction.atomic():
        outcome = _draft(task, attempt)
        if outcome.status != "checking" and previous is not None:
            _journal_repair(task, attempt, previous, outcome)
    if outcome.status != "checking":
        return outcome
    with transaction.atomic():
        outcome = _judge(task, attempt, outcome.text)
        if previous is not None:
            _journal_repair(task, attempt, previous, outcome)
    return outcome


def _draft(task: StepTask, attempt: Attempt) -> StepOutcome:
    request = task.build(attempt)
    result = complete_with_repair(task.provider, request, schema_validator(request.schema))
    if not result.ok or result.data is None:
        return StepOutcome("failed", reason=result.error or "invalid_form")
    text = task.read(result.data)
    blocks = filters_run(task.step.filters, task.filter_input(text))
    for block in blocks:
        _journal(task, RunEvent.Kind.FILTER_BLOCK, ok=False, purpose=f"{attempt.purpose}.filter",
                 filter=block.filter, codes=block.codes, facts=block.keys)
    if blocks:
        return StepOutcome("blocked", text=text, blocks=blocks, reason=",".join(b.filter for b in blocks))
    if task.step.check is None:
        return StepOutcome("passed", text=text)
    return StepOutcome("checking", text=text)


def _judge(task: StepTask, attempt: Attempt, text: str) -> StepOutcome:
    check = task.step.check
    assert check is not None
    metric = METRICS[check.metric]
    judged = judge_call(
        task.provider,
        judge_request(
            metric=metric.title, definition=metric.definition, subject=task.subject, result_text=text,
            language=task.language, route=task.route.name, purpose=f"{attempt.purpose}.judge", run_id=task.run_id,
            deadline=attempt.deadline,
        ),
        metric=check.metric, threshold=check.threshold, step=task.step.name,
    )
    if judged.verdict is None:
        reason = judged.unavailable or "unavailable"
        _journal(task, RunEvent.Kind.CHECK_SKIPPED, ok=False, purpose=f"{attempt.purpose}.judge",
                 metric=check.metric, reason=f"judge_unavailable:{reason}",
                 reason_text="проверка не выполнялась: модель-оценщик недоступна")
        return StepOutcome("unchecked", text=text, reason=f"judge_unavailable:{reason}")
    if judged.verdict.passes(check.threshold):
        return StepOutcome("passed", text=text, verdict=judged.verdict)
    return StepOutcome("budget_spent", text=text, verdict=judged.verdict, reason="below_threshold")


def _verdict_of(outcome: StepOutcome) -> float | str | None:
    if outcome.verdict is not None:
        return outcome.verdict.score
    return {"blocked": "blocked", "failed": "failed", "unchecked": "not_checked"}.get(outcome.status)


def _journal_repair(task: StepTask, attempt: Attempt, before: StepOutcome, after: StepOutcome) -> None:
    """One row per repair, with the verdict before and after it: "it repaired itself" is checkable."""
    approach_changed = attempt.purpose.endswith("approach")
    kind = RunEvent.Kind.APPROACH_CHANGE if approach_changed else RunEvent.Kind.CONTENT_REPAIR
    threshold = task.step.check.threshold if task.step.check else None
    _journal(
        task, kind, ok=after.status == "passed", purpose=attempt.purpose,
        verdict_before=_verdict_of(before), verdict_after=_verdict_of(after), threshold=threshold,
        variant=attempt.variant, model_class=attempt.model_class,
    )


def _spent(task: StepTask, last: StepOutcome, reason: str) -> StepOutcome:
    _journal(task, RunEvent.Kind.BUDGET_SPENT, ok=False, purpose=task.step.name, reason=reason,
             repairs=last.repairs, verdict_before=_verdict_of(last))
    return StepOutcome("budget_spent", text=last.text, verdict=last.verdict, repairs=last.repairs, reason=reason)


def destination(route: Route, outcome: StepOutcome) -> Destination:
    """Where the run goes after its step (docs/architecture.md, "Routes with a judge")."""
    if outcome.status in ("blocked", "failed"):
        return Destination("handoff", reason=f"{outcome.status}:{outcome.reason}")
    if outcome.status == "passed":
        return Destination("approval") if route.approval else Destination("done")
    # Unchecked or below the threshold after the whole budget: a person decides, or nobody writes.
    if route.approval is None:
        return Destination("handoff", reason=outcome.reason)
    return Destination("approval", manual=True, reason=outcome.reason)
