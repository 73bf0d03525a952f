"""What a question is about, and the names the bot's knowledge never mentions (knowledge/scope.py)."""

from __future__ import annotations

import pytest

from knowledge import scope, selectors
from knowledge.drafts import EntryDraft
from knowledge.lexicon import lexicon_refresh
from knowledge.scope import Kind, OnSite, SubjectWord
from knowledge.services import entry_upsert


def kinds(text: str) -> dict[str, Kind]:
    return {word.token: word.kind for word in scope.subject_words(text)}


def test_nouns_adjectives_names_and_places_say_what_is_asked_not_verbs_or_question_words():
    assert kinds("Какие стиральные машины Bosch вы продаёте в Казани?") == {
        "стиральные": Kind.WORD, "машины": Kind.WORD, "Bosch": Kind.NAME, "Казани": Kind.PLACE,
    }
    assert kinds("Как записаться к стоматологу?") == {"стоматологу": Kind.WORD}
    assert kinds("Кому вы передаёте мои данные?") == {}  # «мои»: a pronoun, «данные»: a participle


def test_a_lowercase_word_is_a_name_only_when_it_means_nothing_else():
    assert kinds("скока стоит доставка в питер")["питер"] is Kind.PLACE  # Peter the name, Piter the city
    assert kinds("Продаёте розы?")["розы"] is Kind.WORD
    assert "дарите" not in kinds("Что дарите при покупке?")  # a verb, not the name «Дарита»
    assert kinds("Позовите Ольгу")["Ольгу"] is Kind.NAME


def test_typos_numbers_and_abbreviations_never_count_as_names():
    words = kinds("вазврат денег на карту по 44-ФЗ для ООО")
    assert words["вазврат"] is Kind.UNKNOWN
    assert words["ООО"] is Kind.WORD and "44-ФЗ" not in words
    assert kinds("How much does delivery cost?") == {}  # Latin words are names only in a Russian question


def test_only_words_and_names_ask_for_a_subject_and_places_are_no_evidence():
    weather = scope.subject_words("Какая погода в Москве?")
    assert scope.needs_subject(weather) and scope.evidence(weather) == ["погода"]
    assert not scope.needs_subject(scope.subject_words("Доставляете в Тверь?"))
    assert not scope.needs_subject(scope.subject_words("есть уцененка?"))


@pytest.mark.parametrize(("stem", "other", "family"), [
    ("доставк", "доставл", True), ("возвращ", "возврат", True), ("покупк", "покупа", True),
    ("гарантийн", "гарант", True), ("копи", "копирован", True), ("техподдержк", "поддержк", True),
    ("автомоб", "автомат", False), ("стоматолог", "стол", False), ("кот", "котел", False),
    ("экспресс-доставк", "доставк", False),
])
def test_a_word_family_shares_all_but_the_last_letter_of_the_shorter_stem(stem, other, family):
    assert scope.related(stem, other) is family


def test_a_name_is_known_by_itself_or_a_word_of_its_family_and_a_stop_word_is_never_held_against():
    assert OnSite({"bosch": 3}).known
    assert not OnSite({"daikin": None}).known
    assert OnSite({"samsung": None}, relatives=("samsungpay",)).known  # begins with all of it
    assert not OnSite({"samsung": None}, relatives=("samba",)).known
    assert OnSite({"delongh": None}, relatives=("delonghi",)).known
    assert OnSite({}).known  # «The»: no lexeme at all
    words = (SubjectWord("Daikin", Kind.NAME, "Daikin"), SubjectWord("кондиционеры", Kind.WORD))
    assert scope.names_unknown(words, {"Daikin": OnSite({"daikin": None})}) == ["Daikin"]


def test_bad_input_gives_words_or_none_and_never_raises():
    assert scope.subject_words("") == ()
    assert scope.subject_words("😀🙂🎉") == ()
    assert scope.subject_words("\ud800 доставка") == (SubjectWord("доставка", Kind.WORD, "доставка"),)
    assert len(scope.subject_words("доставка Bosch " * 2500)) == 2  # each word once
    assert kinds("Доставка в Kazan за 3 дня?")["Kazan"] is Kind.NAME


# --- the lexicon, in PostgreSQL ---------------------------------------------------------------------------


@pytest.fixture
def shop_lexicon(bot):
    for key, text in (("conditioners", "Кондиционеры Ballu и Electrolux: монтаж за 1 день."),
                      ("iso", "Сертификат ISO/IEC 27001 подтверждает защиту данных."),
                      ("delivery", "Доставляем по всей России.")):
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=key, text=text))
    lexicon_refresh(bot_id=bot.pk)
    return bot


@pytest.mark.django_db
def test_lexicon_words_reads_each_word_as_search_does_with_its_family(shop_lexicon, django_assert_num_queries):
    with django_assert_num_queries(1):
        found = selectors.lexicon_words(bot=shop_lexicon, words=["Ballu", "Daikin", "доставить", "ISO/IEC", "the"])
    assert found["Ballu"].known and not found["Daikin"].known
    assert found["доставить"].known  # «доставляем» on the site: one family
    assert found["ISO/IEC"].known  # PostgreSQL reads the run as one lexeme
    assert found["the"].known and found["the"].lexemes == {}  # a stop word: nothing to hold against


@pytest.mark.django_db
def test_lexicon_words_reads_nothing_for_no_words(shop_lexicon, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert selectors.lexicon_words(bot=shop_lexicon, words=[]) == {}


@pytest.mark.django_db
def test_a_name_another_bot_knows_is_still_unknown_to_this_one(shop_lexicon, other_bot):
    entry_upsert(bot=other_bot, source=None, draft=EntryDraft(key="d", title="d", text="Кондиционеры Daikin."))
    lexicon_refresh(bot_id=other_bot.pk)
    assert not selectors.lexicon_words(bot=shop_lexicon, words=["Daikin"])["Daikin"].known
