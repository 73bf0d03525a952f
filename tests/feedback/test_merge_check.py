"""A configured model confirms or declines the Gaps merge suggestions at refresh time: the real SDK
against the local fake Messages API (tests/fakes), real stored questions and vectors."""

from __future__ import annotations

from typing import Any

import pytest

from feedback.gaps import gap_merge_suggestions, gaps_refresh
from feedback.merge_check import PURPOSE, TOOL, gaps_merge_check
from feedback.models import Gap
from feedback.tasks import gaps_refresh_all
from llm.models import Usage
from tests.fakes.messages_api import overloaded, tool_use

pytestmark = pytest.mark.django_db

INVOICE = ["Можно оплатить по счёту от юрлица?", "Нужен счёт на оплату для ООО"]
PARKING = ["Есть ли парковка у магазина?", "Есть ли у вас парковка для вертолёта?"]


@pytest.fixture
def suggested(shop, knowledge, ask, settings) -> list[dict[str, Any]]:
    """Four unanswered questions asked with no model (retrieval only), grouped into four rows, two
    pairs of them suggested for a merge; then the fake model is switched on."""
    provider = settings.LLM_PROVIDER
    settings.LLM_PROVIDER = "none"
    for number, question in enumerate([*INVOICE, *PARKING]):
        ask(shop, question, visitor=f"v{number}")
    gaps_refresh(bot=shop)
    settings.LLM_PROVIDER = provider
    pairs = gap_merge_suggestions(bot=shop)
    assert Gap.objects.filter(bot=shop).count() == 4
    assert sorted(sorted([p["a"].title, p["b"].title]) for p in pairs) == sorted([sorted(INVOICE), sorted(PARKING)])
    return pairs


def _is_invoice(pair: dict[str, Any]) -> bool:
    return pair["a"].title in INVOICE


def test_the_model_merges_what_it_confirms_and_keeps_apart_what_it_declines(shop, fake_llm, suggested):
    fake_llm.script_tool(TOOL, *[tool_use({"same": _is_invoice(p), "reason": "…"}) for p in suggested])
    assert gaps_merge_check(bot=shop) == 1
    rows = {g.title: sorted(g.questions.values_list("text", flat=True)) for g in Gap.objects.filter(bot=shop)}
    assert sorted(INVOICE) in rows.values() and len(rows) == 3
    parking = list(Gap.objects.filter(bot=shop, title__in=PARKING))
    assert parking[0].pk in parking[1].kept_apart and gap_merge_suggestions(bot=shop) == []
    sent = fake_llm.requests_for(TOOL)
    assert len(sent) == 2 and all(q in str(sent[0].body["messages"]) + str(sent[1].body["messages"])
                                  for q in [*INVOICE, *PARKING])
    assert Usage.objects.filter(bot=shop, purpose=PURPOSE).count() == 2  # billed like any call
    assert gaps_merge_check(bot=shop) == 0 and len(fake_llm.requests_for(TOOL)) == 2  # nothing left to ask


def test_a_model_that_is_down_merges_nothing_and_forgets_nothing(shop, fake_llm, suggested):
    fake_llm.script_tool(TOOL, overloaded(), overloaded(), overloaded())
    assert gaps_merge_check(bot=shop) == 0
    assert Gap.objects.filter(bot=shop).count() == 4 and not any(Gap.objects.values_list("kept_apart", flat=True))
    assert len(gap_merge_suggestions(bot=shop)) == 2  # still the owner's to decide
    assert len(fake_llm.requests_for(TOOL)) == 3  # one pair, its retries; the second pair was not tried


def test_an_invalid_answer_is_repaired_once_then_counts_as_none(shop, fake_llm, suggested):
    fake_llm.script_tool(TOOL, tool_use({"same": "yes"}), tool_use({"same": "yes", "reason": 1}))
    assert gaps_merge_check(bot=shop) == 0 and Gap.objects.filter(bot=shop).count() == 4


def test_without_a_model_nothing_is_asked_and_the_task_still_refreshes(shop, knowledge, ask, settings):
    settings.LLM_PROVIDER = "none"
    ask(shop, INVOICE[0])
    assert gaps_merge_check(bot=shop) == 0
    assert gaps_refresh_all() == 1 and Gap.objects.filter(bot=shop).count() == 1
