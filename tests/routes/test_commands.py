"""The demo's sample reviews through the commands: importreviews, runroute --limit, journal --json.

Cross-cutting: three commands together (importreviews, runroute, journal) on the demo's reviews."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from demo.run import demo_reviews_import
from routes.models import CustomerReview, RouteRun
from tests.conftest import REPO
from tests.fakes.messages_api import tool_use, verdict

pytestmark = pytest.mark.django_db


def test_the_demo_reviews_run_and_their_journal_prints_as_json_lines(shop, knowledge, fake_llm):
    call_command("importreviews", shop.slug, str(REPO / "demo" / "reviews.csv"), stdout=StringIO())
    assert demo_reviews_import(shop) == 0  # the demo's own import of the same file adds nothing
    assert CustomerReview.objects.filter(bot=shop).count() == 10
    fake_llm.script_tool("review_reply", *[tool_use({"reply": "Спасибо за отзыв! Нам важно ваше мнение."})] * 3)
    fake_llm.script_tool("verdict", verdict(0.9), verdict(0.4, "не отвечает на отзыв"), verdict(0.9), verdict(0.9))
    fake_llm.script_tool("review_reply", tool_use({"reply": "Спасибо, что написали про помятую коробку."}))

    out = StringIO()
    call_command("runroute", "review_reply", shop.slug, "--limit", "3", stdout=out)
    assert out.getvalue().count("прогон") == 3 and RouteRun.objects.filter(bot=shop).count() == 3

    lines = StringIO()
    call_command("journal", shop.slug, "--json", stdout=lines)
    rows = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert rows and all(set(row) == {"run", "step", "kind", "verdict_before", "verdict_after", "reason"}
                        for row in rows)
    assert [row["verdict_after"] for row in rows if row["kind"] == "judge"] == [0.9, 0.4, 0.9, 0.9]
    one = RouteRun.objects.filter(bot=shop).order_by("id")[1].pk
    only = StringIO()
    call_command("journal", shop.slug, "--run", str(one), "--json", stdout=only)
    assert {json.loads(line)["run"] for line in only.getvalue().splitlines()} == {one}

    again = StringIO()
    fake_llm.script_tool("review_reply", tool_use({"reply": "Спасибо!"}))
    fake_llm.script_tool("verdict", verdict(0.9))
    call_command("runroute", "review_reply", shop.slug, "--limit", "1", stdout=again)
    assert "прогон" in again.getvalue()  # the next review without a run


def test_the_commands_explain_what_is_wrong(shop, other_bot):
    with pytest.raises(CommandError, match="Маршрут «chat» объявлен, но запускается не отсюда"):
        call_command("runroute", "chat", shop.slug)
    with pytest.raises(CommandError, match="Маршрут «nope» не объявлен"):
        call_command("runroute", "nope", shop.slug)
    with pytest.raises(CommandError, match="--limit"):
        call_command("runroute", "review_reply", shop.slug, "--limit", "0")
    with pytest.raises(CommandError, match="нет прогона 999"):
        call_command("journal", shop.slug, "--run", "999")
    out = StringIO()
    call_command("runroute", "review_reply", shop.slug, stdout=out)
    assert "Отзывов без ответа нет" in out.getvalue()
    call_command("journal", shop.slug, stdout=out)
    assert "Записей в журнале нет" in out.getvalue()
