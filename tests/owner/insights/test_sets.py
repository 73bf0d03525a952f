"""Question sets: pasted one per line with optional expectations; bad pastes say which line and
why, and the saved set stays as it was."""

from __future__ import annotations

import pytest

from owner.insights.models import QuestionSet
from owner.insights.sets import SetInvalid, question_set_save, questions_parse, set_text

pytestmark = pytest.mark.django_db


def test_lines_become_questions_with_expected_source_and_phrase(bot):
    text = ("Сколько стоит доставка? | https://shop.example/delivery | 300 ₽\n\n"
            "  Как вернуть товар?  \nКак оплатить? | картой\n")
    saved = question_set_save(bot=bot, name=" Основное ", text=text)
    cases = list(saved.cases.all())
    assert saved.name == "Основное"
    assert [(c.position, c.question, c.expected_url, c.expected_phrase) for c in cases] == [
        (1, "Сколько стоит доставка?", "https://shop.example/delivery", "300 ₽"),
        (2, "Как вернуть товар?", "", ""),
        (3, "Как оплатить?", "", "картой"),
    ]
    assert set_text(saved).splitlines()[0] == "Сколько стоит доставка? | https://shop.example/delivery | 300 ₽"


def test_fifty_questions_are_fine_fifty_one_are_refused(bot):
    assert len(questions_parse("\n".join(f"вопрос {n}" for n in range(50)))) == 50
    with pytest.raises(SetInvalid) as refused:
        question_set_save(bot=bot, name="Много", text="\n".join(f"вопрос {n}" for n in range(51)))
    assert refused.value.errors["questions"] == [
        "В наборе 51 вопрос, а можно не больше 50. Разделите его на два набора."]
    assert not QuestionSet.objects.exists()


@pytest.mark.parametrize("text", ["", "  \n \n", None])
def test_an_empty_set_is_refused(bot, text):
    with pytest.raises(SetInvalid) as refused:
        question_set_save(bot=bot, name="Пусто", text=text)
    assert refused.value.errors == {"questions": ["Добавьте хотя бы один вопрос: по одному в строке."]}


def test_a_ten_thousand_character_question_names_its_line(bot):
    with pytest.raises(SetInvalid) as refused:
        question_set_save(bot=bot, name="Длинный", text="нормальный вопрос\n" + "я" * 10_000)
    assert refused.value.errors["questions"] == [
        "Строка 2: Вопрос длиннее 4000 символов (в нём 10000). Сократите его."]


def test_bad_source_addresses_and_a_missing_name_are_reported_together(bot):
    with pytest.raises(SetInvalid) as refused:
        question_set_save(bot=bot, name="", text=(
            "вопрос | https://a.example/x | https://b.example/y\nвторой вопрос | https://\nтретий | https://ok.example/"))
    errors = refused.value.errors
    assert errors["name"] == ["Назовите набор, например «Доставка и оплата»."]
    assert errors["questions"][0] == "Строка 1: два адреса источника; оставьте один."
    assert errors["questions"][1].startswith("Строка 2: ")
    assert len(errors["questions"]) == 2
    assert not QuestionSet.objects.exists()


def test_a_refused_edit_keeps_the_saved_set(bot):
    saved = question_set_save(bot=bot, name="Основное", text="Как вернуть товар?")
    with pytest.raises(SetInvalid):
        question_set_save(bot=bot, name="Основное", text="", question_set=saved)
    assert [c.question for c in saved.cases.all()] == ["Как вернуть товар?"]


def test_the_form_shows_the_errors_and_keeps_what_was_typed(owner_client, bot):
    response = owner_client.post("/b/demo/testing/sets/new/", {
        "name": "Проверка", "questions": "\n".join(f"вопрос номер {n}" for n in range(51))})
    assert response.status_code == 400
    page = response.content.decode()
    assert "В наборе 51 вопрос, а можно не больше 50." in page
    assert "вопрос номер 50" in page
    assert not QuestionSet.objects.exists()


def test_the_form_saves_and_goes_to_the_set(owner_client, bot):
    response = owner_client.post("/b/demo/testing/sets/new/", {"name": "Проверка", "questions": "Как вернуть?"})
    saved = QuestionSet.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/b/demo/testing/sets/{saved.pk}/"
    assert "Набор ещё не запускался" in owner_client.get(response["Location"]).content.decode()


def test_another_bots_set_is_404_to_see_edit_run_or_delete(owner_client, bot, other_bot):
    theirs = question_set_save(bot=other_bot, name="Чужой", text="вопрос")
    for url in (f"/b/demo/testing/sets/{theirs.pk}/", f"/b/demo/testing/sets/{theirs.pk}/edit/"):
        assert owner_client.get(url).status_code == 404
        assert owner_client.post(url, {"action": "delete", "name": "x", "questions": "y"}).status_code == 404
    assert owner_client.get(f"/b/other/testing/sets/{theirs.pk}/").status_code == 404
    assert QuestionSet.objects.get(pk=theirs.pk).runs.count() == 0
    assert [c.question for c in theirs.cases.all()] == ["вопрос"]
