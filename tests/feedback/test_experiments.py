"""A/B experiments with simulated traffic: a few hundred conversations through the real chat
services (retrieval only), split by visitor id; a known difference gives a verdict, no difference
gives none, and too few conversations say «данных пока мало»."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bots.models import Bot
from chat import services
from feedback import experiments
from feedback.models import Experiment
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION
from voice import effective

pytestmark = pytest.mark.django_db


def _traffic(bot: Bot, count: int, question: Callable[[int], str], *, down: Callable[[int], bool] = lambda n: False,
             start: int = 0) -> None:
    """`count` visitors, each in a conversation of their own, asking `question(n)`; `down(n)`: they
    rate the answer «не помогло»."""
    for n in range(start, start + count):
        conversation = services.conversation_open(bot=bot, visitor_id=f"sim{n}")
        _v, reply, _ = services.message_receive(conversation=conversation, text=question(n), client_msg_id="c1")
        if reply is not None and down(n):
            services.message_rate(conversation=conversation, message_id=reply.pk, rating=-1)


def _bot(shop: Bot) -> Bot:
    return Bot.objects.get(pk=shop.pk)


def test_a_known_difference_gives_a_verdict_and_the_winner_can_be_applied(knowledge, shop):
    experiment = experiments.experiment_start(
        bot=shop, name="Строгий порог", kind=Experiment.Kind.THRESHOLD, variant={"match_threshold": "0.99"},
        share=50, metric=Experiment.Metric.ANSWERED,
    )
    bot = _bot(shop)
    # Three in four ask what the site answers; arm b's threshold lets nothing through.
    _traffic(bot, 300, lambda n: UNKNOWN_QUESTION if n % 4 == 0 else DELIVERY_QUESTION)
    results = experiments.experiment_results(bot=bot, experiment=experiment)
    a, b = results.arms["a"], results.arms["b"]
    assert a.conversations + b.conversations == 300 and min(a.conversations, b.conversations) >= 100
    assert b.answered == 0 and a.answered >= 0.6 * a.conversations
    assert (results.verdict, results.winner) == ("winner", "a")
    assert results.main.p_value is not None and results.main.p_value < 0.001
    assert results.message.startswith("Вариант А лучше по показателю «бот ответил»")
    experiments.experiment_stop(bot=bot, experiment_id=experiment.pk, apply="a")
    bot = _bot(shop)
    assert "experiment" not in bot.voice and bot.match_threshold == shop.match_threshold
    assert services.conversation_open(bot=bot, visitor_id="after").variant == ""


def test_no_difference_gives_no_verdict(knowledge, shop):
    sliders = {**dict(effective.base_of(shop.voice).sliders), "brevity": "5"}
    experiment = experiments.experiment_start(
        bot=shop, name="Короче", kind=Experiment.Kind.VOICE, variant={"sliders": sliders}, share=50,
        metric=Experiment.Metric.ANSWERED,
    )
    bot = _bot(shop)
    # Without a model the sliders change nothing: both arms answer alike (a third ask what is not there).
    _traffic(bot, 300, lambda n: UNKNOWN_QUESTION if n % 3 == 0 else DELIVERY_QUESTION, down=lambda n: n % 10 == 1)
    results = experiments.experiment_results(bot=bot, experiment=experiment)
    assert min(results.arms["a"].conversations, results.arms["b"].conversations) >= 100
    assert results.verdict == "no_difference" and results.winner == ""
    assert results.main.p_value is not None and results.main.p_value >= experiments.ALPHA
    down = next(c for c in results.comparisons if c.metric == "thumbs_down")
    assert sum(down.counts) == 30


def test_too_few_conversations_say_data_is_still_scarce(knowledge, shop):
    experiment = experiments.experiment_start(
        bot=shop, name="Строгий порог", kind=Experiment.Kind.THRESHOLD, variant={"match_threshold": "0.99"}, share=50,
    )
    _traffic(_bot(shop), 60, lambda n: DELIVERY_QUESTION)
    results = experiments.experiment_results(bot=_bot(shop), experiment=experiment)
    assert results.verdict == "too_little" and results.winner == ""
    assert results.message.startswith("Данных пока мало: нужно не меньше 100 разговоров в каждом варианте")


def test_applying_variant_b_makes_it_the_bots_own(shop):
    sliders = {"formality": "5", "empathy": "3", "brevity": "4", "assertiveness": "3"}
    experiment = experiments.experiment_start(bot=shop, name="Строже", kind=Experiment.Kind.VOICE,
                                              variant={"sliders": sliders})
    experiments.experiment_stop(bot=shop, experiment_id=experiment.pk, apply="b")
    bot = _bot(shop)
    assert dict(effective.settings_for(bot, "anyone").sliders) == {k: int(v) for k, v in sliders.items()}
    assert Experiment.objects.get(pk=experiment.pk).winner == "b"
    threshold = experiments.experiment_start(bot=bot, name="Порог", kind=Experiment.Kind.THRESHOLD,
                                             variant={"confidence_threshold": "0,8"})
    experiments.experiment_stop(bot=bot, experiment_id=threshold.pk, apply="b")
    assert _bot(shop).confidence_threshold == 0.8


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"share": "0"}, "share", "Доля варианта Б — целое число от 1 до 99 процентов."),
    ({"share": "много"}, "share", "Доля варианта Б — целое число от 1 до 99 процентов."),
    ({"name": " "}, "name", "Назовите эксперимент, например «Короче и строже»."),
    ({"kind": "colour"}, "kind", "Выберите, что сравниваем: тон, условия или пороги."),
    ({"metric": "revenue"}, "metric", "Выберите главный показатель из списка."),
    ({"variant": {"match_threshold": "1.5"}}, "variant.match_threshold",
     "«Порог совпадения» — число от 0 до 1, например 0,5, а не «1.5»."),
    ({"variant": {"match_threshold": "nan"}}, "variant.match_threshold",
     "«Порог совпадения» — число от 0 до 1, например 0,5, а не «nan»."),
    ({"variant": {}}, "variant", "Укажите хотя бы один порог для варианта Б."),
])
def test_bad_experiments_are_refused_and_nothing_starts(shop, changes, field, message):
    data = {"name": "Порог", "kind": Experiment.Kind.THRESHOLD, "variant": {"match_threshold": "0.6"}, **changes}
    with pytest.raises(experiments.ExperimentInvalid) as caught:
        experiments.experiment_start(bot=shop, **data)
    assert caught.value.errors[field] == [message]
    assert not Experiment.objects.exists() and _bot(shop).voice == {}


def test_a_variant_like_the_current_voice_or_a_megabyte_of_conditions_is_refused(shop):
    with pytest.raises(experiments.ExperimentInvalid) as same:
        experiments.experiment_start(bot=shop, name="Ничего", kind=Experiment.Kind.VOICE,
                                     variant={"sliders": dict(effective.base_of(shop.voice).sliders)})
    assert same.value.errors["variant"] == ["Вариант Б не отличается от текущих слайдеров: сравнивать нечего."]
    with pytest.raises(experiments.ExperimentInvalid) as huge:
        experiments.experiment_start(bot=shop, name="Много", kind=Experiment.Kind.CONDITIONS,
                                     variant={"conditions": "x" * 1_000_000})
    assert "не больше 2000 знаков" in huge.value.errors["variant.conditions"][0]


def test_one_experiment_runs_at_a_time_and_another_bots_is_not_found(shop, other_bot):
    first = experiments.experiment_start(bot=shop, name="Порог", kind=Experiment.Kind.THRESHOLD,
                                         variant={"match_threshold": "0.6"})
    with pytest.raises(experiments.ExperimentAlreadyRunning):
        experiments.experiment_start(bot=shop, name="Ещё", kind=Experiment.Kind.THRESHOLD,
                                     variant={"match_threshold": "0.7"})
    assert _bot(shop).voice["experiment"]["id"] == first.pk
    with pytest.raises(experiments.ExperimentNotFound):
        experiments.experiment_stop(bot=other_bot, experiment_id=first.pk)
    assert Experiment.objects.get(pk=first.pk).running
