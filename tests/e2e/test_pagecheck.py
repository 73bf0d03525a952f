"""The walk's text checks (tests/e2e/pagecheck.py) on phrases of their own: each slip they must catch,
and the right forms they must leave alone, so a clean walk means a clean page, not a blind check."""

from __future__ import annotations

import pytest

from tests.e2e.pagecheck import ADMIN_PHRASES, CODES, MONTHS_CAPITALISED, RU_CODES, RU_DECIMAL, plural_slips, ru_form


@pytest.mark.parametrize(("number", "form"), [(1, 0), (2, 1), (4, 1), (5, 2), (11, 2), (12, 2), (14, 2), (21, 0),
                                              (22, 1), (25, 2), (101, 0), (111, 2), (0, 2)])
def test_russian_counted_forms(number: int, form: int):
    assert ru_form(number) == form


@pytest.mark.parametrize("line", ["4 разговоров", "1 ответов оценили плохо", "10 разговоры", "21 вопросов",
                                  "2 записей", "5 страницы", "11 контакт", "0 поправки", "3 оператор"])
def test_a_russian_slip_is_caught(line: str):
    assert plural_slips(line, "ru") != []


@pytest.mark.parametrize("line", ["4 разговора", "1 ответ оценили плохо", "10 разговоров", "21 вопрос",
                                  "2 записи", "5 страниц", "11 контактов", "0 поправок", "Записей в знаниях: 12."])
def test_right_russian_forms_pass(line: str):
    assert plural_slips(line, "ru") == []


@pytest.mark.parametrize(("line", "slips"), [("1 answers rated down", 1), ("2 conversation", 1), ("1 entries", 1),
                                             ("1 answer rated down", 0), ("21 conversations", 0), ("1 entry", 0)])
def test_english_counts(line: str, slips: int):
    assert len(plural_slips(line, "en")) == slips


def test_raw_values_and_admin_phrases_are_caught():
    assert RU_DECIMAL.findall("уверенность 0.23, порог 0,65") == ["0.23"]
    assert RU_DECIMAL.findall("02.12.2026 16:49, версия 1.2.3") == []
    assert CODES.findall("команда handed_off, None, True") == ["handed_off", "None", "True"]
    assert CODES.findall("None available") == []
    assert MONTHS_CAPITALISED.findall("Бюджет: Декабрь 2026, с 26 Окт") == ["Декабрь", "26 Окт"]
    assert MONTHS_CAPITALISED.findall("Бюджет: декабрь 2026") == []
    assert ADMIN_PHRASES.findall("Выберите поправка для просмотра") == ["Выберите поправка"]
    assert ADMIN_PHRASES.findall("Добавить еще один Часы работы операторов") != []
    assert ADMIN_PHRASES.findall("Выберите поправку для просмотра") == []


def test_a_code_in_russian_text_is_caught_but_not_a_protocol_s_event_name():
    assert RU_CODES.findall("команда correct") == ["correct"]
    assert RU_CODES.findall("Сюда приходят события handoff.waiting, lead.created.") == []
