"""/b/<slug>/voice/: the owner's sliders, «условия», dictionary and canned replies; bad input gets a
clear error and keeps both what was saved and what was typed; the preview compares before saving."""

from __future__ import annotations

import pytest

from bots.models import Bot
from tests.chat.conftest import DELIVERY_QUESTION
from tests.fakes.messages_api import tool_use

pytestmark = pytest.mark.django_db


def _url(bot: Bot) -> str:
    return f"/b/{bot.slug}/voice/"


def _form(**changes: object) -> dict:
    form = {
        "revision": "0", "slider_formality": "3", "slider_empathy": "3", "slider_brevity": "3",
        "slider_assertiveness": "3", "conditions": "", "term": ["доставка", ""],
        "replacement": ["курьерская доставка", ""],
        "forbidden": "дешёв*\nхалява", "reply_ru_greeting": "", "action": "save",
    }
    return {**form, **changes}


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


def test_the_page_needs_a_login_and_another_owners_bot_is_not_found(client, bot, other_owner):
    assert client.get(_url(bot)).status_code == 302
    client.force_login(other_owner)
    assert client.get(_url(bot)).status_code == 404
    assert client.post(_url(bot), _form()).status_code == 404
    assert Bot.objects.get(pk=bot.pk).voice == {}


def test_the_form_shows_sliders_with_their_meaning_the_counter_and_the_default_replies(owner_client, bot):
    page = owner_client.get(_url(bot)).content.decode()
    assert page.count('type="range"') == 4 and 'name="slider_brevity"' in page
    assert "Как в основных правилах: коротко и вежливо." in page  # level 3's meaning
    assert "0 из 2000 знаков, не больше 20 строк" in page
    assert 'placeholder="Здравствуйте! Чем могу помочь?"' in page and 'placeholder="Hello! How can I help?"' in page
    assert 'aria-current="page">Голос<' in page


def test_saving_stores_the_voice_and_says_so(owner_client, bot):
    response = owner_client.post(_url(bot), _form(slider_brevity="5", conditions="Предлагайте самовывоз."), follow=True)
    assert "Настройки голоса сохранены" in response.content.decode()
    voice = Bot.objects.get(pk=bot.pk).voice
    assert voice["sliders"]["brevity"] == 5 and voice["conditions"] == "Предлагайте самовывоз."
    assert voice["preferred"] == [["доставка", "курьерская доставка"]] and voice["forbidden"] == ["дешёв*", "халява"]


def test_a_slider_out_of_range_is_refused_and_what_was_typed_is_kept(owner_client, bot):
    owner_client.post(_url(bot), _form(conditions="Старое правило."))
    before = Bot.objects.get(pk=bot.pk).voice
    response = owner_client.post(_url(bot), _form(revision="1", slider_formality="9", conditions="Новое правило."))
    page = response.content.decode()
    assert response.status_code == 400
    assert "«Формальность»: уровень — целое число от 1 до 5, а не «9»." in page
    assert "Не сохранено: исправьте отмеченные поля." in page
    assert ">Новое правило.</textarea>" in page  # the owner's typing is not lost
    assert Bot.objects.get(pk=bot.pk).voice == before


def test_a_megabyte_of_conditions_gets_a_clear_error_and_saves_nothing(owner_client, bot):
    owner_client.post(_url(bot), _form(conditions="Старое правило."))
    response = owner_client.post(_url(bot), _form(revision="1", conditions="x" * (1024 * 1024)))
    assert response.status_code == 400
    assert "Условия — не больше 2000 знаков, а здесь 1048576. Сократите их." in response.content.decode()
    assert Bot.objects.get(pk=bot.pk).voice["conditions"] == "Старое правило."


def test_a_huge_word_list_and_an_empty_term_are_refused_together(owner_client, bot):
    words = ",".join(f"слово{n}" for n in range(10_000))
    response = owner_client.post(_url(bot), _form(forbidden=words, term=["", "оплата"],
                                                  replacement=["курьер", "оплата заказа"]))
    page = response.content.decode()
    assert response.status_code == 400
    assert "Запрещённых слов не больше 300, а здесь 10000." in page
    assert "Строка 1: термин пустой — напишите слово, которое нужно заменить." in page
    assert Bot.objects.get(pk=bot.pk).voice == {}


def test_a_save_from_a_form_opened_before_anothers_save_is_refused_and_kept_in_the_form(owner_client, bot):
    owner_client.post(_url(bot), _form(conditions="Правило коллеги."))
    response = owner_client.post(_url(bot), _form(revision="0", conditions="Моё правило."))
    page = response.content.decode()
    assert response.status_code == 409
    assert "Пока вы редактировали, настройки голоса сохранил кто-то другой." in page
    assert ">Моё правило.</textarea>" in page and 'name="revision" value="1"' in page
    assert Bot.objects.get(pk=bot.pk).voice["conditions"] == "Правило коллеги."


def test_owner_text_is_escaped(owner_client, bot):
    owner_client.post(_url(bot), _form(conditions="<script>alert(1)</script>"))
    page = owner_client.get(_url(bot)).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_preview_without_a_model_shows_canned_texts_and_the_retrieval_answer_and_saves_nothing(
    owner_client, knowledge, shop
):
    response = owner_client.post(_url(shop), _form(action="preview", question=DELIVERY_QUESTION,
                                                   reply_ru_greeting="Добрый день, это магазин!"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Модель не подключена" in page
    current, edited = page.split('id="side-current"')[1].split('id="side-edited"')
    assert "Здравствуйте! Чем могу помочь?" in current and "Добрый день, это магазин!" in edited
    assert "Доставка по Москве" in current and "Курьерская доставка по Москве" in edited
    assert Bot.objects.get(pk=shop.pk).voice == {}


def test_the_preview_with_a_model_asks_it_under_both_settings(owner_client, knowledge, shop, fake_llm):
    fake_llm.script(
        tool_use({"intent": "question", "source": 0, "answer": "По Москве доставка стоит 300 ₽, привезём на следующий "
                  "день — очень удобно!", "product_query": "", "fixed": ""}),
        tool_use({"intent": "question", "source": 0, "answer": "Доставка по Москве — 300 ₽.", "product_query": "",
                  "fixed": ""}),
    )
    page = owner_client.post(_url(shop), _form(action="preview", question=DELIVERY_QUESTION, slider_brevity="5",
                                               slider_formality="5")).content.decode()
    assert "Модель не подключена" not in page
    first, second = fake_llm.requests[-2:]
    assert len(first.body["system"]) == 1  # the saved voice: nobody tuned it
    assert "Отвечайте предельно коротко" in second.body["system"][1]["text"]
    current, edited = page.split('id="side-current"')[1].split('id="side-edited"')
    assert "очень удобно" in current and "Курьерская доставка по Москве — 300 ₽." in edited
    assert Bot.objects.get(pk=shop.pk).voice == {}


def test_an_invalid_preview_names_the_problem(owner_client, bot):
    response = owner_client.post(_url(bot), _form(action="preview", slider_empathy="0", question="Привет"))
    assert response.status_code == 400
    assert "«Эмпатия»: уровень — целое число от 1 до 5, а не «0»." in response.content.decode()
