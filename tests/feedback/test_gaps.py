"""Gaps from real unanswered questions: grouped, counted, answered through correction memory,
hidden; `manage.py gaps --json` prints one topic per line."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from feedback import grouping
from feedback.gaps import gap_answer, gap_list, gaps_refresh
from feedback.models import Gap, GapQuestion
from knowledge.embeddings import get_embedder

pytestmark = pytest.mark.django_db

HELICOPTER = ["Есть ли у вас парковка для вертолёта?", "Можно ли посадить вертолёт на вашей парковке?"]
CAKE = "Можно ли у вас заказать свадебный торт?"


def test_unanswered_questions_are_grouped_and_counted(shop, knowledge, ask):
    for number, question in enumerate([*HELICOPTER, CAKE]):
        ask(shop, question, visitor=f"v{number}")
    assert gaps_refresh(bot=shop) == 3
    assert gaps_refresh(bot=shop) == 0  # idempotent: the cursor moved on
    rows = gap_list(bot_ids=[shop.pk])
    assert [(r["gap"].count, r["gap"].title) for r in rows] == [(2, HELICOPTER[0]), (1, CAKE)]
    assert rows[0]["examples"] == HELICOPTER[1:] and rows[0]["trend"][-1] == 2


def test_answering_a_gap_closes_it_and_later_questions_get_the_answer(shop, knowledge, ask, owner):
    ask(shop, HELICOPTER[0])
    gaps_refresh(bot=shop)
    gap = Gap.objects.get(bot=shop)
    gap_answer(gap=gap, answer="Вертолётной площадки у нас нет, приезжайте на машине.", user=owner)
    gap.refresh_from_db()
    assert gap.status == "answered" and gap.entry is not None and gap.entry.kind == "qa"
    _message, reply = ask(shop, "Есть у вас площадка для вертолёта?", visitor="later")
    assert reply.source_entry_id == gap.entry_id


def test_hiding_and_the_admin_page(client, owner, shop, knowledge, ask, other_owner):
    ask(shop, CAKE)
    client.force_login(owner)
    page = client.get(reverse("admin:feedback_gap_changelist"))
    assert page.status_code == 200 and CAKE in page.content.decode()
    gap = Gap.objects.get(bot=shop)
    empty = client.post(reverse("admin:feedback_gap_answer", args=[gap.pk]), {"answer": "  "}, follow=True)
    assert "пустой" in empty.content.decode()
    client.post(reverse("admin:feedback_gap_hide", args=[gap.pk]), {"hidden": "1"})
    gap.refresh_from_db()
    assert gap.status == "hidden" and gap.entry is None
    client.force_login(other_owner)
    assert client.post(reverse("admin:feedback_gap_hide", args=[gap.pk]), {"hidden": "0"}).status_code == 404


def test_gaps_command_prints_one_json_object_per_topic(shop, knowledge, ask):
    for number, question in enumerate(HELICOPTER):
        ask(shop, question, visitor=f"v{number}")
    out = StringIO()
    call_command("gaps", shop.slug, "--json", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 1
    assert set(lines[0]) == {"id", "title", "count", "questions", "last_seen"}
    assert lines[0]["count"] == 2 and lines[0]["questions"] == HELICOPTER


def test_grouping_keeps_topics_apart_by_stems():
    questions = ["Есть ли подарочные сертификаты?", "Продаёте подарочные сертификаты?", "Работаете ли вы с оптовиками?"]
    labels = grouping.group([(grouping.stems(q), None) for q in questions])
    assert labels == [0, 0, 1]


# Centred meaning (feedback/grouping.py): real e5-small vectors from the project's embedder.
TIME, ALARMS = "скажи время", "покажи будильники"  # raw cosine 0.905: the old rule made them one topic
SNOW, RAIN = "там сейчас идёт снег", "там собирается дождь"  # no stem in common, one topic (weather)


def _vectors(*texts: str) -> list[tuple[frozenset[str], np.ndarray]]:
    embedder = get_embedder()
    return [(grouping.stems(t), embedder.query(t)) for t in texts]


def test_the_background_mean_is_shipped_for_e5_small_only():
    centred = grouping.meaning_for("e5-small")
    assert centred.mean is not None and centred.mean.shape == (384,) and centred.join == grouping.VECTOR_JOIN
    # the mean of unit vectors in a narrow cone is long: that shared direction is what centring removes
    assert 0.8 < float(np.linalg.norm(centred.mean)) < 1.0
    assert grouping.meaning_for("use-m3") is grouping.RAW


def test_centring_keeps_apart_questions_the_raw_cosine_glued():
    (time_stems, time_vector), (alarm_stems, alarm_vector) = _vectors(TIME, ALARMS)
    assert grouping.jaccard(time_stems, alarm_stems) == 0
    raw = float(grouping.unit_vector(time_vector) @ grouping.unit_vector(alarm_vector))
    centred = grouping.meaning_for(get_embedder().key)
    assert raw >= grouping.RAW_VECTOR_JOIN
    assert float(centred.prepare(time_vector) @ centred.prepare(alarm_vector)) < centred.join
    assert grouping.group(_vectors(TIME, ALARMS), meaning=grouping.RAW) == [0, 0]
    assert grouping.group(_vectors(TIME, ALARMS), meaning=centred) == [0, 1]


def test_centring_still_joins_a_paraphrase_with_no_stem_in_common():
    questions = _vectors(SNOW, RAIN, TIME)
    assert grouping.jaccard(questions[0][0], questions[1][0]) == 0
    assert grouping.group(questions, meaning=grouping.meaning_for(get_embedder().key)) == [0, 0, 1]


def test_prepared_vectors_are_unit_length_and_none_stays_stems_only():
    centred = grouping.meaning_for(get_embedder().key)
    (_stems, vector), = _vectors(SNOW)
    assert abs(float(np.linalg.norm(centred.prepare(vector))) - 1.0) < 1e-5
    assert grouping.group([(grouping.stems(SNOW), None), (grouping.stems(RAIN), None)], meaning=centred) == [0, 1]


def test_refresh_groups_by_centred_meaning_and_stores_the_model_vector(shop, knowledge, ask):
    for number, question in enumerate([SNOW, TIME, RAIN, ALARMS]):
        ask(shop, question, visitor=f"v{number}")
    assert gaps_refresh(bot=shop) == 4
    topics = {gap.title: sorted(gap.questions.values_list("text", flat=True)) for gap in Gap.objects.filter(bot=shop)}
    assert topics == {SNOW: sorted([SNOW, RAIN]), TIME: [TIME], ALARMS: [ALARMS]}
    stored = GapQuestion.objects.get(bot=shop, text=RAIN)
    embedder = get_embedder()
    assert stored.embedding_model == embedder.key
    assert np.allclose(np.asarray(stored.vector), embedder.query(RAIN), atol=1e-5)  # the model's own, not centred


def test_refresh_compares_an_other_models_vectors_by_stems_only(shop, knowledge, ask):
    ask(shop, SNOW, visitor="a")
    gaps_refresh(bot=shop)
    GapQuestion.objects.filter(bot=shop).update(embedding_model="use-m3")  # as if asked before a model change
    ask(shop, RAIN, visitor="b")
    gaps_refresh(bot=shop)
    assert Gap.objects.filter(bot=shop).count() == 2  # no meaning across models: a split, never a wrong merge
