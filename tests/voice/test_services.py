"""Saving the voice: everything validated before anything is written, clear errors, concurrent
edits refused instead of lost, and the experiment arm a stable function of the visitor."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from bots.models import Bot
from voice import effective, services
from voice.exceptions import VoiceConflict, VoiceInvalid

pytestmark = pytest.mark.django_db

GOOD: dict = {
    "sliders": {"formality": "5", "empathy": "1", "brevity": "4", "assertiveness": "3"},
    "conditions": "Всегда предлагайте самовывоз.\nНе обещайте скидок.",
    "preferred": [("доставка", "курьерская доставка"), ("", "")],
    "forbidden": ["дешёв*", "халява"],
    "replies": {"ru": {"greeting": "Добрый день! Я помощник магазина."}, "en": {"greeting": ""}},
}


def _stored(bot: Bot) -> dict:
    return Bot.objects.get(pk=bot.pk).voice


def test_a_saved_voice_is_what_the_chain_reads(bot):
    services.voice_save(bot=bot, data=GOOD, revision=0)
    voice = effective.settings_for(Bot.objects.get(pk=bot.pk))
    assert dict(voice.sliders) == {"formality": 5, "empathy": 1, "brevity": 4, "assertiveness": 3}
    assert voice.preferred == (("доставка", "курьерская доставка"),)  # the blank row is no row
    assert voice.forbidden == ("дешёв*", "халява")
    assert voice.replies == {"ru": {"greeting": "Добрый день! Я помощник магазина."}, "en": {}}
    prompt = voice.prompt("ru")
    assert "строго официального тона" in prompt and "только суть" in prompt and "одно-два предложения" in prompt
    assert prompt.endswith("Всегда предлагайте самовывоз.\nНе обещайте скидок.")
    assert "Keep a strictly formal tone" in voice.prompt("en")
    assert _stored(bot)["revision"] == 1


def _refused(bot: Bot, change: dict, field: str) -> list[str]:
    services.voice_save(bot=bot, data=GOOD, revision=0)
    before = _stored(bot)
    with pytest.raises(VoiceInvalid) as caught:
        services.voice_save(bot=bot, data={**GOOD, **change}, revision=1)
    assert _stored(bot) == before  # nothing saved, nothing lost
    assert field in caught.value.errors, caught.value.errors
    return caught.value.errors[field]


@pytest.mark.parametrize("value", ["0", "6", "7", "-1", "abc", "", "3.5"])
def test_a_slider_out_of_range_is_refused_by_name(bot, value):
    errors = _refused(bot, {"sliders": {**GOOD["sliders"], "formality": value}}, "sliders.formality")
    assert errors == [f"«Формальность»: уровень — целое число от 1 до 5, а не «{value}»."]


def test_a_megabyte_of_conditions_is_refused_and_the_saved_ones_stay(bot):
    errors = _refused(bot, {"conditions": "Правило. " * 120_000}, "conditions")
    assert "не больше 2000 знаков" in errors[0]
    assert _stored(bot)["conditions"].startswith("Всегда предлагайте самовывоз.")


def test_too_many_lines_of_conditions_are_refused(bot):
    errors = _refused(bot, {"conditions": "\n".join(f"Правило {n}." for n in range(25))}, "conditions")
    assert errors == ["Условия — не больше 20 строк, а здесь 25. Оставьте самые важные."]


def test_a_huge_forbidden_list_is_refused(bot):
    errors = _refused(bot, {"forbidden": [f"слово{n}" for n in range(5000)]}, "forbidden")
    assert errors == ["Запрещённых слов не больше 300, а здесь 5000. Оставьте самые важные."]


def test_an_empty_term_is_refused_with_its_row(bot):
    errors = _refused(bot, {"preferred": [("доставка", "курьерская доставка"), ("  ", "самовывоз")]}, "preferred")
    assert errors == ["Строка 2: термин пустой — напишите слово, которое нужно заменить."]


def test_a_term_without_replacement_and_a_repeated_term_are_refused(bot):
    errors = _refused(bot, {"preferred": [("доставка", ""), ("оплата", "оплата заказа"), ("Оплата", "платёж")]},
                      "preferred")
    assert errors == ["Строка 1: не сказано, на что заменить «доставка».",
                      "Термин «Оплата» повторяется в строках 2 и 3."]


def test_own_wordings_may_not_hold_a_forbidden_word(bot):
    with pytest.raises(VoiceInvalid) as caught:
        services.voice_validate(data={**GOOD, "preferred": [("цена", "дешёвая цена")],
                                      "replies": {"ru": {"handoff": "Халява кончилась, зову оператора."}}})
    assert caught.value.errors["preferred"] == ["Замена «дешёвая цена» содержит запрещённое слово «дешёв*»."]
    assert caught.value.errors["replies.ru.handoff"] == ["Здесь есть запрещённое слово «халява»."]


def test_a_canned_reply_too_long_is_refused(bot):
    errors = _refused(bot, {"replies": {"ru": {"no_answer": "н" * 501}}}, "replies.ru.no_answer")
    assert errors == ["Ответ — не больше 500 знаков, а здесь 501."]


def test_a_save_from_a_stale_form_is_refused_and_the_newer_one_kept(bot):
    services.voice_save(bot=bot, data=GOOD, revision=0)
    with pytest.raises(VoiceConflict):
        services.voice_save(bot=bot, data={**GOOD, "conditions": "Другое."}, revision=0)
    assert _stored(bot)["conditions"].startswith("Всегда предлагайте")


@pytest.mark.django_db(transaction=True)
def test_two_saves_at_once_from_the_same_revision_one_wins_one_is_told(bot):
    barrier, outcomes = threading.Barrier(2), []

    def save(conditions: str) -> None:
        try:
            barrier.wait()
            services.voice_save(bot=Bot.objects.get(pk=bot.pk), data={**GOOD, "conditions": conditions}, revision=0)
            outcomes.append(("saved", conditions))
        except VoiceConflict:
            outcomes.append(("conflict", conditions))
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(text,)) for text in ("Первое.", "Второе.")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(kind for kind, _ in outcomes) == ["conflict", "saved"]
    winner = next(text for kind, text in outcomes if kind == "saved")
    assert _stored(bot) == {**_stored(bot), "conditions": winner, "revision": 1}


def test_the_arm_is_stable_per_visitor_and_follows_the_share():
    visitors = [f"v{n}" for n in range(4000)]
    half = [effective.arm_of(7, 50, v) for v in visitors]
    assert half == [effective.arm_of(7, 50, v) for v in visitors]  # the same visitor, the same arm
    assert 0.46 < half.count("b") / len(visitors) < 0.54
    tenth = [effective.arm_of(7, 10, v) for v in visitors]
    assert 0.08 < tenth.count("b") / len(visitors) < 0.12
    assert half != [effective.arm_of(8, 50, v) for v in visitors]  # another experiment splits anew


def test_a_visitor_in_arm_b_gets_the_variant_and_arm_a_the_bot(bot):
    services.voice_save(bot=bot, data=GOOD, revision=0)
    services.experiment_attach(bot=bot, experiment_id=41, share=50,
                               variant={"sliders": {**dict(effective.base_of(bot.voice).sliders), "brevity": 5},
                                        "match_threshold": 0.9})
    bot = Bot.objects.get(pk=bot.pk)
    b_visitor = next(f"v{n}" for n in range(100) if effective.arm_of(41, 50, f"v{n}") == "b")
    a_visitor = next(f"v{n}" for n in range(100) if effective.arm_of(41, 50, f"v{n}") == "a")
    b, a = effective.settings_for(bot, b_visitor), effective.settings_for(bot, a_visitor)
    assert (b.variant, b.sliders["brevity"], b.apply_to(bot).match_threshold) == ("41:b", 5, 0.9)
    assert (a.variant, a.sliders["brevity"], a.apply_to(bot).match_threshold) == ("41:a", 4, bot.match_threshold)
    assert b.preferred == a.preferred  # the dictionary is the bot's, in both arms
    assert effective.settings_for(bot).variant == ""  # a preview is nobody's arm
