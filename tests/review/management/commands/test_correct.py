"""`manage.py correct` runs correction memory for scripts; `search --json` shows entry ids and flags."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.review.conftest import DELIVERY_QUESTION

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_correct_flags_what_the_bot_would_answer_from(shop, knowledge):
    printed = json.loads(run("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "Доставка 350 ₽.",
                             "--json"))
    delivery = knowledge["delivery"]
    assert printed["culprits"] == [{"entry_id": delivery.pk, "url": delivery.url}]
    results = json.loads(run("search", shop.slug, DELIVERY_QUESTION, "--json"))["results"]
    assert results[0]["entry_id"] == printed["entry_id"] and results[0]["kind"] == "correction"
    flagged = next(r for r in results if r["entry_id"] == delivery.pk)
    assert flagged["review_needed"] is True and results[0]["review_needed"] is False


def test_correct_refuses_bad_input_and_unknown_bots(shop, knowledge):
    with pytest.raises(CommandError, match="пустой"):
        run("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "   ")
    with pytest.raises(CommandError, match="слишком длинный"):
        run("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "x" * 100_000)
    with pytest.raises(CommandError):
        run("correct", "no-such-bot", "--question", "q", "--answer", "a")
    assert not knowledge["delivery"].__class__.objects.filter(kind="correction").exists()


def test_correct_reports_its_reach_among_recent_questions(shop, knowledge, ask):
    ask(shop, "Какая цена доставки по Москве?", visitor="v1")
    ask(shop, "Какая цена доставки по Москве?", visitor="v2")
    ask(shop, "Сколько стоит доставка в Казань?", visitor="v3")
    printed = json.loads(run("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "Доставка 350 ₽.",
                             "--wording", "Доставка внутри МКАД платная?", "--json"))
    asked = {row["question"]: row for row in printed["would_answer"]}
    assert set(asked) == {"Какая цена доставки по Москве?"} and asked["Какая цена доставки по Москве?"]["times"] == 2
    assert [row["question"] for row in printed["changes"]] == ["Какая цена доставки по Москве?"]
    assert printed["changes"][0]["answer_url"] == knowledge["delivery"].url
    left = {row["question"]: row for row in printed["not_taken"]}
    assert left["Сколько стоит доставка в Казань?"]["other_words"] == ["Казань", "Москве"]
    from knowledge.models import Wording

    assert list(Wording.objects.filter(entry_id=printed["entry_id"]).values_list("text", flat=True)) == [
        DELIVERY_QUESTION, "Доставка внутри МКАД платная?"]


def test_correct_says_in_words_which_close_question_it_leaves(shop, knowledge, ask):
    ask(shop, "Сколько стоит доставка в Казань?", visitor="v3")

    printed = run("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "Доставка 350 ₽.")

    assert "не отвечает на похожий: «Сколько стоит доставка в Казань?» (Казань, Москве)" in printed
