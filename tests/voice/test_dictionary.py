"""The owner's dictionary as code applies it: whole words, case kept, links and citations untouched,
forbidden sentences dropped, idempotent, drafts made of complete sentences."""

from voice.dictionary import compiled

WORDS = compiled((("доставка", "курьерская доставка"), ("СБП", "Система быстрых платежей")), ("дешёв*", "халява"))


def test_a_preferred_term_is_replaced_whole_words_only_with_its_case_kept():
    text = WORDS.replace("Доставка по Москве. ДОСТАВКА быстрая, доставка тоже. Доставкаметр не трогаем. Оплата по СБП.")
    assert text == ("Курьерская доставка по Москве. КУРЬЕРСКАЯ ДОСТАВКА быстрая, курьерская доставка тоже. "
                    "Доставкаметр не трогаем. Оплата по Система быстрых платежей.")


def test_rewording_twice_changes_nothing_more():
    once = WORDS.word("Доставка по Москве — 300 ₽.").text
    assert once == "Курьерская доставка по Москве — 300 ₽."
    assert WORDS.word(once).text == once


def test_links_addresses_and_citation_numbers_are_never_touched():
    text = "Смотрите https://shop.example/доставка и пишите dostavka@shop.example [1], доставка — там."
    assert WORDS.replace(text) == (
        "Смотрите https://shop.example/доставка и пишите dostavka@shop.example [1], курьерская доставка — там."
    )


def test_a_sentence_with_a_forbidden_word_is_dropped_with_yo_and_endings():
    worded = WORDS.word("Доставка по Москве — 300 ₽. Это дешевле, чем у всех! Оплата картой. Халява, да?")
    assert worded.text == "Курьерская доставка по Москве — 300 ₽. Оплата картой."
    assert worded.dropped == 2 and worded.forbidden == ["дешёв*", "халява"]


def test_a_text_with_only_forbidden_sentences_is_emptied():
    worded = WORDS.word("Это дёшево. Халява!")
    assert worded.emptied and worded.text == ""


def test_a_canned_text_keeps_its_leading_space_and_is_never_emptied():
    suffix = " Пригласить оператора? Он во всём разберётся."
    assert WORDS.canned(suffix) == suffix
    assert WORDS.canned("Дёшево и сердито.") == "Дёшево и сердито."


def test_a_draft_shows_only_complete_sentences_so_a_forbidden_word_never_flashes():
    assert WORDS.draft("Доставка по Москве — 300 ₽. Это деше") == "Курьерская доставка по Москве — 300 ₽."
    assert WORDS.draft("Доставка по Мос") == ""
    later = WORDS.draft("Доставка по Москве — 300 ₽. Это дешевле всех. Оплата")
    assert later == "Курьерская доставка по Москве — 300 ₽."


def test_without_a_dictionary_text_passes_as_it_is():
    empty = compiled((), ())
    assert empty.empty and empty.draft("Доставка по Мос") == "Доставка по Мос"
    assert empty.word(" Как есть. ").text == " Как есть. "


def test_a_multi_word_term_matches_across_spaces():
    words = compiled((("пункт выдачи", "ПВЗ"),), ())
    assert words.replace("Ближайший пункт  выдачи рядом. Пункт выдачи закрыт.") == "Ближайший ПВЗ рядом. ПВЗ закрыт."


def test_docs_list_every_slider_fragment_in_both_languages():
    from tests.conftest import REPO
    from voice import sliders

    doc = (REPO / "docs" / "voice.md").read_text()
    for slider in sliders.SLIDERS:
        for language in ("ru", "en"):
            for level, text in slider.fragments[language].items():
                assert text in doc, (slider.key, language, level)
