"""The command-line contract that benchmarks and checks rely on: search, evaluate, reembed.

Cross-cutting: three commands (search, evaluate, reembed), not knowledge/search.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.drafts import EntryDraft
from knowledge.indexing import embed_pending
from knowledge.models import Entry
from knowledge.services import entry_upsert, source_get_or_create

pytestmark = pytest.mark.django_db

PAGES = {
    "/delivery/": ("Доставка", "Доставка по Москве стоит 390 рублей, от 5000 рублей бесплатно."),
    "/returns/": ("Возврат", "Вернуть товар можно в течение 14 дней с чеком и в упаковке."),
    "/payment/": ("Оплата", "Оплатить заказ можно картой, через СБП или наличными курьеру."),
}


@pytest.fixture
def shop(bot):
    source = source_get_or_create(bot=bot, kind="manual", title="тест")
    for url, (title, text) in PAGES.items():
        entry_upsert(bot=bot, source=source, draft=EntryDraft(key=url, title=title, text=text, url=url))
    embed_pending(bot_id=bot.pk)
    return bot


def run(*args: str, stdin: str | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    out = io.StringIO()
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command(*args, stdout=out)
    return out.getvalue()


def test_search_prints_the_ranked_results_and_the_verdict(shop) -> None:
    text = run("search", shop.slug, "сколько стоит доставка по Москве", "-k", "2")
    lines = text.splitlines()
    assert "есть ответ" in lines[0] or "нет подходящего ответа" in lines[0]
    assert lines[1].startswith("1. ") and "/delivery/" in lines[1]
    assert "vector=" in lines[2] and "lexical=" in lines[2]


def test_search_json_is_one_object_with_the_contract_keys(shop) -> None:
    data = json.loads(run("search", shop.slug, "как вернуть товар", "--json", "-k", "3"))
    assert set(data) == {"question", "answerable", "results"}
    assert data["question"] == "как вернуть товар"
    assert isinstance(data["answerable"], bool)
    assert 1 <= len(data["results"]) <= 3
    first = data["results"][0]
    assert {"url", "title", "score", "kind", "components"} <= set(first)
    assert first["url"] == "/returns/"
    assert data["answerable"] == (first["score"] >= shop.match_threshold)
    assert {"vector", "lexical", "trigram", "fix_bonus"} <= set(first["components"])


def test_search_stdin_json_answers_every_line_with_one_json_line(shop, monkeypatch) -> None:
    text = run(
        "search", shop.slug, "--stdin", "--json", stdin="как вернуть товар\n\nможно оплатить через сбп\n",
        monkeypatch=monkeypatch,
    )
    lines = text.splitlines()
    assert len(lines) == 2
    answers = [json.loads(line) for line in lines]
    assert [a["question"] for a in answers] == ["как вернуть товар", "можно оплатить через сбп"]
    assert answers[1]["results"][0]["url"] == "/payment/"


def test_search_refuses_an_unknown_bot_and_a_missing_question(shop) -> None:
    with pytest.raises(CommandError, match="не найден"):
        run("search", "no-such-bot", "вопрос")
    with pytest.raises(CommandError):
        run("search", shop.slug)


def test_evaluate_prints_every_metric(shop, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"question": "сколько стоит доставка", "expected_url": "/delivery/", "answerable": True},
        {"question": "как вернуть товар", "expected_urls": ["/returns/", "/faq/"], "answerable": True},
        {"question": "Подскажи рецепт борща", "answerable": False},
    ]
    cases.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), encoding="utf-8")
    text = run("evaluate", shop.slug, str(cases))
    for label in ("hit@1", "hit@3", "MRR", "answered-right", "refusal", "p50/p95"):
        assert label in text
    report = json.loads(run("evaluate", shop.slug, str(cases), "--json"))
    assert report["answerable"] == 2 and report["unanswerable"] == 1
    assert report["hit3"] == 1.0
    assert 0.0 <= report["refusal"] <= 1.0 and report["p95_ms"] >= report["p50_ms"] > 0


def test_evaluate_refuses_a_broken_case_file(shop, tmp_path: Path) -> None:
    cases = tmp_path / "bad.jsonl"
    cases.write_text('{"question": "q", "answerable": true}\n', encoding="utf-8")
    with pytest.raises(CommandError):
        run("evaluate", shop.slug, str(cases))


def test_reembed_moves_every_entry_to_the_other_model_and_search_follows(shop, settings) -> None:
    other = "use-m3" if settings.EMBEDDING_MODEL == "e5-small" else "e5-small"
    text = run("reembed", shop.slug, "--model", other)
    assert "Готово: 3" in text
    assert set(Entry.objects.filter(bot=shop).values_list("embedding_model", flat=True)) == {other}
    settings.EMBEDDING_MODEL = other
    data = json.loads(run("search", shop.slug, "как вернуть товар", "--json"))
    assert data["results"][0]["url"] == "/returns/"
    assert data["results"][0]["components"]["vector"] > 0


def test_reembed_all_redoes_vectors_of_the_same_model(shop) -> None:
    text = run("reembed", shop.slug, "--all")
    assert "Готово: 3" in text
    assert not Entry.objects.filter(bot=shop, embedding__isnull=True).exists()
