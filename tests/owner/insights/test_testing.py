"""Hit testing: the ranked passages with their score parts and the chain's answer, stored nowhere."""

from __future__ import annotations

import pytest

from chat.models import Conversation, Message
from owner.insights.testing import InsightsError, hit_test
from tests import fakes
from tests.fakes.messages_api import tool_use
from tests.owner.insights.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db
fake_llm = fakes.fake_llm


def said(answer: str = "", *, source: int = -1) -> dict:
    return {"intent": "question", "source": source, "answer": answer, "product_query": "", "fixed": ""}


def test_it_ranks_passages_with_every_score_part_and_answers_from_the_best(shop, knowledge):
    hit = hit_test(bot=shop, question=DELIVERY_QUESTION)
    top = hit.passages[0]
    assert top.result.entry_id == knowledge["delivery"].pk
    assert {"vector", "lexical", "trigram", "relevance", "entry_factor", "fix_bonus", "unknown"} <= set(
        top.result.components)
    assert [p.rank for p in hit.passages] == list(range(1, len(hit.passages) + 1))
    assert hit.passages == sorted(hit.passages, key=lambda p: -p.result.score)
    # retrieval-only (no model in tests): the best entry's own words, with its link
    assert hit.route == "search"
    assert top.cited and top.in_prompt
    assert hit.reply.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert "300" in hit.reply.text
    assert hit.reply_json["source"] == knowledge["delivery"].pk
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_a_question_the_site_does_not_answer_is_no_answer_with_every_passage_below_the_threshold(shop, knowledge):
    hit = hit_test(bot=shop, question=UNKNOWN_QUESTION)
    assert hit.route == "no_answer"
    assert hit.reply.flags["unanswered"]
    assert all(not p.cited for p in hit.passages)
    assert all(p.result.score < shop.match_threshold for p in hit.passages)


def test_rules_decide_a_greeting_without_retrieval(shop, knowledge):
    hit = hit_test(bot=shop, question="Привет!")
    assert hit.route == "rules"


def test_with_a_model_the_answer_cites_the_source_the_model_named(shop, knowledge, fake_llm):
    fake_llm.script(tool_use(said("Доставка по Москве стоит 300 ₽.", source=0)))
    hit = hit_test(bot=shop, question=DELIVERY_QUESTION)
    assert hit.route == "model"
    assert hit.reply.text == "Доставка по Москве стоит 300 ₽."
    assert next(p for p in hit.passages if p.cited).result.entry_id == knowledge["delivery"].pk
    assert not Conversation.objects.exists()


@pytest.mark.parametrize(("question", "message"), [
    ("", "Введите вопрос."), ("   ", "Введите вопрос."), (None, "Введите вопрос."),
    ("д" * 10_000, "Вопрос длиннее 4000 символов (в нём 10000). Сократите его."),
])
def test_bad_questions_are_refused_with_a_reason(shop, question, message):
    with pytest.raises(InsightsError) as refused:
        hit_test(bot=shop, question=question)
    assert refused.value.message == message


def test_the_page_shows_passages_parts_and_the_answer(owner_client, shop, knowledge):
    response = owner_client.post("/b/demo/testing/", {"question": DELIVERY_QUESTION})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Найденные записи" in page and "источник ответа" in page
    assert 'data-route="search"' in page
    assert "https://shop.example/delivery" in page
    assert "вопрос-ответ ·" in page and ">qa ·" not in page  # the entry's kind by its label, not its stored value


def test_the_page_explains_a_too_long_question_and_keeps_nothing(owner_client, shop, knowledge):
    response = owner_client.post("/b/demo/testing/", {"question": "x" * 10_000})
    assert response.status_code == 400
    assert "Вопрос длиннее 4000 символов" in response.content.decode()


def test_the_page_escapes_the_question(owner_client, shop, knowledge):
    response = owner_client.post("/b/demo/testing/", {"question": "<script>alert(1)</script> доставка"})
    page = response.content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_another_owner_gets_404(other_client, shop, knowledge):
    assert other_client.get("/b/demo/testing/").status_code == 404
    assert other_client.post("/b/demo/testing/", {"question": DELIVERY_QUESTION}).status_code == 404


def test_signed_out_goes_to_login(client, shop):
    response = client.get("/b/demo/testing/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize(("lang", "words"), [
    ("ru", ("Отвечает бот только записями с оценкой не ниже порога совпадения (0,485)",
            "насколько уверенным должен быть бот, чтобы ответить", "ниже порога")),
    ("en", ("The bot answers only with entries scoring at least the match threshold (0.485)",
            "how sure the bot must be to answer", "below threshold")),
])
def test_the_threshold_is_explained_in_the_owners_words(owner_client, shop, knowledge, lang, words):
    page = owner_client.post("/b/demo/testing/", {"question": UNKNOWN_QUESTION},
                             HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for text in words:
        assert text in page, text
    assert "подсказк" not in page and "prompt" not in page
