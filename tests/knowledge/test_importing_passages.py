"""Passages from JSON Lines: bulk-loaded, versioned, validated before anything is written, and
idempotent on re-runs (the evaluation set is loaded this way)."""

from __future__ import annotations

import json
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.exceptions import RowsInvalid
from knowledge.importing import passages_load
from knowledge.models import Entry, Source
from tests.conftest import EVAL_DATA

pytestmark = pytest.mark.django_db

XQUAD = EVAL_DATA / "xquad-ru" / "passages.jsonl"  # 48 real passages, one per XQuAD article


def _jsonl(*items: object) -> bytes:
    return "\n".join(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in items).encode()


PASSAGES: list[dict[str, object]] = [
    {"id": "p1", "title": "Доставка", "text": "Доставка по Москве — 300 ₽.", "url": "https://shop.example/delivery"},
    {"id": "p2", "title": "Оплата", "text": "Картой или наличными.", "url": "https://shop.example/pay"},
    {"id": 3, "title": "Возврат", "text": "14 дней с чеком.", "url": ""},
]


def test_xquad_passages_load_once_and_a_second_run_changes_nothing(bot, capsys):
    started = time.monotonic()
    call_command("loadpassages", "demo", str(XQUAD), "--no-embed")
    first = time.monotonic() - started
    out = capsys.readouterr().out
    assert "создано 48, обновлено 0, без изменений 0, отключено 0" in out
    entries = Entry.objects.filter(bot=bot)
    assert entries.count() == 48 and entries.filter(kind="chunk", active=True).count() == 48
    sample = entries.get(key="a00p00")
    assert (sample.title, sample.url) == ("Super Bowl 50", "/xquad/a00p00/")
    assert sample.source is not None and sample.source.title == "passages.jsonl"
    assert sample.history.count() == 1  # bulk-created rows still have a first version to roll back to

    started = time.monotonic()
    call_command("loadpassages", "demo", str(XQUAD), "--no-embed")
    second = time.monotonic() - started

    assert "создано 0, обновлено 0, без изменений 48, отключено 0" in capsys.readouterr().out
    assert Entry.objects.filter(bot=bot).count() == 48
    assert sample.history.count() == 1
    print(f"loadpassages xquad-ru: first run {first:.2f} s, second run {second:.2f} s")


def test_a_changed_file_updates_changed_passages_and_switches_off_missing_ones(bot):
    passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*PASSAGES))
    Entry.objects.filter(bot=bot).update(embedding=[0.1] * 384, embedding_model="e5-small")
    changed = [{**PASSAGES[0], "text": "Доставка по Москве — 350 ₽."}, PASSAGES[1]]

    result = passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*changed))

    assert (result.created, result.updated, result.unchanged, result.deactivated) == (0, 1, 1, 1)
    delivery, payment, gone = (Entry.objects.get(bot=bot, key=key) for key in ("p1", "p2", "3"))
    assert delivery.text == "Доставка по Москве — 350 ₽." and delivery.embedding is None
    assert [version.text for version in delivery.history.order_by("history_id")] == [
        "Доставка по Москве — 300 ₽.", "Доставка по Москве — 350 ₽."
    ]
    assert payment.embedding_model == "e5-small" and payment.history.count() == 1
    assert not gone.active and gone.history.count() == 2


def test_a_switched_off_passage_comes_back_when_it_reappears(bot):
    passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*PASSAGES))
    passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*PASSAGES[:2]))

    result = passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*PASSAGES))

    assert (result.created, result.updated, result.unchanged) == (0, 1, 2)
    assert Entry.objects.filter(bot=bot, active=True).count() == 3


def test_bad_lines_are_all_reported_and_nothing_is_loaded(bot):
    data = _jsonl(
        PASSAGES[0],
        '{"id": "p2", "title": "Оплата", "text": "Картой"',
        {"id": "p3", "title": "Без текста", "url": ""},
        ["not", "an", "object"],
        {"id": "p4", "title": "Пусто", "text": "   ", "url": ""},
        {"id": "p1", "title": "Дубль", "text": "Повтор", "url": ""},
        {"id": True, "title": "Странный id", "text": "Текст", "url": ""},
        {"id": "p5", "title": 5, "text": "Текст", "url": ""},
        "",
        PASSAGES[1],
    )

    with pytest.raises(RowsInvalid) as refused:
        passages_load(bot=bot, filename="kb.jsonl", data=data)

    assert refused.value.problems == [
        "строка 2: неверный JSON (символ 49)",
        "строка 3: нет поля «text»",
        'строка 4: ожидается объект {"id", "title", "text", "url"}',
        "строка 5: пустое поле «text»",
        "строка 6: id «p1» уже был в строке 1",
        "строка 7: поле «id» должно быть строкой или числом",
        "строка 8: поле «title» должно быть строкой",
    ]
    assert refused.value.message.startswith("Файл «kb.jsonl» не импортирован, ничего не сохранено. Исправьте:\n")
    assert not Entry.objects.filter(bot=bot).exists() and not Source.objects.filter(bot=bot).exists()


def test_a_file_that_is_not_utf8_is_refused_by_line(bot):
    data = _jsonl(PASSAGES[0]) + b"\n" + json.dumps(PASSAGES[1], ensure_ascii=False).encode("cp1251")

    with pytest.raises(RowsInvalid) as refused:
        passages_load(bot=bot, filename="kb.jsonl", data=data)

    assert refused.value.problems == ["строка 2: текст не в кодировке UTF-8"]


def test_loading_passages_into_one_bot_never_touches_another_bots_entries(bot, other_bot):
    passages_load(bot=other_bot, filename="kb.jsonl", data=_jsonl(*PASSAGES))
    theirs = {entry.pk: (entry.text, entry.active) for entry in Entry.objects.filter(bot=other_bot)}

    passages_load(bot=bot, filename="kb.jsonl", data=_jsonl(*PASSAGES))
    passages_load(bot=bot, filename="kb.jsonl", data=_jsonl({**PASSAGES[0], "text": "Другое"}))

    assert {entry.pk: (entry.text, entry.active) for entry in Entry.objects.filter(bot=other_bot)} == theirs
    assert Entry.objects.filter(bot=bot, active=True).count() == 1


def test_loadpassages_embeds_what_it_loaded(bot, tmp_path, capsys):
    path = tmp_path / "kb.jsonl"
    path.write_bytes(_jsonl(*PASSAGES[:2]))

    call_command("loadpassages", "demo", str(path))

    assert "Векторизовано записей: 2" in capsys.readouterr().out
    assert Entry.objects.filter(bot=bot, embedding__isnull=False, embedding_model="e5-small").count() == 2


def test_loadpassages_fails_with_the_bad_lines(bot, tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_bytes(_jsonl(PASSAGES[0], "{oops"))

    with pytest.raises(CommandError, match="строка 2: неверный JSON"):
        call_command("loadpassages", "demo", str(path), "--no-embed")
    assert not Entry.objects.filter(bot=bot).exists()


def test_loadpassages_names_a_missing_file(bot, tmp_path):
    with pytest.raises(CommandError, match=r"не найден\. Проверьте путь\."):
        call_command("loadpassages", "demo", str(tmp_path / "nothing.jsonl"))
