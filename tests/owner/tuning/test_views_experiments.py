"""/b/<slug>/experiments/: start an experiment, see its arms and verdict with a chart, stop it and
apply the winner; bad input gets clear errors; another tenant's experiment is a 404."""

from __future__ import annotations

import pytest

from bots.models import Bot
from feedback import experiments
from feedback.models import Experiment

pytestmark = pytest.mark.django_db


def _url(bot: Bot, tail: str = "") -> str:
    return f"/b/{bot.slug}/experiments/{tail}"


def _form(**changes: str) -> dict[str, str]:
    form = {"name": "Короче", "kind": "voice", "share": "50", "metric": "answered", "variant_formality": "3",
            "variant_empathy": "3", "variant_brevity": "5", "variant_assertiveness": "3", "variant_conditions": "",
            "variant_match_threshold": "", "variant_confidence_threshold": ""}
    return {**form, **changes}


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


def test_an_empty_page_says_what_to_try_first(owner_client, bot):
    page = owner_client.get(_url(bot)).content.decode()
    assert "Экспериментов ещё не было." in page and 'id="experiment-form"' in page
    assert 'aria-current="page">Эксперименты<' in page


def test_starting_shows_the_running_experiment_with_its_chart_and_scarce_data(owner_client, bot):
    response = owner_client.post(_url(bot), _form(), follow=True)
    page = response.content.decode()
    assert "Эксперимент начат" in page
    assert 'id="chart-arms"' in page and 'id="arms-data"' in page and "vendor/chartjs/chart.umd.min.js" in page
    assert "Данных пока мало" in page
    assert 'id="experiment-form"' not in page  # one at a time
    experiment = Experiment.objects.get(bot=bot)
    assert experiment.variant == {"sliders": {"formality": 3, "empathy": 3, "brevity": 5, "assertiveness": 3}}
    assert Bot.objects.get(pk=bot.pk).voice["experiment"] == {"id": experiment.pk, "share": 50, "b": experiment.variant}


def test_bad_input_is_named_and_nothing_starts(owner_client, bot):
    response = owner_client.post(_url(bot), _form(share="100", variant_brevity="8", name=""))
    page = response.content.decode()
    assert response.status_code == 400
    assert "Доля варианта Б — целое число от 1 до 99 процентов." in page
    assert "«Краткость»: уровень — целое число от 1 до 5, а не «8»." in page
    assert "Назовите эксперимент" in page
    assert not Experiment.objects.exists()


def test_a_second_experiment_while_one_runs_is_refused(owner_client, bot):
    owner_client.post(_url(bot), _form())
    response = owner_client.post(_url(bot), _form(name="Другой", variant_brevity="1"))
    assert response.status_code == 409
    assert "У бота уже идёт эксперимент" in response.content.decode()
    assert Experiment.objects.filter(bot=bot).count() == 1


def test_stopping_with_b_applies_it(owner_client, bot):
    owner_client.post(_url(bot), _form())
    experiment = Experiment.objects.get(bot=bot)
    response = owner_client.post(_url(bot, f"{experiment.pk}/stop/"), {"apply": "b"}, follow=True)
    assert "вариант Б применён" in response.content.decode()
    assert Bot.objects.get(pk=bot.pk).voice["sliders"]["brevity"] == 5
    assert "experiment" not in Bot.objects.get(pk=bot.pk).voice


def test_another_tenants_experiment_is_not_found(owner_client, bot, other_bot):
    theirs = experiments.experiment_start(bot=other_bot, name="Их", kind="threshold",
                                          variant={"match_threshold": "0.6"})
    assert owner_client.get(_url(bot, f"{theirs.pk}/")).status_code == 404
    assert owner_client.post(_url(bot, f"{theirs.pk}/stop/"), {"apply": "b"}).status_code == 404
    assert owner_client.get(_url(other_bot)).status_code == 404
    assert owner_client.get(_url(bot, "999999/")).status_code == 404
    assert Experiment.objects.get(pk=theirs.pk).running


def test_stop_is_post_only(owner_client, bot):
    owner_client.post(_url(bot), _form())
    experiment = Experiment.objects.get(bot=bot)
    assert owner_client.get(_url(bot, f"{experiment.pk}/stop/")).status_code == 405
    assert Experiment.objects.get(pk=experiment.pk).running
