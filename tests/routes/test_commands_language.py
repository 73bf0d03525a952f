"""The route commands speak the installation's language (SPRAVKA_LANGUAGE): Russian by default,
English when it is `en`; `journal --json` keeps its keys in both.

Cross-cutting: the language of the route commands (importreviews, runroute, journal)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests.fakes.messages_api import tool_use, verdict

pytestmark = pytest.mark.django_db

ENGLISH = override_settings(LANGUAGE_CODE="en")  # what SPRAVKA_LANGUAGE=en sets


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_runroute_and_journal_in_english(shop, reviews, fake_llm):
    fake_llm.script_tool("review_reply", tool_use({"reply": "Спасибо за отзыв! Нам важно ваше мнение."}))
    fake_llm.script_tool("verdict", verdict(0.9))
    with ENGLISH:
        printed = run("runroute", "review_reply", shop.slug, "--limit", "1").splitlines()
        assert printed[0].startswith(f"[1/1] review {reviews[0].pk}: run ")
        assert ", score 0.90, repairs 0" in printed[0] and printed[1].startswith("Total: ")
        rows = [json.loads(line) for line in run("journal", shop.slug, "--json").splitlines()]
        assert rows and set(rows[0]) == {"run", "step", "kind", "verdict_before", "verdict_after", "reason"}
        with pytest.raises(CommandError, match="The route “chat” is declared but is not run from here"):
            run("runroute", "chat", shop.slug)
        with pytest.raises(CommandError, match=r"The route “nope” is not declared\. Runnable: review_reply\."):
            run("runroute", "nope", shop.slug)
        with pytest.raises(CommandError, match=r"--limit must be at least 1\."):
            run("runroute", "review_reply", shop.slug, "--limit", "0")
        with pytest.raises(CommandError, match=r"The bot “demo” has no run 999999\."):
            run("journal", shop.slug, "--run", "999999")


def test_the_same_messages_stay_russian_by_default(shop, tmp_path: Path):
    assert run("journal", shop.slug) == "Записей в журнале нет.\n"
    assert run("runroute", "review_reply", shop.slug) == "Отзывов без ответа нет.\n"
    with pytest.raises(CommandError, match=r"Бота с кодом «nobody» нет\."):
        run("journal", "nobody")
    with pytest.raises(CommandError, match=r"Файла .*missing\.csv нет\."):
        run("importreviews", shop.slug, str(tmp_path / "missing.csv"))
    with ENGLISH:
        assert run("journal", shop.slug) == "The journal has no records.\n"
        assert run("runroute", "review_reply", shop.slug) == "No reviews without a reply.\n"
        with pytest.raises(CommandError, match=r"There is no bot with the code “nobody”\."):
            run("journal", "nobody")
        with pytest.raises(CommandError, match=r"There is no file .*missing\.csv\."):
            run("importreviews", shop.slug, str(tmp_path / "missing.csv"))
        bad = tmp_path / "bad.csv"
        bad.write_text("кто,что\nАнна,хорошо\n", encoding="utf-8")
        with pytest.raises(CommandError, match="The file was not imported, nothing was saved:"):
            run("importreviews", shop.slug, str(bad))
