import pytest

from chat.friction import is_complaint, is_rephrase, similarity


@pytest.mark.parametrize(
    "text",
    [
        "нет, не то",
        "Нет не то!",
        "не то",
        "Неверно",
        "это неправильно",
        "Вы не поняли",
        "вы меня не поняли!",
        "это не ответ",
        "Это не ответ на мой вопрос",
        "я спрашивал не об этом",
        "не помогло",
        "Вы ошибаетесь",
        "That's not what I asked",
    ],
)
def test_it_hears_that_the_answer_missed(text):
    assert is_complaint(text)


@pytest.mark.parametrize(
    "text",
    [
        "Сколько стоит доставка?",
        "не то чтобы срочно, но когда привезёте?",
        "неверно указан адрес в заказе, как исправить?",
        "костюм не того размера пришёл",
        "Нет ли у вас синего цвета?",
        "спасибо, всё понятно",
    ],
)
def test_it_does_not_take_ordinary_questions_for_complaints(text):
    assert not is_complaint(text)


def test_the_same_question_in_other_words_is_a_rephrase():
    assert is_rephrase("Сколько стоит доставка в Казань?", "А доставка в Казань сколько стоит?")
    assert is_rephrase("Сколько стоит доставка в Казань?", "Какая стоимость доставки в Казань")
    assert is_rephrase("Как вернуть товар?", "можно ли вернуть товар")


def test_a_new_question_is_not_a_rephrase():
    assert not is_rephrase("Сколько стоит доставка в Казань?", "Как оплатить заказ картой?")
    assert not is_rephrase(None, "Как оплатить заказ картой?")


def test_short_replies_never_count_as_the_same_question():
    assert similarity("да", "да") == 0.0
    assert not is_rephrase("Привет", "привет")
