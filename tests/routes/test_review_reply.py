"""Bounded self-correction on the review-reply route, end to end: the real anthropic SDK against the
fake Messages API (which also plays the judge, or is down for it), real PostgreSQL, real search.

The seed's two stand records as tests: ten runs with the judge off (nine skipped checks, nine
manual approvals, nothing published, the tenth at the handoff point), and a run the judge rejects
first and accepts after an approach change to the strong LLM class."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from llm.models import RunEvent, Usage
from routes.models import ReviewReplySettings, RouteRun
from routes.review_reply import review_reply_run
from tests.fakes.messages_api import tool_use, verdict

pytestmark = pytest.mark.django_db

GOOD = "Здравствуйте! Спасибо за отзыв и за то, что выбрали нас. Рады, что покупка понравилась."
OFF_TOPIC = "Спасибо за обращение. Мы ценим каждого клиента."


def _auto_pass_on(bot, **rule):
    ReviewReplySettings.objects.update_or_create(bot=bot, defaults={"auto_pass": True, **rule})


def _journal(bot, run=None):
    out = StringIO()
    args = ["journal", bot.slug, "--json"] + (["--run", str(run)] if run else [])
    call_command(*args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_ten_runs_with_the_judge_down_wait_for_a_person_and_publish_nothing(
    shop, knowledge, reviews, fake_llm, receiver
):
    # The owner's rule would let every one of these through (rating ≥ 4, no facts): the trap of
    # the seed's first trial. The judge is down for the whole trial.
    _auto_pass_on(shop, auto_pass_min_rating=4, auto_pass_min_score=0.5)
    shop.webhook_url = receiver.url
    shop.save(update_fields=["webhook_url"])
    fake_llm.tool_down("verdict")
    fake_llm.script_tool("review_reply", *[tool_use({"reply": GOOD}) for _ in range(9)])
    # The tenth draft repeats the customer's phone: the personal-data filter stops it before any judge.
    fake_llm.script_tool("review_reply", tool_use({"reply": "Сергей, перезвоним на +7 916 555-12-34 сегодня."}))

    out = StringIO()
    call_command("runroute", "review_reply", shop.slug, stdout=out)

    rows = _journal(shop)
    skipped = [row for row in rows if row["kind"] == "check_skipped"]
    assert len(skipped) == 9
    assert all(row["reason"].startswith("judge_unavailable:") and row["verdict_after"] == "not_checked"
               for row in skipped)
    assert RunEvent.objects.filter(bot=shop, kind="check_skipped")[0].get_kind_display() == "проверка не выполнялась"
    assert not [row for row in rows if row["kind"] == "judge"]  # 0 verdicts
    runs = list(RouteRun.objects.filter(bot=shop).order_by("id"))
    waiting = [run for run in runs if run.status == RouteRun.Status.WAITING]
    assert len(waiting) == 9 and all(run.manual and not run.checked and not run.auto_passed for run in waiting)
    assert RouteRun.objects.filter(bot=shop, status=RouteRun.Status.PUBLISHED).count() == 0
    tenth = runs[-1]
    assert tenth.status == RouteRun.Status.HANDOFF and tenth.handoff_reason.startswith("blocked:personal_data")
    tenth_rows = [row for row in rows if row["run"] == tenth.pk]
    assert [row["kind"] for row in tenth_rows] == ["llm_call", "filter_block", "handoff"]
    assert receiver.requests == []
    assert "Итого" in out.getvalue()


def test_a_rejected_draft_is_repaired_with_the_strong_class_and_both_verdicts_are_journaled(
    shop, knowledge, reviews, fake_llm
):
    review = reviews[1]  # the crumpled box
    fake_llm.script_tool("review_reply", tool_use({"reply": OFF_TOPIC}), tool_use({"reply": GOOD}))
    fake_llm.script_tool(
        "verdict", verdict(0.3, "Ответ не касается помятой коробки, о которой пишет покупатель."), verdict(0.92)
    )

    run = review_reply_run(review=review)

    assert run.status == RouteRun.Status.WAITING and run.checked and run.score == pytest.approx(0.92)
    drafts = fake_llm.requests_for("review_reply")
    assert [request.body["model"] for request in drafts] == ["claude-haiku-4-5", "claude-sonnet-4-6"]
    assert "помятой коробки" in drafts[1].raw  # the critique went into the repair
    judges = fake_llm.requests_for("verdict")
    assert all("Правила" not in request.raw for request in judges)  # the judge never sees the step's instructions
    assert "Кроссовки Run" in judges[0].raw and OFF_TOPIC in judges[0].raw

    rows = _journal(shop, run.pk)
    verdicts = [row["verdict_after"] for row in rows if row["kind"] == "judge"]
    assert verdicts == [pytest.approx(0.3), pytest.approx(0.92)]
    [change] = [row for row in rows if row["kind"] == "approach_change"]
    assert change["verdict_before"] == pytest.approx(0.3) and change["verdict_after"] == pytest.approx(0.92)
    lines = list(Usage.objects.filter(run_id=run.pk).order_by("id").values_list("purpose", "model"))
    assert lines == [
        ("draft", "claude-haiku-4-5"), ("draft.judge", "claude-haiku-4-5"),
        ("draft.approach", "claude-sonnet-4-6"), ("draft.approach.judge", "claude-haiku-4-5"),
    ]
    assert {purpose.split(".")[-1] for purpose, _model in lines} == {"draft", "judge", "approach"}


def test_the_repair_budget_is_a_hard_limit_and_the_run_turns_manual(shop, knowledge, reviews, fake_llm):
    _auto_pass_on(shop, auto_pass_min_score=0.1)
    fake_llm.script_tool("review_reply", *[tool_use({"reply": OFF_TOPIC}) for _ in range(3)])
    fake_llm.script_tool("verdict", verdict(0.2, "мимо"), verdict(0.3, "мимо"), verdict(0.4, "мимо"))

    run = review_reply_run(review=reviews[0])

    assert run.status == RouteRun.Status.WAITING and run.manual and not run.auto_passed
    assert run.repairs == 2 and run.manual_reason == "budget_repairs"
    assert len(fake_llm.requests_for("review_reply")) == 3  # the budget of 2 repairs, not one call more
    kinds = [row["kind"] for row in _journal(shop, run.pk)]
    assert kinds.count("approach_change") == 2 and "budget_spent" in kinds


def test_a_checked_reply_within_the_owners_rule_is_auto_approved(shop, knowledge, reviews, fake_llm):
    _auto_pass_on(shop, auto_pass_min_rating=5, auto_pass_min_score=0.9)
    fake_llm.script_tool("review_reply", tool_use({"reply": GOOD}), tool_use({"reply": GOOD}))
    fake_llm.script_tool("verdict", verdict(0.95), verdict(0.95))

    five, four = review_reply_run(review=reviews[0]), review_reply_run(review=reviews[1])

    assert five.status == RouteRun.Status.APPROVED and five.auto_passed
    assert four.status == RouteRun.Status.WAITING and not four.auto_passed  # rating 4 < 5


def test_an_invented_price_is_blocked_before_the_judge(shop, knowledge, reviews, fake_llm):
    fake_llm.script_tool("review_reply", tool_use({"reply": "Дарим вам скидку 700 ₽ на следующий заказ!"}))

    run = review_reply_run(review=reviews[0])

    assert run.status == RouteRun.Status.HANDOFF and run.handoff_reason == "blocked:facts"
    assert fake_llm.requests_for("verdict") == []
    block = RunEvent.objects.get(run_id=run.pk, kind="filter_block")
    assert block.detail["facts"] == ["q:700:rub"] and "Дарим" not in json.dumps(block.detail, ensure_ascii=False)


def test_a_fact_from_the_knowledge_passes_the_filters(shop, knowledge, reviews, fake_llm):
    sourced = "Спасибо! Кстати, при заказе от 5000 ₽ доставка бесплатная."
    fake_llm.script_tool("review_reply", tool_use({"reply": sourced}))
    fake_llm.script_tool("verdict", verdict(0.8))

    run = review_reply_run(review=reviews[2])

    assert run.status == RouteRun.Status.WAITING and run.checked and run.has_facts


def test_banned_words_block_the_draft(shop, knowledge, reviews, fake_llm):
    ReviewReplySettings.objects.update_or_create(bot=shop, defaults={"banned_words": "гарантируем\nконкуренты"})
    fake_llm.script_tool("review_reply", tool_use({"reply": "Мы гарантируем, что такого больше не будет."}))

    run = review_reply_run(review=reviews[1])

    assert run.status == RouteRun.Status.HANDOFF and run.handoff_reason == "blocked:banned_words"


def test_with_no_person_downstream_a_judge_that_is_down_fails_the_step_to_the_handoff_point(
    shop, knowledge, reviews, fake_llm, receiver, monkeypatch
):
    from dataclasses import replace

    from routes import review_reply

    monkeypatch.setattr(review_reply, "REVIEW_REPLY", replace(review_reply.REVIEW_REPLY, approval=None))
    ReviewReplySettings.objects.update_or_create(bot=shop, defaults={"publish_url": receiver.url, "auto_pass": True})
    fake_llm.tool_down("verdict")
    fake_llm.script_tool("review_reply", tool_use({"reply": GOOD}))

    run = review_reply_run(review=reviews[0])

    assert run.status == RouteRun.Status.HANDOFF and run.handoff_reason == "judge_unavailable:overloaded"
    kinds = [row["kind"] for row in _journal(shop, run.pk)]
    assert kinds == ["llm_call", "llm_call", "check_skipped", "handoff"]
    assert RunEvent.objects.get(run_id=run.pk, kind="handoff").detail["written_out"] is False
    assert receiver.requests == []
