"""The knowledge commands speak the installation's language (SPRAVKA_LANGUAGE): Russian by default,
English when it is `en`; their `--json` output is the same in both (a contract, not a text).

Cross-cutting: the language of every knowledge command."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, load_command_class
from django.test import override_settings

from knowledge.drafts import EntryDraft
from knowledge.services import entry_upsert, source_get_or_create

pytestmark = pytest.mark.django_db

ENGLISH = override_settings(LANGUAGE_CODE="en")  # what SPRAVKA_LANGUAGE=en sets


@pytest.fixture
def shop(bot):
    source = source_get_or_create(bot=bot, kind="manual", title="тест")
    entry_upsert(bot=bot, source=source, draft=EntryDraft(
        key="/delivery/", title="Доставка", text="Доставка по Москве стоит 390 рублей.", url="/delivery/"))
    return bot


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_search_prints_its_verdict_and_errors_in_the_installation_language(shop):
    russian = run("search", shop.slug, "Можно ли заказать вертолёт?").splitlines()[0]
    assert russian.startswith("Можно ли заказать вертолёт? — нет подходящего ответа (порог ")
    with pytest.raises(CommandError, match="-k должно быть не меньше 1"):
        run("search", shop.slug, "доставка", "-k", "0")
    as_json = run("search", shop.slug, "доставка", "--json")
    with ENGLISH:
        english = run("search", shop.slug, "Можно ли заказать вертолёт?").splitlines()[0]
        assert english.startswith("Можно ли заказать вертолёт? — no matching answer (threshold ")
        with pytest.raises(CommandError, match="-k must be at least 1"):
            run("search", shop.slug, "доставка", "-k", "0")
        with pytest.raises(CommandError, match="Give a question or --stdin"):
            run("search", shop.slug)
        assert json.loads(run("search", shop.slug, "доставка", "--json")).keys() == json.loads(as_json).keys()
        options = load_command_class("knowledge", "search").create_parser("manage.py", "search").format_help()
        assert "how many results to show" in options and "questions from standard input" in options


def test_evaluate_and_reembed_in_english_and_in_russian(shop, tmp_path: Path):
    empty = tmp_path / "cases.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(CommandError, match="В файле нет ни одного вопроса"):
        run("evaluate", shop.slug, str(empty))
    assert "Готово: 1 записей, модель " in run("reembed", shop.slug)
    with ENGLISH:
        with pytest.raises(CommandError, match="The file has no questions"):
            run("evaluate", shop.slug, str(empty))
        with pytest.raises(CommandError, match=r"Could not read .*missing\.jsonl"):
            run("evaluate", shop.slug, str(tmp_path / "missing.jsonl"))
        done = run("reembed", shop.slug, "--all")
        assert "Done: 1 entries, model " in done and " per second" in done


def test_loadpassages_reports_its_time_in_the_installation_language(bot, tmp_path: Path):
    passages = tmp_path / "passages.jsonl"
    passages.write_text(json.dumps({"id": "p1", "title": "Оплата", "text": "Картой или через СБП.", "url": "/pay/"},
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    assert " с)" in run("loadpassages", bot.slug, str(passages), "--no-embed").splitlines()[0]
    with ENGLISH:
        printed = run("loadpassages", bot.slug, str(passages), "--no-embed").splitlines()
        assert printed[0].endswith(" s)") and "1 unchanged" in printed[0]
        assert printed[1] == "Embedding skipped (--no-embed)."
