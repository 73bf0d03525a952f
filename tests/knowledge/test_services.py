"""Address-less sources (typed pairs, API entries, owner answers, passage files) are told apart by
their title: one of them existing never makes another's lookup fail or land in the wrong source."""

import pytest

from knowledge.importing import qa_add
from knowledge.models import Source
from knowledge.services import OWNER_ANSWERS_TITLE, entry_create, entry_create_answer

pytestmark = pytest.mark.django_db


def test_an_owner_answer_goes_to_its_own_source_beside_typed_pairs_and_api_entries(bot):
    qa_add(bot=bot, question="Есть ли самовывоз?", answer="Нет.")
    entry_create(bot=bot, kind="chunk", title="Фрагмент", text="Текст через API.")
    answer = entry_create_answer(bot=bot, question="Сколько стоит доставка?", answer="300 ₽.", kind="correction",
                                 key="fix-1")
    assert answer.source is not None and answer.source.title == OWNER_ANSWERS_TITLE
    again = entry_create_answer(bot=bot, question="Когда доставка?", answer="Завтра.", kind="correction", key="fix-2")
    assert again.source_id == answer.source_id
    assert Source.objects.filter(bot=bot, kind="manual").count() == 3
