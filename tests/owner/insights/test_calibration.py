"""`manage.py calibrate` on the shop's three embedded entries: the chain itself without a model, the
owner's question set and answers, the shipped out-of-scope questions; a dry run changes nothing,
--apply saves the chosen threshold, and every refusal says why."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from owner.insights.calibration import CalibrationError, all_cases, calibrate, candidates, shipped_out_of_scope
from owner.insights.models import QuestionSet, SetQuestion
from tests.chat.conftest import DELIVERY_QUESTION

pytestmark = pytest.mark.django_db


def _set(bot, *rows):
    question_set = QuestionSet.objects.create(bot=bot, name="Главное")
    for position, (question, url, phrase) in enumerate(rows, start=1):
        SetQuestion.objects.create(question_set=question_set, position=position, question=question,
                                   expected_url=url, expected_phrase=phrase)
    return question_set


def _run(*args):
    out = io.StringIO()
    call_command("calibrate", *args, stdout=out)
    return out.getvalue()


def test_the_shipped_questions_are_real_questions():
    russian, english = shipped_out_of_scope("ru"), shipped_out_of_scope("en")
    assert len(russian) >= 30 and len(english) >= 10
    assert not any(line.startswith("#") for line in russian + english)
    assert shipped_out_of_scope("xx") == []


def test_candidates_stay_around_the_threshold_and_inside_the_bounds():
    assert candidates(0.485, span=0.02, step=0.01) == [0.465, 0.475, 0.485, 0.495, 0.505]
    assert min(candidates(0.31, span=0.05)) == 0.3
    assert 0.485 in candidates(0.485, span=0.0)


def test_a_dry_run_reports_every_group_and_changes_nothing(shop, knowledge):
    _set(shop, (DELIVERY_QUESTION, "https://shop.example/delivery", "300 ₽"),
         ("Можно ли вернуть товар?", "https://shop.example/return", ""),
         ("Как оплатить заказ?", "https://shop.example/payment", "СБП"))
    before = shop.match_threshold
    cases = all_cases(shop)
    result = calibrate(shop, cases, span=0.02, step=0.01)

    assert shop.match_threshold == before
    shop.refresh_from_db()
    assert shop.match_threshold == before
    own, after = result.groups["набор «Главное»"]
    assert own.answerable == 3 and own.threshold == before and after.threshold == result.chosen
    assert own.right == 3, "the shop answers its own three questions at its threshold"
    shipped = result.groups["вне тематики (поставляется), ru"][0]
    assert shipped.unanswerable == len(shipped_out_of_scope("ru"))
    assert shipped.refusal >= 0.9
    assert [r.threshold for r in result.sweep] == candidates(before, span=0.02, step=0.01)


def test_the_command_prints_before_and_after_and_saves_only_with_apply(shop, knowledge):
    _set(shop, (DELIVERY_QUESTION, "https://shop.example/delivery", ""))
    shop.match_threshold = 0.9  # nothing the shop knows scores this high: every answer is refused
    shop.save(update_fields=["match_threshold"])

    report = json.loads(_run(shop.slug, "--json", "--span", "0.3", "--step", "0.1"))
    assert report["before"] == 0.9 and report["chosen"] < 0.9 and report["applied"] is False
    group = report["groups"]["набор «Главное»"]
    assert group["before"]["answered_right"] == 0.0 and group["after"]["answered_right"] == 1.0
    shop.refresh_from_db()
    assert shop.match_threshold == 0.9

    text = _run(shop.slug, "--apply", "--span", "0.3", "--step", "0.1")
    assert "Новый порог сохранён" in text and "сейчас" in text and "с новым порогом" in text
    shop.refresh_from_db()
    assert shop.match_threshold == report["chosen"]


def test_an_owner_answer_is_asked_as_written_and_must_come(shop, knowledge):
    from knowledge.models import Entry
    from knowledge.services import entry_create_answer
    from owner.insights.calibration import run

    entry = entry_create_answer(bot=shop, question="Есть ли у вас подарочные сертификаты?",
                                answer="Да, сертификаты на 1000, 3000 и 5000 ₽ продаются на кассе.",
                                kind=Entry.Kind.QA, key="qa:certificates")
    cases = [case for case in all_cases(shop) if case.expected_entry_id == entry.pk and case.group != "с опечатками"]
    assert [case.question for case in cases] == ["Есть ли у вас подарочные сертификаты?"]
    assert cases[0].group == "ответы владельца" and cases[0].answerable
    [outcome] = run(shop, cases, shop.match_threshold)
    assert outcome.answered and outcome.right


def test_a_bot_with_no_known_answers_is_refused_with_the_reason(shop):
    with pytest.raises(CalibrationError, match="Нет вопросов с известным ответом"):
        calibrate(shop, all_cases(shop))
    with pytest.raises(CommandError, match="Нет вопросов с известным ответом"):
        _run(shop.slug)


def test_questions_that_all_have_answers_are_refused_with_the_reason(shop, knowledge):
    _set(shop, (DELIVERY_QUESTION, "https://shop.example/delivery", ""))
    only_answerable = [case for case in all_cases(shop) if case.answerable]
    with pytest.raises(CalibrationError, match="Нет вопросов без ответа"):
        calibrate(shop, only_answerable)


def test_bad_input_gets_a_clear_error(shop, knowledge, tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "без страницы", "answerable": true}\n{not json\n', encoding="utf-8")
    with pytest.raises(CommandError, match="Не удалось прочитать"):
        _run(shop.slug, str(broken))
    with pytest.raises(CommandError, match="Не удалось прочитать"):
        _run(shop.slug, str(tmp_path / "missing.jsonl"))
    with pytest.raises(CommandError, match="Шаг"):
        _run(shop.slug, "--step", "0")
    with pytest.raises(CommandError):
        _run("no-such-bot")


def test_cases_from_a_file_count_with_the_bots_own(shop, knowledge, tmp_path):
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        json.dumps({"question": "Как оплатить заказ?", "expected_url": "https://shop.example/payment"},
                   ensure_ascii=False)
        + "\n" + json.dumps({"question": "Сколько стоит ремонт вертолёта?", "answerable": False}, ensure_ascii=False)
        + "\n", encoding="utf-8")
    report = json.loads(_run(shop.slug, str(extra), "--json", "--span", "0"))
    group = report["groups"]["extra.jsonl"]["before"]
    assert group["answerable"] == 1 and group["unanswerable"] == 1
    assert group["answered_right"] == 1.0 and group["refusal"] == 1.0 and group["false_answers"] == 0.0


def test_a_slip_in_the_two_longest_words():
    from owner.insights.calibration import misspelt

    assert misspelt("Сколько стоит доставка по Москве?") == "Склоько стоит досатвка по Москве?"
    assert misspelt("Да нет") is None
    assert misspelt("😀" * 10) is None


def test_each_check_switched_off_is_measured_at_the_chosen_threshold(shop, knowledge, settings):
    _set(shop, (DELIVERY_QUESTION, "https://shop.example/delivery", ""),
         ("Как оплатить заказ?", "https://shop.example/payment", ""))
    cases = all_cases(shop)
    assert any(case.group == "с опечатками" for case in cases)
    result = calibrate(shop, cases, span=0.0)

    assert set(result.checks) == {"исправление опечаток", "проверка темы вопроса"}
    assert all(rates.threshold == result.chosen for rates in result.checks.values())
    assert settings.CHAT_SPELLER is True and settings.CHAT_SCOPE_CHECK is True  # switched back on
    on = result.sweep[0]
    spelled = result.groups["с опечатками"][0]
    assert spelled.answerable >= 1
    assert result.checks["исправление опечаток"].right <= on.right
