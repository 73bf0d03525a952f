"""A text's language told by its letters (knowledge/languages.py): what search and the replies read."""

from __future__ import annotations

import pytest

from knowledge.languages import across, text_language


@pytest.mark.parametrize(
    ("text", "language"),
    [("How much does delivery in Moscow cost?", "en"), ("Сколько стоит доставка?", "ru"), ("ok", None),
     ("5", None), ("🙂🙂🙂", None), ("", None), ("iPhone 15 есть?", None), ("Доставка в Kazan, how long?", None),
     ("How much is доставка to Питер?", None), ("What about \ud800 returns?", "en"), ("a" * 5000, "en")],
)
def test_the_language_is_the_one_alphabet_clearly_in_use(text, language):
    assert text_language(text) == language


def test_a_question_is_across_only_when_clearly_in_the_other_language():
    assert across("How do I return an item?", "ru")
    assert not across("Как вернуть товар?", "ru")
    assert not across("🙂", "ru")  # no language: read as the knowledge's own
    assert across("Как вернуть товар?", "en")
