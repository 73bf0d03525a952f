"""Route declarations are refused when they break the limits in docs/architecture.md ("Routes with a
judge"): by the system check at start-up and again at run time."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from routes import checks, declarations
from routes.declarations import Approval, Budget, QualityCheck, Route, RouteRejected, Step, route_problems

JUDGED = Step("draft", check=QualityCheck("answers_review", 0.7), budget=Budget(repairs=1, seconds=30))


def _codes(route: Route) -> list[str]:
    return [problem.code for problem in route_problems(route)]


def test_the_declared_routes_pass_and_the_chat_answer_is_a_fast_route_without_a_judge():
    assert {name: _codes(route) for name, route in declarations.ROUTES.items()} == {"chat": [], "review_reply": []}
    chat = declarations.ROUTES["chat"]
    assert chat.fast and all(step.check is None for step in chat.steps)


def test_a_quality_check_on_a_fast_route_is_refused():
    route = Route("quick", "Быстрый", fast=True, steps=(JUDGED,), handoff="operator")
    assert _codes(route) == ["check_on_fast_route"]
    assert "человек ждёт" in route_problems(route)[0].message


@pytest.mark.parametrize("metric", ["pii_leak", "approval_bypass"])
def test_a_judge_bound_to_a_safety_metric_is_refused(metric):
    route = Route("r", "R", fast=False, handoff="h", steps=(replace(JUDGED, check=QualityCheck(metric, 0.7)),))
    assert _codes(route) == ["judge_on_safety_metric"]


def test_a_budget_above_the_installations_maximum_is_refused(settings):
    settings.ROUTES_MAX_REPAIRS, settings.ROUTES_MAX_STEP_SECONDS = 2, 60
    too_many = replace(JUDGED, budget=Budget(repairs=3, seconds=30))
    too_long = replace(JUDGED, budget=Budget(repairs=1, seconds=61))
    assert _codes(Route("a", "A", fast=False, handoff="h", steps=(too_many,))) == ["budget_above_maximum"]
    assert _codes(Route("b", "B", fast=False, handoff="h", steps=(too_long,))) == ["budget_above_maximum"]


def test_unknown_metrics_filters_and_an_auto_pass_without_a_check_are_refused():
    step = Step("s", filters=("telepathy",), check=QualityCheck("vibes", 1.5))
    assert sorted(_codes(Route("x", "X", fast=False, handoff="h", steps=(step,)))) == [
        "bad_threshold", "unknown_filter", "unknown_metric",
    ]
    unchecked = Route("y", "Y", fast=False, handoff="h", steps=(Step("s"),), approval=Approval("a", auto_rule="r"))
    assert _codes(unchecked) == ["auto_pass_unchecked"]


def test_the_system_check_stops_the_project_on_a_bad_declaration(monkeypatch):
    bad = Route("quick", "Быстрый", fast=True, steps=(JUDGED,), handoff="operator")
    errors = checks.route_errors({"quick": bad})
    assert [error.id for error in errors] == ["routes.check_on_fast_route"] and errors[0].obj == "route:quick"
    monkeypatch.setattr(checks, "ROUTES", {**declarations.ROUTES, "quick": bad})
    with pytest.raises(SystemCheckError, match=r"routes\.check_on_fast_route"):
        call_command("check")


@pytest.mark.django_db
def test_a_bad_declaration_is_refused_at_run_time_too(settings, shop, reviews, fake_llm):
    from routes.models import RouteRun
    from routes.review_reply import review_reply_run

    settings.ROUTES_MAX_REPAIRS = 1  # the installation lowered its maximum below the route's 2
    with pytest.raises(RouteRejected) as caught:
        review_reply_run(review=reviews[0])
    assert [problem.code for problem in caught.value.problems] == ["budget_above_maximum"]
    assert RouteRun.objects.count() == 0 and fake_llm.requests == []
